package cdpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/pagerealm"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Flow control of the worker's frames to a page (pagerealm/flow.go), with the
// fake page agent.

// contextOf is the live context of a page source.
func (w *worker) contextOf(t *testing.T, ref sourceproto.SourceRef) *pagerealm.Context {
	t.Helper()
	c := w.srv.clients.ContextOf(ref)
	if c == nil {
		t.Fatalf("no context for %+v", ref)
	}
	return c
}

// commandsTo counts the runtime.commands a fake page got.
func (a *fakeAgent) commandsTo() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.countLocked(isAnyCommand)
}

func isAnyCommand(f sourceproto.Frame) bool {
	_, ok := f.Body.(*sourceproto.RuntimeCommand)
	return ok
}

func (a *fakeAgent) countLocked(match func(sourceproto.Frame) bool) int {
	n := 0
	for _, f := range a.frames {
		if match(f) {
			n++
		}
	}
	return n
}

// waitCount waits until the page got n frames that satisfy match.
func (a *fakeAgent) waitCount(what string, n int, match func(sourceproto.Frame) bool) {
	a.t.Helper()
	timer := time.AfterFunc(cdptest.Timeout, func() { a.mu.Lock(); a.cond.Broadcast(); a.mu.Unlock() })
	defer timer.Stop()
	start := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		got := a.countLocked(match)
		if got >= n {
			return
		}
		if time.Since(start) >= cdptest.Timeout {
			a.t.Fatalf("the page got %d of %d %s", got, n, what)
		}
		a.cond.Wait()
	}
}

// A page gets at most pagerealm.PageWindow commands at a time; the rest wait in the
// worker and go as answers come back, each answered once, every ack sent.
func TestClientRuntimePageWindow(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	ag := openAgent(t, reg, token, "page-1", "Shop")
	ag.setSilent(true)
	a := w.dial("A")
	ctx, wire := windowOn(t, a, ag, "Shop")
	const n = 3 * pagerealm.PageWindow
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = a.Send("Runtime.evaluate", map[string]any{"expression": "obj", "uniqueContextId": ctx.Context.UniqueID})
	}
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "1"}) // the host: every request above was dispatched
	ag.waitCount("commands", pagerealm.PageWindow, isAnyCommand)
	c := w.contextOf(t, ag.pg.src.Ref())
	inFlight, waiting, _ := w.srv.clients.FlowCounts(c)
	if got := ag.commandsTo(); got != pagerealm.PageWindow || inFlight != pagerealm.PageWindow || waiting != n-pagerealm.PageWindow {
		t.Fatalf("the page got %d commands, %d in flight, %d waiting; want %d, %d, %d", got, inFlight, waiting, pagerealm.PageWindow, pagerealm.PageWindow, n-pagerealm.PageWindow)
	}

	// The page answers: the first window's answers, then everything else
	// as it arrives.
	ag.setSilent(false)
	ag.mu.Lock()
	var late []*sourceproto.RuntimeResult
	for _, f := range ag.frames {
		if cmd, ok := f.Body.(*sourceproto.RuntimeCommand); ok {
			late = append(late, ag.answerLocked(cmd))
		}
	}
	ag.mu.Unlock()
	for _, r := range late {
		ag.pg.ingest(ag.pg.p.Frame(t, r))
	}
	for _, id := range ids {
		m := a.ExpectResponse(id)
		var ans evalAnswer
		if json.Unmarshal(m.Result, &ans); !object.Owns(ans.Result.ObjectID) {
			t.Fatalf("evaluate %d: %s", id, m.Raw)
		}
	}
	ag.waitCount("accepted acks", n, func(f sourceproto.Frame) bool {
		x, ok := f.Body.(*sourceproto.RuntimeAck)
		return ok && x.Accepted && x.Session == wire
	})
	if inFlight, waiting, control := w.srv.clients.FlowCounts(c); inFlight != 0 || waiting != 0 || control != 0 {
		t.Fatalf("after every answer: %d in flight, %d waiting, %d control frames", inFlight, waiting, control)
	}
}

