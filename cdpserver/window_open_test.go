package cdpserver

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// nodeDialStall is how long the stalled Node dial hangs; a window's upgrade
// takes milliseconds, so secondUpgradeBound sits far from both.
const (
	nodeDialStall      = 5 * time.Second
	secondUpgradeBound = nodeDialStall / 2
)

// stallingHost sends its first OpenSession to an endpoint that accepts the
// TCP connection and never answers the WebSocket handshake, for
// nodeDialStall; later ones go to the real host.
type stallingHost struct {
	Host
	stallURL string
	calls    atomic.Int32
	stalled  chan struct{} // closed once the stalled dial is under way
}

func (h *stallingHost) OpenSession(ctx context.Context) (*websocket.Conn, error) {
	if h.calls.Add(1) > 1 {
		return h.Host.OpenSession(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, nodeDialStall)
	defer cancel()
	close(h.stalled)
	conn, _, err := websocket.Dial(ctx, h.stallURL, nil)
	return conn, err
}

// TestSlowNodeDialDoesNotDelayOtherWindow: a window whose Node session
// takes nodeDialStall to open (Node busy, or a host that accepts and
// stalls) must not hold up another window's upgrade. When the dial ran
// under swapMu the second window waited the whole stall.
func TestSlowNodeDialDoesNotDelayOtherWindow(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for len(accepted) > 0 {
			(<-accepted).Close()
		}
	})
	sh := &stallingHost{stallURL: "ws://" + ln.Addr().String() + "/stall", stalled: make(chan struct{})}
	w := startWorkerHost(t, hostScript, Options{}, func(h Host) Host { sh.Host = h; return sh })

	first := make(chan error, 1)
	go func() {
		c, err := cdptest.TryDial("first", w.srv.PageWebSocketURL(), nil)
		if c != nil {
			c.Conn().CloseNow()
		}
		first <- err
	}()
	select {
	case <-sh.stalled:
	case <-time.After(cdptest.Timeout):
		t.Fatal("the first window never dialled Node")
	}
	start := time.Now()
	second := cdptest.Dial(t, "second", w.srv.PageWebSocketURL(), nil)
	took := time.Since(start)
	second.MustCall("Runtime.evaluate", map[string]any{"expression": "1+1"})
	t.Logf("second window upgraded in %v while the first one's Node dial stalls for %v", took, nodeDialStall)
	if took > secondUpgradeBound {
		t.Errorf("second window's upgrade took %v: it waited for the first window's Node dial (stall %v)", took, nodeDialStall)
	}
	// End the stall now rather than wait it out: the first dial then fails.
	ln.Close()
	for len(accepted) > 0 {
		(<-accepted).Close()
	}
	if err := <-first; err == nil {
		t.Errorf("first window opened although its Node dial failed")
	}
}
