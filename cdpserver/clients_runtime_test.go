package cdpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/pagerealm"
	"github.com/inspector-worker/inspector-worker/sourceproto"

	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

func runtimeWorker(t *testing.T, opts Options) (*worker, *sourceproto.Registry, sourceproto.Token) {
	t.Helper()
	w := startWorker(t, hostScript, opts)
	reg := sourceproto.NewRegistry(w.srv.ClientConsumer())
	w.srv.SetSourceRegistry(reg)
	token, err := sourceproto.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	return w, reg, token
}

// windowOn enables a window's Runtime and returns its page context and its
// session id on the page's wire (from the console.enable the page got).
func windowOn(t *testing.T, c *cdptest.Client, ag *fakeAgent, title string) (ctxEvent, string) {
	t.Helper()
	from := ag.count()
	c.MustCall("Runtime.enable", nil)
	m := c.ExpectEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"name":"`+title+`"`)
	})
	var ev ctxEvent
	json.Unmarshal(m.Params, &ev)
	f, _ := ag.waitFrame("console.enable", from, func(f sourceproto.Frame) bool { _, ok := f.Body.(*sourceproto.ConsoleEnable); return ok })
	return ev, f.Body.(*sourceproto.ConsoleEnable).Session
}

type remoteObject struct {
	Type        string          `json:"type"`
	Subtype     string          `json:"subtype"`
	ClassName   string          `json:"className"`
	Value       json.RawMessage `json:"value"`
	ObjectID    string          `json:"objectId"`
	Description string          `json:"description"`
}

type evalAnswer struct {
	Result           remoteObject `json:"result"`
	ExceptionDetails *struct {
		Text               string       `json:"text"`
		ExecutionContextID int          `json:"executionContextId"`
		Exception          remoteObject `json:"exception"`
		StackTrace         struct {
			CallFrames []struct {
				URL string `json:"url"`
			} `json:"callFrames"`
		} `json:"stackTrace"`
	} `json:"exceptionDetails"`
}

func evalIn(t *testing.T, c *cdptest.Client, ctx ctxEvent, expr, group string) evalAnswer {
	t.Helper()
	m := c.MustCall("Runtime.evaluate", map[string]any{"expression": expr, "uniqueContextId": ctx.Context.UniqueID, "objectGroup": group})
	var ans evalAnswer
	if err := json.Unmarshal(m.Result, &ans); err != nil {
		t.Fatalf("evaluate answer %s: %v", m.Raw, err)
	}
	return ans
}

type propsAnswer struct {
	Result []struct {
		Name  string       `json:"name"`
		Value remoteObject `json:"value"`
	} `json:"result"`
}

func propsOf(t *testing.T, c *cdptest.Client, objectID string) propsAnswer {
	t.Helper()
	m := c.MustCall("Runtime.getProperties", map[string]any{"objectId": objectID, "ownProperties": true})
	var ans propsAnswer
	json.Unmarshal(m.Result, &ans)
	if len(ans.Result) != 2 || ans.Result[1].Name != "nested" || !object.Owns(ans.Result[1].Value.ObjectID) {
		t.Fatalf("getProperties(%s) = %s", objectID, m.Raw)
	}
	return ans
}

// A window evaluates in a page, expands the result (nested), calls
// functions on it and awaits a promise; every handle the page returned is
// an objectId of the window's table, the page gets its acks, and releasing
// tells the page.
func TestClientRuntimeEvaluateAndExpand(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{})
	ag := openAgent(t, reg, token, "page-1", "Shop")
	a := w.dial("A")
	ctx, wire := windowOn(t, a, ag, "Shop")

	ans := evalIn(t, a, ctx, "obj", "console")
	if ans.Result.Type != "object" || !object.Owns(ans.Result.ObjectID) {
		t.Fatalf("evaluate result %+v", ans.Result)
	}
	ag.waitFrame("an accepted ack", 0, func(f sourceproto.Frame) bool {
		ack, ok := f.Body.(*sourceproto.RuntimeAck)
		return ok && ack.Accepted && ack.Method == sourceproto.MethodEvaluate
	})
	props := propsOf(t, a, ans.Result.ObjectID)
	if string(props.Result[0].Value.Value) != "1" {
		t.Fatalf("property a = %s", props.Result[0].Value.Value)
	}
	deeper := propsOf(t, a, props.Result[1].Value.ObjectID) // nested
	if deeper.Result[1].Value.ObjectID == props.Result[1].Value.ObjectID {
		t.Fatal("nested expansion reused an objectId")
	}

	// callFunctionOn with a receiver and an object argument: the page gets
	// its own handles for both.
	m := a.MustCall("Runtime.callFunctionOn", map[string]any{"objectId": ans.Result.ObjectID, "functionDeclaration": "function(x){return x}",
		"arguments": []map[string]any{{"objectId": props.Result[1].Value.ObjectID}, {"value": 5}}})
	var call evalAnswer
	json.Unmarshal(m.Result, &call)
	if got := string(call.Result.Value); !strings.HasPrefix(got, `"this=h:`) || !strings.Contains(got, " arg=h:") || !strings.Contains(got, " arg=5") {
		t.Fatalf("callFunctionOn saw %s", m.Raw)
	}
	// callFunctionOn by execution context (no receiver).
	m = a.MustCall("Runtime.callFunctionOn", map[string]any{"executionContextId": ctx.Context.ID, "functionDeclaration": "function(){return 1}"})
	json.Unmarshal(m.Result, &call)
	if string(call.Result.Value) != `"this="` {
		t.Fatalf("callFunctionOn by context: %s", m.Raw)
	}
	// awaitPromise.
	p := evalIn(t, a, ctx, "promise", "console")
	m = a.MustCall("Runtime.awaitPromise", map[string]any{"promiseObjectId": p.Result.ObjectID})
	json.Unmarshal(m.Result, &call)
	if string(call.Result.Value) != "7" {
		t.Fatalf("awaitPromise: %s", m.Raw)
	}
	// A thrown exception is a success with exceptionDetails in the page's context.
	ex := evalIn(t, a, ctx, "throw", "console")
	if ex.ExceptionDetails == nil || ex.ExceptionDetails.ExecutionContextID != ctx.Context.ID ||
		!object.Owns(ex.ExceptionDetails.Exception.ObjectID) || len(ex.ExceptionDetails.StackTrace.CallFrames) != 1 {
		t.Fatalf("exception %+v", ex)
	}
	// globalLexicalScopeNames goes to the page.
	m = a.MustCall("Runtime.globalLexicalScopeNames", map[string]any{"executionContextId": ctx.Context.ID})
	if string(m.Result) != `{"names":["cart","user"]}` {
		t.Fatalf("globalLexicalScopeNames: %s", m.Raw)
	}
	// compileScript is a syntax check in the page: new Function, never run,
	// its answer unacknowledged so the page keeps nothing.
	from := ag.count()
	if m = a.MustCall("Runtime.compileScript", map[string]any{"expression": "1", "sourceURL": "", "persistScript": false,
		"executionContextId": ctx.Context.ID}); string(m.Result) != `{}` {
		t.Fatalf("compileScript: %s", m.Raw)
	}
	ag.waitFrame("the syntax check", from, func(f sourceproto.Frame) bool {
		c, ok := f.Body.(*sourceproto.RuntimeCommand)
		return ok && c.Evaluate != nil && c.Evaluate.Expression == pagerealm.SyntaxCheck+`("1")`
	})
	ag.waitFrame("its refused ack", from, func(f sourceproto.Frame) bool {
		ack, ok := f.Body.(*sourceproto.RuntimeAck)
		return ok && !ack.Accepted && ack.Method == sourceproto.MethodEvaluate
	})
	if m = a.Call("Runtime.runScript", map[string]any{"scriptId": "1", "executionContextId": ctx.Context.ID}); m.Error == nil || !strings.Contains(m.Error.Message, "not kept") {
		t.Fatalf("runScript: %s", m.Raw)
	}

	// releaseObject: the page is told, with its own handle.
	before := ag.liveHandles(wire)
	from = ag.count()
	a.MustCall("Runtime.releaseObject", map[string]any{"objectId": ans.Result.ObjectID})
	ag.waitFrame("releaseObject", from, isCommand(sourceproto.MethodReleaseObject, nil))
	if got := ag.liveHandles(wire); got != before-1 {
		t.Fatalf("page holds %d handles after a release, want %d", got, before-1)
	}
	if m = a.Call("Runtime.getProperties", map[string]any{"objectId": ans.Result.ObjectID}); m.Error == nil {
		t.Fatalf("getProperties of a released object: %s", m.Raw)
	}
	// The console group holds everything else; releasing it empties the page and the table.
	a.MustCall("Runtime.releaseObjectGroup", map[string]any{"objectGroup": "console"})
	ag.waitLive(wire, 0)
	// The page empties itself before its answer reaches the worker, which
	// ends the call then: wait for both (seen once in CI: 1 call in flight).
	deadline := time.Now().Add(cdptest.Timeout)
	for {
		objs, calls := w.srv.clients.ObjectCounts(w.session(t, wire).page)
		if objs == 0 && calls == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after releasing the group: %d objects, %d calls in flight", objs, calls)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// session finds the window with a wire session id.
func (w *worker) session(t *testing.T, wire string) *Session {
	t.Helper()
	w.srv.mu.Lock()
	defer w.srv.mu.Unlock()
	for s := range w.srv.sessions {
		if pagerealm.WireSession(s.page) == wire {
			return s
		}
	}
	t.Fatalf("no window %s", wire)
	return nil
}

// Objects never cross realms or windows: a page objectId in a host call, a
// host objectId in a page call and another window's objectId are refused,
// and neither Node nor the page sees them.
// TestClientRuntimeEvaluateKeepsEmptyValues: a page's null and "" reach
// the window with their value, as V8 sends them. cdproto tags
// RemoteObject.value omitempty, and jsonv2 leaves out values that encode
// as null or "": the frontend showed such results as undefined.
func TestClientRuntimeEvaluateKeepsEmptyValues(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{})
	ag := openAgent(t, reg, token, "page-1", "Shop")
	a := w.dial("A")
	ctx, _ := windowOn(t, a, ag, "Shop")
	for expr, want := range map[string]string{"null": `"value":null`, "empty": `"value":""`} {
		m := a.MustCall("Runtime.evaluate", map[string]any{"expression": expr, "uniqueContextId": ctx.Context.UniqueID})
		if !strings.Contains(string(m.Result), want) {
			t.Errorf("evaluate %s answered %s, want %s in the result", expr, m.Result, want)
		}
	}
}

