package cdpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/sourceprototest"
)

// outbox collects the frames the worker sends to a producer.
type outbox chan []byte

func (o outbox) Enqueue(f []byte) error { o <- append([]byte(nil), f...); return nil }

// clientPage is an in-process client source attached to a worker's hub.
type clientPage struct {
	t   *testing.T
	p   *sourceprototest.Producer
	src *sourceproto.Source
	out outbox
}

func openPage(t *testing.T, reg *sourceproto.Registry, token sourceproto.Token, id, url, title string) *clientPage {
	t.Helper()
	out := make(outbox, 64)
	pg := openPageWith(t, reg, token, id, url, title, out)
	pg.out = out
	return pg
}

// openPageWith opens a page whose worker → page frames go to out (the
// page's out field stays nil unless out is an outbox).
//
// The page offers script reads only: it takes no console lifecycle or
// runtime frames, so its outbox sees script.read alone (see
// openRuntimePage for a page with a Runtime).
func openPageWith(t *testing.T, reg *sourceproto.Registry, token sourceproto.Token, id, url, title string, out sourceproto.Outbox) *clientPage {
	t.Helper()
	return openPageCaps(t, reg, token, id, url, title, out, sourceproto.CapScripts)
}

func openPageCaps(t *testing.T, reg *sourceproto.Registry, token sourceproto.Token, id, url, title string, out sourceproto.Outbox, caps sourceproto.Capability) *clientPage {
	t.Helper()
	p := sourceprototest.New(id, token.Reveal())
	hello, err := sourceproto.Marshal(sourceproto.Header{Source: id}, &sourceproto.Hello{
		Role: sourceproto.RoleClient, Token: sourceproto.Secret(token.Reveal()),
		Capabilities: caps,
		Topics:       sourceproto.TopicConsole | sourceproto.TopicPage | sourceproto.TopicScript,
		Agent:        sourceproto.Agent{Name: "test", Version: "1"},
		Page:         &sourceproto.PageInfo{URL: url, Title: title},
	})
	if err != nil {
		t.Fatal(err)
	}
	src, res := reg.Open(hello, sourceproto.OpenOptions{Role: sourceproto.RoleClient, Token: token, Outbox: out})
	if src == nil {
		t.Fatalf("open refused: %s", res.Replies)
	}
	p.Welcomed(t, res.Replies[0])
	return &clientPage{t: t, p: p, src: src}
}

func (c *clientPage) ingest(frame []byte) {
	c.t.Helper()
	res := c.src.Ingest(frame)
	if res.Err != nil {
		c.t.Fatalf("frame refused: %v", res.Err)
	}
}

func clientWorker(t *testing.T) (*worker, *sourceproto.Registry, sourceproto.Token) {
	w := startWorker(t, hostScript, Options{})
	reg := sourceproto.NewRegistry(w.srv.ClientConsumer())
	w.srv.SetSourceRegistry(reg)
	token, err := sourceproto.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	return w, reg, token
}

func enableAll(c *cdptest.Client) {
	c.MustCall("Page.enable", nil)
	c.MustCall("Runtime.enable", nil)
	c.MustCall("Debugger.enable", nil)
}

type ctxEvent struct {
	Context struct {
		ID       int    `json:"id"`
		UniqueID string `json:"uniqueId"`
		Name     string `json:"name"`
		AuxData  struct {
			IsDefault bool   `json:"isDefault"`
			FrameID   string `json:"frameId"`
		} `json:"auxData"`
	} `json:"context"`
}

func clientContextEvent(t *testing.T, c *cdptest.Client) ctxEvent {
	t.Helper()
	m := c.ExpectEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `"id":-`) })
	var ev ctxEvent
	json.Unmarshal(m.Params, &ev)
	return ev
}

