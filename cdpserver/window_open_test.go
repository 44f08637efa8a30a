package cdpserver

import (
	"context"
	"net"
	"strings"
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

// gatedHost holds its first OpenSession until gate is closed, then opens a
// real session; entered is closed when that first dial begins.
type gatedHost struct {
	Host
	calls   atomic.Int32
	entered chan struct{}
	gate    chan struct{}
	stale   atomic.Pointer[websocket.Conn] // the session the held dial returned
}

func (h *gatedHost) OpenSession(ctx context.Context) (*websocket.Conn, error) {
	if h.calls.Add(1) > 1 {
		return h.Host.OpenSession(ctx)
	}
	close(h.entered)
	<-h.gate
	c, err := h.Host.OpenSession(ctx)
	h.stale.Store(c)
	return c, err
}

// swapBound: HostDown and HostUp with no window to rebind take
// milliseconds; a swap that waited for the held dial would wait for ever.
const swapBound = 5 * time.Second

// TestHostSwapDuringWindowDial (watch mode): a host swap while a window
// dials Node is not held up by the dial, and the window, dialled for the
// host that was replaced, opens on the new one: its first session is
// closed and it dials again. When the dial ran under swapMu, HostDown
// waited for it.
func TestHostSwapDuringWindowDial(t *testing.T) {
	gh := &gatedHost{entered: make(chan struct{}), gate: make(chan struct{})}
	w := startWorkerHost(t, hostScript, Options{Watch: true}, func(h Host) Host { gh.Host = h; return gh })
	opened := make(chan *cdptest.Client, 1)
	go func() { opened <- cdptest.Dial(t, "A", w.srv.PageWebSocketURL(), nil) }() // fails the test itself
	<-gh.entered
	swapped := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		w.srv.HostDown("the test restarts it", "info", "")
		w.srv.HostUp(context.Background(), gh, "")
		swapped <- time.Since(start)
	}()
	select {
	case d := <-swapped:
		t.Logf("HostDown+HostUp took %v while a window's Node dial was held", d)
	case <-time.After(swapBound):
		close(gh.gate)
		t.Fatalf("the host swap waited for a window's Node dial (over %v)", swapBound)
	}
	close(gh.gate)
	var a *cdptest.Client
	select {
	case a = <-opened:
	case <-time.After(cdptest.Timeout):
		t.Fatal("window A never opened")
	}
	if m := a.MustCall("Runtime.evaluate", map[string]any{"expression": "1+1", "returnByValue": true}); !strings.Contains(string(m.Result), `"value":2`) {
		t.Fatalf("evaluate in the window opened across the swap: %s", m.Raw)
	}
	if n := gh.calls.Load(); n != 2 {
		t.Errorf("%d Node sessions opened for the window, want 2 (the stale one, then the new host's)", n)
	}
	stale := gh.stale.Load()
	if stale == nil {
		t.Fatal("the held dial returned no session")
	}
	ctx, cancel := context.WithTimeout(context.Background(), cdptest.Timeout)
	defer cancel()
	if _, _, err := stale.Read(ctx); err == nil {
		t.Errorf("the session dialled for the replaced host is still open")
	}
}