func TestClientRuntimeRealmsDoNotMix(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{})
	ag := openAgent(t, reg, token, "page-1", "Shop")
	a, b := w.dial("A"), w.dial("B")
	ctx, _ := windowOn(t, a, ag, "Shop")
	windowOn(t, b, ag, "Shop")
	page := evalIn(t, a, ctx, "obj", "console").Result.ObjectID

	hm := a.MustCall("Runtime.evaluate", map[string]any{"expression": "({x: 1})"})
	var host evalAnswer
	json.Unmarshal(hm.Result, &host)
	if host.Result.ObjectID == "" || object.Owns(host.Result.ObjectID) {
		t.Fatalf("host object %s", hm.Raw)
	}

	from := ag.count()
	for _, tc := range []struct {
		name, method string
		params       map[string]any
		want         string
	}{
		{"page object as a host argument", "Runtime.callFunctionOn",
			map[string]any{"objectId": host.Result.ObjectID, "functionDeclaration": "function(x){}", "arguments": []map[string]any{{"objectId": page}}}, "client page"},
		{"host object as a page argument", "Runtime.callFunctionOn",
			map[string]any{"objectId": page, "functionDeclaration": "function(x){}", "arguments": []map[string]any{{"objectId": host.Result.ObjectID}}}, "Node host"},
		{"host object to a page context", "Runtime.callFunctionOn",
			map[string]any{"executionContextId": ctx.Context.ID, "functionDeclaration": "function(x){}", "arguments": []map[string]any{{"objectId": host.Result.ObjectID}}}, "Node host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := a.Call(tc.method, tc.params)
			if m.Error == nil || !strings.Contains(m.Error.Message, tc.want) {
				t.Fatalf("%s: %s", tc.method, m.Raw)
			}
		})
	}
	// Another window's objectId is unknown in this one.
	if m := b.Call("Runtime.getProperties", map[string]any{"objectId": page}); m.Error == nil || !strings.Contains(m.Error.Message, "could not find object") {
		t.Fatalf("B used A's objectId: %s", m.Raw)
	}
	// The host stays usable, and its own objects keep working.
	if m := a.MustCall("Runtime.getProperties", map[string]any{"objectId": host.Result.ObjectID, "ownProperties": true}); !strings.Contains(string(m.Result), `"name":"x"`) {
		t.Fatalf("host getProperties: %s", m.Raw)
	}
	// Text that only looks like a page objectId is not one, nor is an
	// expression that starts like one.
	if m := a.MustCall("Runtime.evaluate", map[string]any{"expression": `iw: 6 * 7`}); !strings.Contains(string(m.Result), `"value":42`) {
		t.Fatalf("host evaluate of a labelled expression: %s", m.Raw)
	}
	if m := a.MustCall("Runtime.evaluate", map[string]any{"expression": `JSON.parse('{"objectId":"iw:1"}').objectId`}); !strings.Contains(string(m.Result), `"value":"iw:1"`) {
		t.Fatalf("host evaluate of a string: %s", m.Raw)
	}
	for _, f := range ag.framesFrom(from) {
		if c, ok := f.Body.(*sourceproto.RuntimeCommand); ok && c.Method == sourceproto.MethodCallFunctionOn {
			for _, arg := range c.CallFunctionOn.Arguments {
				if arg.Handle != "" {
					t.Fatalf("the page got an argument handle %q from a refused call", arg.Handle)
				}
			}
		}
	}
}