// Requests past a page's backlog are answered at once with an error naming
// the limit; the others wait. Closing the window withdraws them all: the
// page gets a cancel for each command it was sent, and nothing is left.
func TestClientRuntimePageBacklogFull(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: 5 * time.Minute})
	ag := openAgent(t, reg, token, "page-1", "Shop")
	ag.setSilent(true)
	a := w.dial("A")
	a.SetTimeout(5 * time.Minute)
	ctx, wire := windowOn(t, a, ag, "Shop")
	const over = 3
	ids := make([]int64, pagerealm.PageWindow+pagerealm.PageBacklog+over)
	for i := range ids {
		ids[i] = a.Send("Runtime.evaluate", map[string]any{"expression": "obj", "uniqueContextId": ctx.Context.UniqueID})
	}
	for _, id := range ids[len(ids)-over:] {
		m := a.ExpectResponse(id)
		if m.Error == nil || !strings.Contains(m.Error.Message, "commands waiting already") || !strings.Contains(m.Error.Message, "16384") {
			t.Fatalf("a request past the backlog: %s", m.Raw)
		}
	}
	c := w.contextOf(t, ag.pg.src.Ref())
	if inFlight, waiting, _ := w.srv.clients.FlowCounts(c); inFlight != pagerealm.PageWindow || waiting != pagerealm.PageBacklog {
		t.Fatalf("%d in flight, %d waiting; want %d and %d", inFlight, waiting, pagerealm.PageWindow, pagerealm.PageBacklog)
	}
	sess := firstSession(w)
	a.Conn().CloseNow()
	ag.waitCount("cancels (one per command sent)", pagerealm.PageWindow, func(f sourceproto.Frame) bool {
		x, ok := f.Body.(*sourceproto.RuntimeCancel)
		return ok && x.Session == wire
	})
	for deadline := time.Now().Add(cdptest.Timeout); ; time.Sleep(5 * time.Millisecond) {
		_, calls := w.srv.clients.ObjectCounts(sess.page)
		inFlight, waiting, _ := w.srv.clients.FlowCounts(c)
		if calls == 0 && inFlight == 0 && waiting == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the window closed: %d calls, %d in flight, %d waiting", calls, inFlight, waiting)
		}
	}
	if got := ag.commandsTo(); got != pagerealm.PageWindow {
		t.Fatalf("the page got %d commands, want the window's %d", got, pagerealm.PageWindow)
	}
}

// A page that has not sent its initial replace takes no frame: commands
// wait for it, with their deadline running from the request's arrival, and
// one that runs out is answered without ever reaching the page. No
// console.enable goes before the page can take it; it goes after.
func TestClientRuntimeWaitsForWelcome(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: 300 * time.Millisecond})
	a := w.dial("A")
	a.MustCall("Runtime.enable", nil)
	out := make(outbox, 64)
	pg := openPageCaps(t, reg, token, "page-1", "http://127.0.0.1:3000/", "Shop", out, sourceproto.CapRuntime|sourceproto.CapConsole)
	ctx := clientContextEvent(t, a)
	start := time.Now()
	m := a.Call("Runtime.evaluate", map[string]any{"expression": "1", "uniqueContextId": ctx.Context.UniqueID})
	if m.Error == nil || !strings.Contains(m.Error.Message, "did not answer within 300ms") || !strings.Contains(m.Error.Message, "never reached the page") {
		t.Fatalf("evaluate in a page without its welcome: %s", m.Raw)
	}
	t.Logf("answered after %v", time.Since(start).Round(time.Millisecond))
	if len(out) != 0 {
		t.Fatalf("the page got %d frames before its initial replace", len(out))
	}
	pg.ingest(pg.p.Replace(t, sourceproto.ReplaceInitial))
	f, err := sourceproto.Decode(<-out)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Body.(*sourceproto.ConsoleEnable); !ok {
		t.Fatalf("the first frame after the welcome: %T, want console.enable", f.Body)
	}
	// The withdrawn evaluate never follows: the next frame is the answer
	// to a new one.
	id := a.Send("Runtime.evaluate", map[string]any{"expression": "2", "uniqueContextId": ctx.Context.UniqueID})
	f, err = sourceproto.Decode(<-out)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := f.Body.(*sourceproto.RuntimeCommand); !ok || c.Evaluate == nil || c.Evaluate.Expression != "2" {
		t.Fatalf("the page got %+v, want the second evaluate only", f.Body)
	}
	if m := a.ExpectResponse(id); m.Error == nil || !strings.Contains(m.Error.Message, "did not answer") {
		t.Fatalf("the second evaluate (the page never answers): %s", m.Raw)
	}
}
