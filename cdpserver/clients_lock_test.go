package cdpserver

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
	"github.com/inspector-worker/inspector-worker/sourceproto/sourceprototest"

	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// hubHangLimit is the watchdog of the hub's lock tests: a hang detector,
// far above what the conversation takes (well under a second), not a speed
// assertion.
const hubHangLimit = 20 * time.Second

// overflowingOutbox is the outbox of a page that takes nothing more. It
// does what the carrier's does on overflow (clientConn.Enqueue, see
// clientQueueLimit): it ends the connection, which closes the source on
// the caller's goroutine (the consumer hears SourceClosed before Enqueue
// returns), and reports the overflow.
type overflowingOutbox struct {
	mu    sync.Mutex
	src   *sourceproto.Source // Guarded by mu.
	calls int                 // Guarded by mu.
}

func (o *overflowingOutbox) setSource(src *sourceproto.Source) {
	o.mu.Lock()
	o.src = src
	o.mu.Unlock()
}

func (o *overflowingOutbox) Enqueue([]byte) error {
	o.mu.Lock()
	src := o.src
	o.calls++
	o.mu.Unlock()
	src.Close(sourceproto.ClosePolicy)
	return carrier.ErrQueueFull
}

func (o *overflowingOutbox) enqueued() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.calls
}

func scriptItem(url string) sourceproto.Item {
	return sourceproto.Item{Topic: sourceproto.TopicScript, Script: &sourceproto.ScriptInfo{URL: url}}
}

// scriptIDOf waits for the Debugger.scriptParsed of a script whose URL ends
// with suffix and returns its id.
func scriptIDOf(t *testing.T, c *cdptest.Client, suffix string) string {
	t.Helper()
	m := c.ExpectEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), suffix+`"`)
	})
	var p struct {
		ScriptID string `json:"scriptId"`
	}
	json.Unmarshal(m.Params, &p)
	return p.ScriptID
}

// serveScriptRead answers the page's next script.read with body and
// returns it.
func serveScriptRead(t *testing.T, pg *clientPage, body string) *sourceproto.ScriptRead {
	t.Helper()
	var read *sourceproto.ScriptRead
	select {
	case f := <-pg.out:
		fr, err := sourceproto.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		read, _ = fr.Body.(*sourceproto.ScriptRead)
	case <-time.After(cdptest.Timeout):
		t.Fatal("no script.read sent to the page")
	}
	if read == nil {
		t.Fatal("the page got something other than a script.read")
	}
	pg.ingest(pg.p.Frame(t, &sourceproto.ScriptMeta{ID: read.ID, URL: read.URL, Length: int64(len(body))}))
	pg.ingest(pg.p.Frame(t, &sourceproto.ScriptChunk{ID: read.ID, Offset: 0, Data: []byte(body)}))
	pg.ingest(pg.p.Frame(t, &sourceproto.ScriptEnd{ID: read.ID, Length: int64(len(body))}))
	return read
}