func (a *fakeAgent) framesFrom(i int) []sourceproto.Frame {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]sourceproto.Frame(nil), a.frames[i:]...)
}

// Two windows each hold their own page objects: releasing a group in one
// leaves the other's valid; closing a window makes the page release that
// window's handles and stop its console events.
func TestClientRuntimeTwoWindows(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{})
	ag := openAgent(t, reg, token, "page-1", "Shop")
	a, b := w.dial("A"), w.dial("B")
	ctxA, wireA := windowOn(t, a, ag, "Shop")
	ctxB, wireB := windowOn(t, b, ag, "Shop")
	if wireA == wireB {
		t.Fatalf("both windows are %s on the wire", wireA)
	}
	objA := evalIn(t, a, ctxA, "obj", "console").Result.ObjectID
	evalIn(t, a, ctxA, "obj", "popover")
	objB := evalIn(t, b, ctxB, "obj", "console").Result.ObjectID

	from := ag.count()
	a.MustCall("Runtime.discardConsoleEntries", nil)
	ag.waitFrame("console.discard for A", from, func(f sourceproto.Frame) bool {
		d, ok := f.Body.(*sourceproto.ConsoleDiscard)
		return ok && d.Session == wireA
	})
	ag.waitFrame("releaseObjectGroup console for A", from, isCommand(sourceproto.MethodReleaseObjectGroup, func(c *sourceproto.RuntimeCommand) bool {
		return c.Session == wireA && c.ReleaseObjectGroup.ObjectGroup == "console"
	}))
	if m := a.Call("Runtime.getProperties", map[string]any{"objectId": objA}); m.Error == nil {
		t.Fatalf("A's discarded object still answers: %s", m.Raw)
	}
	propsOf(t, b, objB)   // B's objects are untouched
	ag.waitLive(wireA, 1) // the popover group

	from = ag.count()
	a.Conn().Close(websocket.StatusNormalClosure, "")
	ag.waitFrame("console.disable for A", from, func(f sourceproto.Frame) bool {
		d, ok := f.Body.(*sourceproto.ConsoleDisable)
		return ok && d.Session == wireA
	})
	ag.waitFrame("releaseObjectGroup popover for A", from, isCommand(sourceproto.MethodReleaseObjectGroup, func(c *sourceproto.RuntimeCommand) bool {
		return c.Session == wireA && c.ReleaseObjectGroup.ObjectGroup == "popover"
	}))
	ag.waitLive(wireA, 0)
	propsOf(t, b, objB)
	if _, calls := w.srv.clients.ObjectCounts(w.session(t, wireB).page); calls != 0 {
		t.Fatalf("%d calls in flight after every answer", calls)
	}
}

