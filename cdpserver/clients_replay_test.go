package cdpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/pagerealm"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/sourceprototest"
)

// stalledPages × ~1 MiB kept (maxReplayBytes) is more than loopback socket
// buffers take from a window that does not read (~4 MiB here: tcp_wmem's
// 4 MiB maximum and the initial receive window; the receive buffer grows
// only as the window reads).
const stalledPages = 16

// stalledReplay opens pages with more history than a socket can hold, then
// a window that sends Runtime.enable and reads nothing, so its replay stays
// in progress until the test reads. It returns the window, the pages and
// the number of kept messages a full replay carries.
func stalledReplay(t *testing.T) (*worker, *websocket.Conn, []*clientPage, *sourceproto.Registry, sourceproto.Token, int) {
	t.Helper()
	w, reg, token := clientWorker(t)
	const perPage = 500
	pad := strings.Repeat("p", 2000)
	var pgs []*clientPage
	for i := range stalledPages {
		pg := openPage(t, reg, token, fmt.Sprintf("page-%d", i), fmt.Sprintf("http://127.0.0.1:3000/%d", i), fmt.Sprintf("P%d", i))
		pg.ingest(pg.p.Replace(t, sourceproto.ReplaceInitial))
		for j := 0; j < perPage; j += 100 {
			var items []sourceproto.Item
			for k := j; k < j+100; k++ {
				items = append(items, sourceprototest.Log(fmt.Sprintf("early %d %d %s", i, k, pad)))
			}
			pg.ingest(pg.p.Append(t, items...))
		}
		pgs = append(pgs, pg)
	}
	kept := w.srv.clients.KeptConsole()

	win, _, err := websocket.Dial(context.Background(), w.srv.PageWebSocketURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	win.SetReadLimit(16 << 20)
	t.Cleanup(func() { win.CloseNow() })
	rawSend(t, win, `{"id":1,"method":"Runtime.enable"}`)
	waitReplay(t, w, func(r *pagerealm.Replay) bool { return r != nil })
	return w, win, pgs, reg, token, kept
}

func rawSend(t *testing.T, c *websocket.Conn, msg string) {
	t.Helper()
	if err := c.Write(context.Background(), websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// currentReplay is the one window's replay in progress (nil when none) and
// the live events it holds.
func currentReplay(w *worker) (*pagerealm.Replay, int) {
	w.srv.mu.Lock()
	var page *pagerealm.Window
	for s := range w.srv.sessions {
		page = s.page
	}
	w.srv.mu.Unlock() // before the hub's lock: Hub.mu → Server.mu
	if page == nil {
		return nil, 0
	}
	return w.srv.clients.ReplayOf(page)
}

func waitReplay(t *testing.T, w *worker, ok func(*pagerealm.Replay) bool) *pagerealm.Replay {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if r, _ := currentReplay(w); ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatal("the window's replay did not reach the expected state within 30 s")
		}
	}
}

// rawLabel names what a window received, for order checks: "answer N",
// "context P<i>", "destroyed", "early", a live console text, or "".
func rawLabel(t *testing.T, msg []byte) string {
	var m struct {
		ID     *int64 `json:"id"`
		Method string `json:"method"`
		Params struct {
			Args []struct {
				Value string `json:"value"`
			} `json:"args"`
			Context struct {
				ID   int    `json:"id"`
				Name string `json:"name"`
			} `json:"context"`
			ExecutionContextID int `json:"executionContextId"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		t.Fatalf("window got %s: %v", msg, err)
	}
	switch {
	case m.ID != nil:
		return fmt.Sprintf("answer %d", *m.ID)
	case m.Method == "Runtime.executionContextCreated" && m.Params.Context.ID < 0:
		return "context " + m.Params.Context.Name
	case m.Method == "Runtime.executionContextDestroyed" && m.Params.ExecutionContextID < 0:
		return "destroyed"
	case m.Method == "Runtime.consoleAPICalled" && m.Params.ExecutionContextID < 0 && len(m.Params.Args) > 0:
		if strings.HasPrefix(m.Params.Args[0].Value, "early ") {
			return "early"
		}
		return m.Params.Args[0].Value
	}
	return ""
}

// readLabels reads the window until last is received, and returns the
// labels of what it got (empty ones left out).
func readLabels(t *testing.T, c *websocket.Conn, last string) []string {
	t.Helper()
	var out []string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, msg, err := c.Read(ctx)
		cancel()
		if err != nil {
			t.Fatalf("waiting for %q after %d labels (last %v): %v", last, len(out), out[max(0, len(out)-5):], err)
		}
		if l := rawLabel(t, msg); l != "" {
			out = append(out, l)
			if l == last {
				return out
			}
		}
	}
}

// What happens while a window's replay runs is held behind it, in order:
// the window gets the answer, then the replay (contexts first, then the
// messages), then the live events, each once.
func TestClientReplayHoldsLiveEvents(t *testing.T) {
	w, win, pgs, reg, token, kept := stalledReplay(t)
	pgs[0].ingest(pgs[0].p.Append(t, sourceprototest.Log("live 1")))
	late := openPage(t, reg, token, "page-late", "http://127.0.0.1:3000/late", "Late")
	late.ingest(late.p.Replace(t, sourceproto.ReplaceInitial))
	late.ingest(late.p.Append(t, sourceprototest.Log("live 2")))
	pgs[1].src.Close(sourceproto.CloseGoingAway)
	pgs[2].ingest(pgs[2].p.Append(t, sourceprototest.Log("live 3")))
	held := -1 // no replay in progress
	if r, n := currentReplay(w); r != nil {
		held = n
	}
	if held != 5 {
		t.Fatalf("the replay holds %d live events, want 5 (-1: it ended before them)", held)
	}

	got := readLabels(t, win, "live 3")
	if got[0] != "answer 1" {
		t.Fatalf("the window got %q before its Runtime.enable answer", got[0])
	}
	for i := range len(pgs) {
		if got[1+i] != fmt.Sprintf("context P%d", i) {
			t.Fatalf("replay item %d is %q, want the contexts first: %v", i, got[1+i], got[:len(pgs)+2])
		}
	}
	rest := got[1+len(pgs):]
	early := 0
	for early < len(rest) && rest[early] == "early" {
		early++
	}
	if early != kept {
		t.Fatalf("%d replayed messages before the first live event, want all %d kept (then %v)", early, kept, rest[early:min(len(rest), early+5)])
	}
	if live := strings.Join(rest[early:], ","); live != "live 1,context Late,live 2,destroyed,live 3" {
		t.Fatalf("after the replay: %s", live)
	}
	if r, _ := currentReplay(w); r != nil {
		t.Fatal("the replay is still marked in progress after the window read it all")
	}
}

// A replay overtaken by Runtime.disable stops (what it held goes ahead of
// the disable answer); the next Runtime.enable replays everything, once,
// after its own answer.
func TestClientReplayOvertaken(t *testing.T) {
	w, win, _, _, _, kept := stalledReplay(t)
	first, _ := currentReplay(w)
	rawSend(t, win, `{"id":2,"method":"Runtime.disable"}`)
	rawSend(t, win, `{"id":3,"method":"Runtime.enable"}`)
	waitReplay(t, w, func(r *pagerealm.Replay) bool { return r != nil && r != first })

	got := readLabels(t, win, "answer 3")
	segment := func(from, to string) (n int) {
		in := false
		for _, l := range got {
			switch {
			case l == from:
				in = true
			case l == to:
				return n
			case in && l == "early":
				n++
			}
		}
		return n
	}
	if n := segment("answer 1", "answer 2"); n >= kept {
		t.Fatalf("the first replay sent all %d messages: it was not stopped by Runtime.disable", n)
	}
	if n := segment("answer 2", "answer 3"); n != 0 {
		t.Fatalf("%d replayed messages between the disable and the new enable answers", n)
	}
	// The second replay: contexts, then every kept message once.
	early, contexts := 0, 0
	for early < kept {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, msg, err := win.Read(ctx)
		cancel()
		if err != nil {
			t.Fatalf("second replay: %d of %d messages, then %v", early, kept, err)
		}
		switch l := rawLabel(t, msg); {
		case strings.HasPrefix(l, "context "):
			if early > 0 {
				t.Fatalf("a context after the replayed messages began")
			}
			contexts++
		case l == "early":
			early++
		case l != "":
			t.Fatalf("unexpected %q in the second replay", l)
		}
	}
	if contexts != stalledPages {
		t.Fatalf("second replay: %d contexts, want %d", contexts, stalledPages)
	}
	waitReplay(t, w, func(r *pagerealm.Replay) bool { return r == nil })
}