// A window reads a script of a page whose outbox is full: sending the
// script.read ends the page's connection on the window's own goroutine,
// and the close comes back to the hub as SourceClosed. The read is answered
// with an error saying why, the page leaves every window, and the worker
// keeps serving the other windows, pages and the host. When the hub sent
// under its own lock, the close re-entered that lock and froze everything
// (the watchdog fired).
func TestClientScriptReadPageOutboxFull(t *testing.T) {
	w, reg, token := clientWorker(t)
	a, b := w.dial("A"), w.dial("B")
	proctest.Watchdog(t, hubHangLimit, closeWindows(a, b))
	enableAll(a)
	enableAll(b)

	full := &overflowingOutbox{}
	stuck := openPageWith(t, reg, token, "page-stuck", "http://127.0.0.1:3000/", "Stuck", full)
	full.setSource(stuck.src)
	stuck.ingest(stuck.p.Replace(t, sourceproto.ReplaceInitial, scriptItem("http://127.0.0.1:3000/stuck.js")))
	ok := openPage(t, reg, token, "page-ok", "http://127.0.0.1:3001/", "Ok")
	ok.ingest(ok.p.Replace(t, sourceproto.ReplaceInitial, scriptItem("http://127.0.0.1:3001/ok.js")))

	stuckCtx := a.ExpectEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"name":"Stuck"`)
	})
	var ev ctxEvent
	json.Unmarshal(stuckCtx.Params, &ev)
	stuckID := scriptIDOf(t, a, "stuck.js")
	okID := scriptIDOf(t, b, "ok.js")

	m := a.Call("Debugger.getScriptSource", map[string]any{"scriptId": stuckID})
	if m.Error == nil || !strings.Contains(m.Error.Message, string(sourceproto.ClosePolicy)) {
		t.Fatalf("read from a page whose outbox is full: %s", m.Raw)
	}
	if n := answersTo(a, m.ID); n != 1 {
		t.Fatalf("read answered %d times", n)
	}
	if n := full.enqueued(); n != 1 {
		t.Fatalf("%d frames offered to the full outbox, want the one script.read", n)
	}
	destroyed := func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), ev.Context.UniqueID) }
	a.ExpectEvent("Runtime.executionContextDestroyed", destroyed)
	b.ExpectEvent("Runtime.executionContextDestroyed", destroyed)

	// The worker keeps serving: another window reads another page's script…
	id := b.Send("Debugger.getScriptSource", map[string]any{"scriptId": okID})
	serveScriptRead(t, ok, "console.log('ok');\n")
	var got struct {
		ScriptSource string `json:"scriptSource"`
	}
	json.Unmarshal(b.ExpectResponse(id).Result, &got)
	if got.ScriptSource != "console.log('ok');\n" {
		t.Fatalf("script source of the healthy page: %q", got.ScriptSource)
	}
	// …the first window evaluates in the host…
	if m := a.MustCall("Runtime.evaluate", map[string]any{"expression": "6*7"}); !strings.Contains(string(m.Result), `"value":42`) {
		t.Fatalf("host evaluate: %s", m.Raw)
	}
	// …and the healthy page's console reaches both windows.
	ok.ingest(ok.p.Append(t, sourceprototest.Log("still here")))
	for _, c := range []*cdptest.Client{a, b} {
		c.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(t, m) == "still here" })
	}
	// The closed page's script went with its context.
	if m := a.Call("Debugger.getScriptSource", map[string]any{"scriptId": stuckID}); m.Error == nil {
		t.Fatalf("read of a closed page's script: %s", m.Raw)
	}
}

// Script reads race with the page's close: a read registered under the hub
// lock and sent after it is answered exactly once, whether the close (its
// SourceClosed), Send's error or a missing script answers it.
// (TestClientScriptReadPageOutboxFull covers Send failing by closing.)
func TestClientScriptReadsRaceClose(t *testing.T) {
	w, reg, token := clientWorker(t)
	a := w.dial("A")
	proctest.Watchdog(t, hubHangLimit, closeWindows(a))
	enableAll(a)
	pg := openPage(t, reg, token, "page-1", "http://127.0.0.1:3000/", "Shop")
	pg.ingest(pg.p.Replace(t, sourceproto.ReplaceInitial, scriptItem("http://127.0.0.1:3000/app.js")))
	scriptID := scriptIDOf(t, a, "app.js")

	const reads = 40 // below the test outbox's capacity: Enqueue never blocks
	ids := make([]int64, reads)
	closed := make(chan struct{})
	for i := range ids {
		ids[i] = a.Send("Debugger.getScriptSource", map[string]any{"scriptId": scriptID})
		if i == reads/2 {
			go func() { pg.src.Close(sourceproto.CloseGoingAway); close(closed) }()
		}
	}
	<-closed
	for _, id := range ids {
		if m := a.ExpectResponse(id); m.Error == nil {
			t.Fatalf("read %d answered with a source nobody sent: %s", id, m.Raw)
		}
	}
	// Anything queued for the window before this answer has arrived with it.
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
	answers := map[int64]int{}
	for _, m := range a.All() {
		if m.ID != nil {
			answers[*m.ID]++
		}
	}
	for _, id := range ids {
		if answers[id] != 1 {
			t.Errorf("read %d answered %d times", id, answers[id])
		}
	}

	// Send fails without a close (a source with no outbox): the read it
	// registered is answered with the error, once.
	mute := openPageWith(t, reg, token, "page-mute", "http://127.0.0.1:3001/", "Mute", nil)
	mute.ingest(mute.p.Replace(t, sourceproto.ReplaceInitial, scriptItem("http://127.0.0.1:3001/mute.js")))
	id := a.Send("Debugger.getScriptSource", map[string]any{"scriptId": scriptIDOf(t, a, "mute.js")})
	if m := a.ExpectResponse(id); m.Error == nil || !strings.Contains(m.Error.Message, "cannot ask the page") {
		t.Fatalf("read from a page that cannot be sent to: %s", m.Raw)
	}
	if n := answersTo(a, &id); n != 1 {
		t.Fatalf("read answered %d times", n)
	}
}

// answersTo counts the window's answers to request id, after a host round
// trip: whatever was queued for the window before it has arrived by then.
func answersTo(c *cdptest.Client, id *int64) int {
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
	n := 0
	for _, m := range c.All() {
		if m.ID != nil && *m.ID == *id {
			n++
		}
	}
	return n
}