// 10,000 evaluate+release cycles (pipelined in batches, as a Console that
// logs objects in a loop would) end with nothing in the worker's tables and
// nothing held by the page.
func TestClientRuntimeCyclesLeaveNothing(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{})
	ag := openAgent(t, reg, token, "page-1", "Shop")
	a := w.dial("A")
	ctx, wire := windowOn(t, a, ag, "Shop")
	sess := w.session(t, wire)
	const cycles, batch = 10_000, 200
	ids := make([]int64, 0, batch)
	objs := make([]string, 0, batch)
	for done := 0; done < cycles; done += batch {
		ids = ids[:0]
		for range batch {
			ids = append(ids, a.Send("Runtime.evaluate", map[string]any{"expression": "obj", "uniqueContextId": ctx.Context.UniqueID}))
		}
		objs = objs[:0]
		for _, id := range ids {
			m := a.ExpectResponse(id)
			var ans evalAnswer
			if json.Unmarshal(m.Result, &ans); !object.Owns(ans.Result.ObjectID) {
				t.Fatalf("cycle %d: %s", done, m.Raw)
			}
			objs = append(objs, ans.Result.ObjectID)
		}
		ids = ids[:0]
		for _, o := range objs {
			ids = append(ids, a.Send("Runtime.releaseObject", map[string]any{"objectId": o}))
		}
		for _, id := range ids {
			if m := a.ExpectResponse(id); m.Error != nil {
				t.Fatalf("release: %s", m.Raw)
			}
		}
		a.Forget()
	}
	if objs, calls := w.srv.clients.ObjectCounts(sess.page); objs != 0 || calls != 0 {
		t.Fatalf("after %d cycles: %d objects in the window's table, %d calls in flight", cycles, objs, calls)
	}
	ag.waitLive(wire, 0)
}

