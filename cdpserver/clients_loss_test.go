package cdpserver

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/sourceprototest"
)

// lossAnnounceBound is the acceptance bound between the end of a flood and
// the window holding the full count of what it lost: lossReportDelay, then
// the window reading what the kernel already holds for it (the notice goes
// ahead of the worker's own queue; the kernel's share is bounded by
// devToolsSendBuffer). Measured 74–250 ms under -race; 3 s before the send
// buffer was fixed, when the notice waited behind megabytes of kernel buffer.
// 1.23 s was seen once at load 14 with two other -race suites and Chromium
// beside it (the test's reader starved, not the notice): the bound is 2 s,
// still clear of the 3 s regression it guards against.
const lossAnnounceBound = 2 * time.Second

var droppedRx = regexp.MustCompile(`\] (\d+) client console messages were dropped for this window`)

// A page floods a window that is not reading, then goes quiet. The window
// must learn how many messages it lost even though no later message comes:
// delivered + announced = sent, and the last announcement arrives within
// lossAnnounceBound of the flood's end.
func TestClientFloodLossAnnouncedWhenQuiet(t *testing.T) {
	// A small queue keeps the backlog the window drains after the flood
	// small; the policy is the same at the default size.
	w := startWorker(t, hostScript, Options{MaxQueuedMessages: 2000, Logf: func(string, ...any) {}})
	reg := sourceproto.NewRegistry(w.srv.ClientConsumer())
	w.srv.SetSourceRegistry(reg)
	token, err := sourceproto.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	dt, _, err := websocket.Dial(t.Context(), w.srv.PageWebSocketURL(), &websocket.DialOptions{HTTPClient: smallWindowClient()})
	if err != nil {
		t.Fatal(err)
	}
	defer dt.CloseNow()
	dt.SetReadLimit(1 << 20)
	if err := dt.Write(t.Context(), websocket.MessageText, []byte(`{"id":1,"method":"Runtime.enable"}`)); err != nil {
		t.Fatal(err)
	}
	p := sourceprototest.New("flood-page", token.Reveal())
	src, res := reg.Open(p.Hello(t, sourceproto.CapConsole, sourceproto.TopicConsole),
		sourceproto.OpenOptions{Role: sourceproto.RoleClient, Token: token})
	if src == nil {
		t.Fatalf("open: %s", res.Replies)
	}
	p.Welcomed(t, res.Replies[0])
	src.Ingest(p.Replace(t, sourceproto.ReplaceInitial))
	// Runtime.enable is answered after the page's context exists, so the
	// flood below reaches this window.
	waitForAnswer(t, dt, 1)

	// The window reads as fast as it can, which is slower than the page
	// floods: it falls behind, and the worker drops for it.
	type tally struct {
		delivered, announced int
		lastAnnounce         time.Time
	}
	got := make(chan tally)
	go func() {
		var r tally
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			_, msg, err := dt.Read(ctx)
			cancel()
			if err != nil {
				got <- r // quiet for 3 s: everything that will come has come
				return
			}
			switch {
			case bytes.HasPrefix(msg, []byte(`{"method":"Runtime.consoleAPICalled"`)):
				r.delivered++
			case bytes.HasPrefix(msg, []byte(`{"method":"Log.entryAdded"`)):
				if m := droppedRx.FindSubmatch(msg); m != nil {
					n, _ := strconv.Atoi(string(m[1]))
					r.announced += n
					r.lastAnnounce = time.Now()
				}
			}
		}
	}()
	const total, batch = 300_000, 100
	items := make([]sourceproto.Item, batch)
	for i := range items {
		items[i] = sourceprototest.Log("flood message with a few words in it")
	}
	for n := 0; n < total; n += batch {
		if r := src.Ingest(p.Append(t, items...)); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	floodEnd := time.Now()
	r := <-got
	delivered, announced, lastAnnounce := r.delivered, r.announced, r.lastAnnounce.Sub(floodEnd)
	t.Logf("sent %d: delivered %d, announced lost %d; last announcement %v after the flood",
		total, delivered, announced, lastAnnounce.Round(time.Millisecond))
	if delivered+announced != total {
		t.Fatalf("delivered %d + announced lost %d = %d, want %d: %d losses were never announced",
			delivered, announced, delivered+announced, total, total-delivered-announced)
	}
	if announced == 0 {
		t.Fatalf("nothing was lost: the window was not slow, so the test proved nothing")
	}
	if lastAnnounce > lossAnnounceBound {
		t.Fatalf("the final loss count arrived %v after the flood, want within %v", lastAnnounce, lossAnnounceBound)
	}
}

// smallWindowClient dials with a 16 KiB receive buffer, set before connect so
// the TCP window stays small: what the worker already wrote then waits in the
// worker's queue, under its policy, not in megabytes of kernel buffers that
// a slow reader needs seconds to drain.
func smallWindowClient() *http.Client {
	d := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// waitForAnswer reads until the answer to request id arrives.
func waitForAnswer(t *testing.T, c *websocket.Conn, id int) {
	t.Helper()
	prefix := []byte(`{"id":` + strconv.Itoa(id) + `,`)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, msg, err := c.Read(ctx)
		cancel()
		if err != nil {
			t.Fatalf("no answer to request %d: %v", id, err)
		}
		if bytes.HasPrefix(msg, prefix) {
			return
		}
	}
}