// A page that connects while a window is open appears as its own frame and
// context; its console messages and scripts reach the window.
func TestClientPageAppearsLive(t *testing.T) {
	w, reg, token := clientWorker(t)
	a := w.dial("A")
	enableAll(a)
	pg := openPage(t, reg, token, "page-1", "http://127.0.0.1:3000/", "Shop")
	pg.ingest(pg.p.Replace(t, sourceproto.ReplaceInitial,
		sourceproto.Item{Topic: sourceproto.TopicPage, Page: &sourceproto.PageInfo{URL: "http://127.0.0.1:3000/", Title: "Shop"}},
		sourceproto.Item{Topic: sourceproto.TopicScript, Script: &sourceproto.ScriptInfo{URL: "http://127.0.0.1:3000/app.js"}}))
	pg.ingest(pg.p.Append(t, sourceprototest.Log("one"), sourceprototest.Log("two"), sourceprototest.Log("three")))

	att := a.ExpectEvent("Page.frameAttached", nil)
	if !strings.Contains(string(att.Params), `"parentFrameId":"`+w.srv.TargetID()+`"`) {
		t.Fatalf("frame not attached under the main frame: %s", att.Params)
	}
	ev := clientContextEvent(t, a)
	if ev.Context.ID >= 0 || !ev.Context.AuxData.IsDefault || ev.Context.AuxData.FrameID == "" || ev.Context.Name != "Shop" {
		t.Fatalf("client context %+v", ev.Context)
	}
	sp := a.ExpectEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "app.js") })
	var script struct {
		ScriptID           string `json:"scriptId"`
		ExecutionContextID int    `json:"executionContextId"`
	}
	json.Unmarshal(sp.Params, &script)
	if script.ExecutionContextID != ev.Context.ID || !strings.HasPrefix(script.ScriptID, "c") {
		t.Fatalf("client script %s", sp.Params)
	}
	for _, want := range []string{"one", "two", "three"} {
		m := a.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `"executionContextId":-`) })
		if got := consoleText(t, m); got != want {
			t.Fatalf("client console %q, want %q", got, want)
		}
	}

	// Sources: the window reads the script from the page.
	id := a.Send("Debugger.getScriptSource", map[string]any{"scriptId": script.ScriptID})
	body := "console.log('hi \u2028 there');\n"
	if read := serveScriptRead(t, pg, body); read.URL != "http://127.0.0.1:3000/app.js" {
		t.Fatalf("script.read %+v", read)
	}
	src := a.ExpectResponse(id)
	var got struct {
		ScriptSource string `json:"scriptSource"`
	}
	json.Unmarshal(src.Result, &got)
	if got.ScriptSource != body {
		t.Fatalf("getScriptSource = %s", src.Raw)
	}

	// Client scripts are read-only, and the window is told why.
	m := a.Call("Debugger.setBreakpointByUrl", map[string]any{"url": "http://127.0.0.1:3000/app.js", "lineNumber": 0})
	if m.Error == nil || !strings.Contains(m.Error.Message, "read-only") {
		t.Fatalf("breakpoint in a client script: %s", m.Raw)
	}
	a.ExpectEvent("Log.entryAdded", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "read-only") })

	// The host context is unaffected.
	m = a.MustCall("Runtime.evaluate", map[string]any{"expression": "6*7"})
	if !strings.Contains(string(m.Result), `"value":42`) {
		t.Fatalf("host evaluate: %s", m.Raw)
	}

	// Dropped observations are announced with their count.
	pg.p.Drop(5)
	pg.ingest(pg.p.Append(t, sourceprototest.Log("after drop")))
	a.ExpectEvent("Log.entryAdded", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "5 observations") })
}

// A window that opens later gets the page's context and console replayed
// after its Runtime.enable answer (this test expected them before the answer
// until the replay moved behind it, pagerealm/replay.go: with 20 pages of
// history the answer waited seconds), and the page in the resource tree.
func TestClientReplayAfterEnableAnswer(t *testing.T) {
	w, reg, token := clientWorker(t)
	pg := openPage(t, reg, token, "page-1", "http://127.0.0.1:3000/", "Shop")
	pg.ingest(pg.p.Replace(t, sourceproto.ReplaceInitial))
	pg.ingest(pg.p.Append(t, sourceprototest.Log("early 1"), sourceprototest.Log("early 2")))

	b := w.dial("B")
	tree := b.MustCall("Page.getResourceTree", nil)
	var rt struct {
		FrameTree struct {
			ChildFrames []struct {
				Frame struct{ ID, ParentID, URL string } `json:"frame"`
			} `json:"childFrames"`
		} `json:"frameTree"`
	}
	json.Unmarshal(tree.Result, &rt)
	if len(rt.FrameTree.ChildFrames) != 1 || rt.FrameTree.ChildFrames[0].Frame.ParentID != w.srv.TargetID() ||
		rt.FrameTree.ChildFrames[0].Frame.URL != "http://127.0.0.1:3000/" {
		t.Fatalf("resource tree %s", tree.Result)
	}
	id := b.Send("Runtime.enable", nil)
	b.ExpectResponse(id)
	b.ExpectAnyEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(t, m) == "early 2" })
	var order []string
	for _, m := range b.All() {
		switch {
		case m.ID != nil && *m.ID == id:
			order = append(order, "answer")
		case m.Method == "Runtime.executionContextCreated" && strings.Contains(string(m.Params), `"id":-`):
			order = append(order, "context")
		case m.Method == "Runtime.consoleAPICalled" && strings.Contains(string(m.Params), `"executionContextId":-`):
			order = append(order, consoleText(t, m))
		}
	}
	if strings.Join(order, ",") != "answer,context,early 1,early 2" {
		t.Fatalf("order of answer and replay: %v", order)
	}
	// Live messages after the replay arrive once.
	pg.ingest(pg.p.Append(t, sourceprototest.Log("live")))
	b.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(t, m) == "live" })
	n := 0
	for _, m := range b.All() {
		if m.Method == "Runtime.consoleAPICalled" && strings.Contains(string(m.Params), `"early 1"`) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("early 1 delivered %d times", n)
	}
}