// A page that never answers gets its window an error at the deadline and a
// runtime.cancel; meanwhile another page and the host answer. A result
// that comes after the deadline gets no ack: the cancel already freed its
// handles in the page.
func TestClientRuntimeDeadline(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: 500 * time.Millisecond})
	hung := openAgent(t, reg, token, "page-hung", "Hung")
	hung.setSilent(true)
	ok := openAgent(t, reg, token, "page-ok", "Ok")
	a := w.dial("A")
	hungCtx, wire := windowOn(t, a, hung, "Hung")
	m := a.Expect("the Ok page's context", func(m cdptest.Msg) bool {
		return m.Method == "Runtime.executionContextCreated" && strings.Contains(string(m.Params), `"name":"Ok"`)
	})
	var okCtx ctxEvent
	json.Unmarshal(m.Params, &okCtx)

	id := a.Send("Runtime.evaluate", map[string]any{"expression": "obj", "uniqueContextId": hungCtx.Context.UniqueID})
	cmd, _ := hung.waitFrame("the evaluate", 0, isCommand(sourceproto.MethodEvaluate, nil))
	c := cmd.Body.(*sourceproto.RuntimeCommand)
	// The page answers, but its answer is on its way past the deadline.
	hung.mu.Lock()
	late := hung.answerLocked(c)
	hung.mu.Unlock()
	if got := evalIn(t, a, okCtx, "42", ""); string(got.Result.Value) != "42" {
		t.Fatalf("the other page: %+v", got)
	}
	ok.waitFrame("the other page's evaluate", 0, isCommand(sourceproto.MethodEvaluate, nil))
	if m := a.MustCall("Runtime.evaluate", map[string]any{"expression": "6*7"}); !strings.Contains(string(m.Result), `"value":42`) {
		t.Fatalf("host: %s", m.Raw)
	}
	m = a.ExpectResponse(id)
	if m.Error == nil || !strings.Contains(m.Error.Message, "did not answer within 500ms") || !strings.Contains(m.Error.Message, "ClientRuntimeTimeout") {
		t.Fatalf("hung page: %s", m.Raw)
	}
	hung.waitFrame("runtime.cancel", 0, func(f sourceproto.Frame) bool {
		x, ok := f.Body.(*sourceproto.RuntimeCancel)
		return ok && x.ID == c.ID && x.Session == wire
	})
	hung.waitLive(wire, 0) // the cancel freed the answer's handle
	hung.pg.ingest(hung.pg.p.Frame(t, late))
	// Acks and commands reach a page in order: the next command shows
	// that no ack for the late answer was queued before it.
	hung.setSilent(false)
	from := hung.count()
	evalIn(t, a, hungCtx, "42", "")
	_, next := hung.waitFrame("the next evaluate", from, isCommand(sourceproto.MethodEvaluate, nil))
	hung.mu.Lock()
	for _, f := range hung.frames[from:next] {
		if x, ok := f.Body.(*sourceproto.RuntimeAck); ok && x.ID == c.ID {
			t.Errorf("the late answer was acknowledged: %+v", x)
		}
	}
	hung.mu.Unlock()
	if answersTo(a, m.ID) != 1 {
		t.Fatal("the hung evaluate was answered more than once")
	}
}

// A page that closes while a window waits for it: the window gets an
// error, once.
func TestClientRuntimePageClosedMidRequest(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{})
	ag := openAgent(t, reg, token, "page-1", "Shop")
	ag.setSilent(true)
	a := w.dial("A")
	ctx, _ := windowOn(t, a, ag, "Shop")
	id := a.Send("Runtime.evaluate", map[string]any{"expression": "obj", "uniqueContextId": ctx.Context.UniqueID})
	ag.waitFrame("the evaluate", 0, isCommand(sourceproto.MethodEvaluate, nil))
	ag.pg.src.Close(sourceproto.CloseGoingAway)
	m := a.ExpectResponse(id)
	if m.Error == nil || !strings.Contains(m.Error.Message, "closed before it answered") {
		t.Fatalf("evaluate in a page that closed: %s", m.Raw)
	}
	if answersTo(a, m.ID) != 1 {
		t.Fatal("answered more than once")
	}
	// Its context is gone: a later request is refused at once.
	if m := a.Call("Runtime.evaluate", map[string]any{"expression": "1", "contextId": ctx.Context.ID}); m.Error == nil {
		t.Fatalf("evaluate in a closed page's context: %s", m.Raw)
	}
}

// The host paused at a breakpoint does not stop the pages: a page
// evaluation is answered while Node is paused.
func TestClientRuntimeWhileHostPaused(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{})
	ag := openAgent(t, reg, token, "page-1", "Shop")
	a := w.dial("A")
	ctx, _ := windowOn(t, a, ag, "Shop")
	a.MustCall("Debugger.enable", nil)
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "pauseSoon()"})
	a.ExpectEvent("Debugger.paused", nil)
	if got := evalIn(t, a, ctx, "obj", "console"); !object.Owns(got.Result.ObjectID) {
		t.Fatalf("page evaluate while the host is paused: %+v", got)
	}
	a.MustCall("Debugger.resume", nil)
	a.ExpectEvent("Debugger.resumed", nil)
}