// A reload (new generation of the same source) keeps the frame and swaps the
// context; a page that goes for good is detached.
func TestClientReloadAndDetach(t *testing.T) {
	w, reg, token := clientWorker(t)
	a := w.dial("A")
	enableAll(a)
	pg := openPage(t, reg, token, "page-1", "http://127.0.0.1:3000/", "Shop")
	first := clientContextEvent(t, a)
	pg.src.Close(sourceproto.CloseGoingAway)
	a.ExpectEvent("Runtime.executionContextDestroyed", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"executionContextId":`+itoa(first.Context.ID))
	})
	pg2 := openPage(t, reg, token, "page-1", "http://127.0.0.1:3000/", "Shop")
	second := clientContextEvent(t, a)
	if second.Context.ID == first.Context.ID || second.Context.UniqueID == first.Context.UniqueID ||
		second.Context.AuxData.FrameID != first.Context.AuxData.FrameID {
		t.Fatalf("reload: first %+v, second %+v", first.Context, second.Context)
	}
	pg2.src.Close(sourceproto.CloseGoingAway)
	det := a.ExpectEvent("Page.frameDetached", nil)
	if !strings.Contains(string(det.Params), first.Context.AuxData.FrameID) {
		t.Fatalf("detached the wrong frame: %s", det.Params)
	}
	for _, m := range a.All() {
		if m.Method == "Page.frameDetached" && m.ID == nil && det.Raw != nil && string(m.Raw) != string(det.Raw) {
			t.Fatalf("more than one detach: %s", m.Raw)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// A reload shows Chrome's "Navigated to <url>" line in the Console, stamped
// no later than the new load's first message (the Console orders by
// timestamp; nothing is cleared: the host's messages share the Console), and
// announces the load with Page.documentOpened, which keeps the page's
// "(index)" Document in Sources. The first load has no divider.
func TestClientReloadNavigatedDivider(t *testing.T) {
	w, reg, token := clientWorker(t)
	a := w.dial("A")
	enableAll(a)
	const url = "http://127.0.0.1:3000/"
	pg := openPage(t, reg, token, "page-1", url, "Shop")
	first := clientContextEvent(t, a)
	pg.ingest(pg.p.Replace(t, sourceproto.ReplaceInitial, sourceprototest.Log("load 1")))
	a.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(t, m) == "load 1" })
	pg.src.Close(sourceproto.CloseGoingAway)
	pg2 := openPage(t, reg, token, "page-1", url, "Shop")
	second := clientContextEvent(t, a)
	// The first batch has no console message: the divider waits for one.
	pg2.ingest(pg2.p.Replace(t, sourceproto.ReplaceInitial,
		sourceproto.Item{Topic: sourceproto.TopicPage, Page: &sourceproto.PageInfo{URL: url, Title: "Shop"}}))
	early := sourceprototest.Log("load 2")
	early.Console.Timestamp = float64(time.Now().Add(-time.Second).UnixMilli()) // the page's clock, behind the worker's
	later := sourceprototest.Log("later")
	later.Console.Timestamp = early.Console.Timestamp + 10
	pg2.ingest(pg2.p.Append(t, later, early))
	a.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(t, m) == "load 2" })

	at := map[string][]int{}
	var divider struct {
		Entry struct{ Timestamp float64 } `json:"entry"`
	}
	for i, m := range a.All() {
		switch {
		case m.Method == "Log.entryAdded" && strings.Contains(string(m.Params), `"text":"Navigated to `+url+`"`):
			at["divider"] = append(at["divider"], i)
			json.Unmarshal(m.Params, &divider)
		case m.Method == "Page.documentOpened" && strings.Contains(string(m.Params), first.Context.AuxData.FrameID):
			at["opened"] = append(at["opened"], i)
		case m.Method == "Runtime.executionContextCreated" && strings.Contains(string(m.Params), `"id":`+itoa(second.Context.ID)+`,`):
			at["context"] = append(at["context"], i)
		case m.Method == "Runtime.consoleAPICalled" && consoleText(t, m) == "load 2":
			at["load 2"] = append(at["load 2"], i)
		}
	}
	if len(at["divider"]) != 1 || len(at["opened"]) != 2 || len(at["context"]) != 1 {
		t.Fatalf("want one divider, two Page.documentOpened (first load, reload), one new context; got positions %v", at)
	}
	if !(at["opened"][1] < at["context"][0] && at["context"][0] < at["divider"][0] && at["divider"][0] < at["load 2"][0]) {
		t.Fatalf("order: want reload's documentOpened, new context, divider, the load's message; got positions %v", at)
	}
	if divider.Entry.Timestamp != early.Console.Timestamp {
		t.Errorf("divider stamped %v, want the load's first message's %v (the Console sorts by time)", divider.Entry.Timestamp, early.Console.Timestamp)
	}
}