// Console objects: a page's console event for a window carries objectIds
// of that window's table, which expand; a window opened later gets the
// replay with previews only.
func TestClientConsoleObjects(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{})
	ag := openAgent(t, reg, token, "page-1", "Shop")
	a := w.dial("A")
	_, wire := windowOn(t, a, ag, "Shop")

	ag.mu.Lock()
	arg := ag.object(wire, pagerealm.ConsoleGroup, 0, "Object")
	ag.mu.Unlock()
	arg.Preview = &sourceproto.ObjectPreview{Type: sourceproto.TypeObject, Properties: []sourceproto.PropertyPreview{{Name: "id", Type: "number", Value: "7"}}}
	ev := &sourceproto.ConsoleEvent{Session: wire, Type: sourceproto.ConsoleLog, Timestamp: 1, Args: []sourceproto.RemoteObject{str("user"), arg}}
	ag.pg.ingest(ag.pg.p.Append(t, consoleItem(ev)))
	m := a.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `"user"`) })
	var call struct {
		Args []remoteObject `json:"args"`
	}
	json.Unmarshal(m.Params, &call)
	if len(call.Args) != 2 || !object.Owns(call.Args[1].ObjectID) || call.Args[0].ObjectID != "" {
		t.Fatalf("console event %s", m.Params)
	}
	propsOf(t, a, call.Args[1].ObjectID)

	// A later window: the replay has the preview, not A's objectId.
	b := w.dial("B")
	b.MustCall("Runtime.enable", nil)
	r := b.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `"user"`) })
	if strings.Contains(string(r.Params), "objectId") || !strings.Contains(string(r.Params), `"preview"`) {
		t.Fatalf("replayed console event %s", r.Params)
	}
	// Runtime.disable in A: the page stops A's events and frees its objects.
	from := ag.count()
	a.MustCall("Runtime.disable", nil)
	ag.waitFrame("console.disable", from, func(f sourceproto.Frame) bool {
		d, ok := f.Body.(*sourceproto.ConsoleDisable)
		return ok && d.Session == wire
	})
	ag.waitLive(wire, 0)
}

func consoleItem(ev *sourceproto.ConsoleEvent) sourceproto.Item {
	return sourceproto.Item{Topic: sourceproto.TopicConsole, Console: ev}
}

// A page whose outbox is full when a window evaluates in it: sending the
// runtime.command ends the page's connection on the page's sender goroutine
// (the close comes back as SourceClosed, which takes the hub's lock). The
// evaluate is answered once, with an error, and the worker keeps serving.
func TestClientRuntimePageOutboxFull(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{})
	a := w.dial("A")
	proctest.Watchdog(t, hubHangLimit, closeWindows(a))
	a.MustCall("Runtime.enable", nil)
	full := &overflowingOutbox{}
	// Runtime only: no console.enable reaches the outbox before the evaluate.
	pg := openPageCaps(t, reg, token, "page-stuck", "http://127.0.0.1:3000/", "Stuck", full, sourceproto.CapRuntime)
	full.setSource(pg.src)
	pg.ingest(pg.p.Replace(t, sourceproto.ReplaceInitial))
	ctx := clientContextEvent(t, a)
	m := a.Call("Runtime.evaluate", map[string]any{"expression": "1", "uniqueContextId": ctx.Context.UniqueID})
	if m.Error == nil || !strings.Contains(m.Error.Message, "closed") {
		t.Fatalf("evaluate in a page whose outbox is full: %s", m.Raw)
	}
	if n := answersTo(a, m.ID); n != 1 {
		t.Fatalf("answered %d times", n)
	}
	if n := full.enqueued(); n != 1 {
		t.Fatalf("%d frames offered to the full outbox, want the one runtime.command", n)
	}
	w.srv.mu.Lock()
	var sess *Session
	for s := range w.srv.sessions {
		sess = s
	}
	w.srv.mu.Unlock()
	if objs, calls := w.srv.clients.ObjectCounts(sess.page); objs != 0 || calls != 0 {
		t.Fatalf("%d objects, %d calls left", objs, calls)
	}
}

// Completions and the eager preview (throwOnSideEffect) are the page's to
// answer: the worker forwards them with the flag, so the agent can read a
// property path and refuse the rest (client/js/sideeffect.mjs).
func TestClientRuntimeSideEffectFreeEvaluateReachesPage(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{})
	ag := openAgent(t, reg, token, "page-1", "Shop")
	a := w.dial("A")
	ctx, _ := windowOn(t, a, ag, "Shop")
	from := ag.count()
	m := a.MustCall("Runtime.evaluate", map[string]any{"expression": "globalThis", "uniqueContextId": ctx.Context.UniqueID,
		"objectGroup": "completion", "throwOnSideEffect": true, "replMode": true, "timeout": 500})
	if !strings.Contains(string(m.Result), `"value":42`) {
		t.Fatalf("side-effect-free evaluate answered %s, want the page's answer", m.Raw)
	}
	ag.waitFrame("the command with throwOnSideEffect", from, func(f sourceproto.Frame) bool {
		c, ok := f.Body.(*sourceproto.RuntimeCommand)
		return ok && c.Evaluate != nil && c.Evaluate.ThrowOnSideEffect && c.Evaluate.Expression == "globalThis"
	})
}

// A page answer the worker refuses (over a limit, or invalid) is answered to
// the window at once, naming why, instead of after the deadline; the page
// gets ack{accepted:false} and frees what it made for the answer.
func TestClientRuntimeRejectedResultAnsweredAtOnce(t *testing.T) {
	const deadline = 30 * time.Second
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: deadline})
	ag := openAgent(t, reg, token, "page-1", "Shop")
	ag.setSilent(true)
	a := w.dial("A")
	ctx, wire := windowOn(t, a, ag, "Shop")
	chunk := `"` + strings.Repeat("x", 60<<10) + `"`
	for _, tc := range []struct {
		name, member, want string
	}{
		// Refused when the body is checked (MaxValueBytes, 256 KiB).
		{"a value over MaxValueBytes", `"evaluate":{"result":{"type":"object","value":[` + strings.Repeat(chunk+",", 4) + chunk + `]}}`, "MaxValueBytes"},
		// Refused by the envelope scan, before any body is decoded.
		{"a string over MaxStringBytes", `"evaluate":{"result":{"type":"string","value":"` + strings.Repeat("y", 100<<10) + `"}}`, "MaxStringBytes"},
		{"two union members", `"evaluate":{"result":{"type":"undefined"}},"error":{"code":"internal","message":"x"}`, "exactly the member"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from := ag.count()
			id := a.Send("Runtime.evaluate", map[string]any{"expression": "obj", "uniqueContextId": ctx.Context.UniqueID})
			f, _ := ag.waitFrame("the evaluate", from, isCommand(sourceproto.MethodEvaluate, nil))
			c := f.Body.(*sourceproto.RuntimeCommand)
			ref := ag.pg.src.Ref()
			frame := fmt.Sprintf(`{"v":1,"type":"runtime.result","source":%q,"gen":%d,"body":{"session":%q,"id":%d,"method":"evaluate",%s}}`,
				ref.ID, ref.Gen, c.Session, c.ID, tc.member)
			start := time.Now()
			if res := ag.pg.src.Ingest([]byte(frame)); res.Err == nil || !strings.Contains(res.Err.Error(), tc.want) {
				t.Fatalf("the worker took the answer (%v), want a refusal naming %s", res.Err, tc.want)
			}
			m := a.ExpectResponse(id)
			took := time.Since(start)
			t.Logf("answered in %v (deadline %v): %s", took.Round(time.Millisecond), deadline, m.Raw)
			if m.Error == nil || !strings.Contains(m.Error.Message, "refused the answer") || !strings.Contains(m.Error.Message, tc.want) {
				t.Fatalf("the window got %s", m.Raw)
			}
			// Far below the deadline: the old code answered at the deadline.
			if took > deadline/6 {
				t.Fatalf("answered after %v; the deadline is %v", took, deadline)
			}
			ag.waitFrame("ack{accepted:false}", from, func(f sourceproto.Frame) bool {
				x, ok := f.Body.(*sourceproto.RuntimeAck)
				return ok && x.ID == c.ID && x.Session == wire && !x.Accepted
			})
			if answersTo(a, &id) != 1 {
				t.Fatal("answered more than once")
			}
		})
	}
}
