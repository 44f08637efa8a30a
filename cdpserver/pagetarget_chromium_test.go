//go:build linux

package cdpserver

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	clientjs "github.com/inspector-worker/inspector-worker/client/js"
	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
)

// Page targets with real pages: two headless Chromium pages with the
// shipped client.js, a real node host, and raw CDP on each page's own
// target (/devtools/page/<page target id>). A page target's session must
// see its page and nothing else, and refuse the others' ids by name.

// targetWorker is runtimeWorker with the fetch journal attached (Network).
func targetWorker(t *testing.T, opts Options) (*worker, *sourceproto.Registry, sourceproto.Token) {
	t.Helper()
	w := startWorker(t, hostScript, opts)
	reg := sourceproto.NewRegistry(w.srv.ClientConsumer(), w.srv.FetchConsumer())
	w.srv.SetSourceRegistry(reg)
	token, err := sourceproto.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	return w, reg, token
}

// targetPages serves one page per title (/0, /1 …; any query string gives
// the same page) and opens each in its own headless Chromium. It returns
// the pages' URLs and a function that kills page i's browser.
func targetPages(t *testing.T, reg *sourceproto.Registry, token sourceproto.Token, titles ...string) (urls []string, kill func(i int)) {
	t.Helper()
	h, err := carrier.NewClientHandler(carrier.ClientOptions{Registry: reg, Token: token, ClientJS: clientjs.ClientJS(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/client", h)
	mux.Handle("/client.js", h)
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("data " + r.URL.RawQuery)) })
	for i, title := range titles {
		page := domPageHTML(title, ln.Addr().String(), token)
		mux.HandleFunc(fmt.Sprintf("/%d", i), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(page))
		})
		urls = append(urls, fmt.Sprintf("http://%s/%d", ln.Addr(), i))
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-background-timer-throttling", "--disable-renderer-backgrounding"}
	var cmds []*exec.Cmd
	for _, u := range urls {
		cmd := exec.Command(chromiumBinary(t), append(args, "--user-data-dir="+t.TempDir(), u)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			proctest.AssertGone(t, cmd.Process.Pid)
		})
	}
	return urls, func(i int) { _ = syscall.Kill(-cmds[i].Process.Pid, syscall.SIGKILL) }
}

// listTargets waits until /json/list lists n targets and returns them.
func listTargets(t *testing.T, w *worker, n int) []targetJSON {
	t.Helper()
	deadline := time.Now().Add(cdptest.Timeout)
	for {
		resp, err := w.get("/json/list", "")
		if err != nil {
			t.Fatal(err)
		}
		var list []targetJSON
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == n {
			return list
		}
		if time.Now().After(deadline) {
			t.Fatalf("/json/list lists %d targets, want %d: %+v", len(list), n, list)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// targetByTitle finds a page target in list.
func targetByTitle(t *testing.T, list []targetJSON, title string) targetJSON {
	t.Helper()
	for _, tj := range list[1:] {
		if tj.Title == title {
			return tj
		}
	}
	t.Fatalf("no page target titled %q in %+v", title, list)
	return targetJSON{}
}

// refused calls method and requires an error whose message contains want.
func refused(t *testing.T, c *cdptest.Client, method string, params any, want string) string {
	t.Helper()
	m := c.Call(method, params)
	if m.Error == nil {
		t.Fatalf("%s %v was answered %s, want an error saying %q", method, params, m.Result, want)
	}
	if !strings.Contains(m.Error.Message, want) {
		t.Fatalf("%s %v: error %q, want it to say %q", method, params, m.Error.Message, want)
	}
	return m.Error.Message
}

// pageEval evaluates expr in a page target's default context.
func pageEval(t *testing.T, c *cdptest.Client, expr string) json.RawMessage {
	t.Helper()
	m := c.MustCall("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	var ans evalAnswer
	if err := json.Unmarshal(m.Result, &ans); err != nil || ans.ExceptionDetails != nil {
		t.Fatalf("evaluate %q: %s", expr, m.Raw)
	}
	return ans.Result.Value
}

// noEventWith fails if any event c received contains s.
func noEventWith(t *testing.T, c *cdptest.Client, s, why string) {
	t.Helper()
	for _, m := range c.All() {
		if m.ID == nil && strings.Contains(string(m.Raw), s) {
			t.Fatalf("%s: the page target's session got %s", why, m.Raw)
		}
	}
}

func TestPageTargetIsolation(t *testing.T) {
	w, reg, token := targetWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	titles := []string{"Target page A", "Target page B"}
	urls, _ := targetPages(t, reg, token, titles...)
	comb, ctxs := domWindow(t, w, "combined", titles...)

	// Discovery: the combined target first and as ever, then each page.
	list := listTargets(t, w, 3)
	if list[0].ID != w.srv.TargetID() || list[0].WebSocketDebuggerURL != w.srv.PageWebSocketURL() {
		t.Fatalf("the combined target is not first and unchanged: %+v", list[0])
	}
	ta, tb := targetByTitle(t, list, titles[0]), targetByTitle(t, list, titles[1])
	if ta.Type != "page" || ta.URL != urls[0] || ta.WebSocketDebuggerURL != "ws://"+w.srv.Addr()+"/devtools/page/"+ta.ID {
		t.Fatalf("page target A: %+v", ta)
	}
	a := cdptest.Dial(t, "A", ta.WebSocketDebuggerURL, nil)
	a.SetTimeout(2 * time.Minute)

	// Runtime: A's context only; the default context is A's.
	a.MustCall("Runtime.enable", nil)
	a.ExpectAnyEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"name":"`+titles[0]+`"`)
	})
	if got := string(pageEval(t, a, "document.title")); got != `"`+titles[0]+`"` {
		t.Fatalf("document.title on page target A = %s", got)
	}
	noEventWith(t, a, titles[1], "page B's context")

	// Other realms' contexts are refused by name: B's (by id and unique
	// id), and the host's.
	b := ctxs[titles[1]]
	refused(t, a, "Runtime.evaluate", map[string]any{"expression": "document.title", "contextId": b.Context.ID}, "is not this page's")
	refused(t, a, "Runtime.evaluate", map[string]any{"expression": "document.title", "uniqueContextId": b.Context.UniqueID}, "is not this page's")
	refused(t, a, "Runtime.evaluate", map[string]any{"expression": "process.pid", "contextId": 1}, "is not this page's")

	// Objects: B's (from the combined window) and the host's are refused;
	// A's own work.
	m := comb.MustCall("Runtime.evaluate", map[string]any{"expression": "({fromB: 1})", "uniqueContextId": b.Context.UniqueID})
	var bObj evalAnswer
	_ = json.Unmarshal(m.Result, &bObj)
	if !strings.HasPrefix(bObj.Result.ObjectID, "iw:") {
		t.Fatalf("no object of B: %s", m.Raw)
	}
	refused(t, a, "Runtime.getProperties", map[string]any{"objectId": bObj.Result.ObjectID}, "could not find object")
	refused(t, a, "Runtime.callFunctionOn", map[string]any{"objectId": bObj.Result.ObjectID, "functionDeclaration": "function () { return this }"}, "could not find object")
	m = comb.MustCall("Runtime.evaluate", map[string]any{"expression": "({fromHost: process.pid})"})
	var hObj evalAnswer
	_ = json.Unmarshal(m.Result, &hObj)
	if hObj.Result.ObjectID == "" || strings.HasPrefix(hObj.Result.ObjectID, "iw:") {
		t.Fatalf("no host object: %s", m.Raw)
	}
	refused(t, a, "Runtime.getProperties", map[string]any{"objectId": hObj.Result.ObjectID}, "not this page's")
	m = a.MustCall("Runtime.evaluate", map[string]any{"expression": "({fromA: document.title})"})
	var aObj evalAnswer
	_ = json.Unmarshal(m.Result, &aObj)
	if got := a.MustCall("Runtime.getProperties", map[string]any{"objectId": aObj.Result.ObjectID, "ownProperties": true}); !strings.Contains(string(got.Result), titles[0]) {
		t.Fatalf("A's own object: %s", got.Raw)
	}

	// Nodes: A's session's document is A's page; B's nodes (from the
	// combined window) and the host document's are refused.
	comb.MustCall("DOM.enable", nil)
	trc := newDOMTree(t, comb)
	var bDoc int64
	for fid, o := range trc.owners() {
		if fid == tb.ID {
			bDoc = o.ContentDocument.NodeID
		}
	}
	if bDoc == 0 {
		t.Fatalf("no document of B in the combined window's tree")
	}
	a.MustCall("DOM.enable", nil)
	m = a.MustCall("DOM.getDocument", map[string]any{"depth": 1})
	var doc struct {
		Root domNode `json:"root"`
	}
	_ = json.Unmarshal(m.Result, &doc)
	if doc.Root.NodeType != 9 || doc.Root.FrameID != ta.ID || doc.Root.DocumentURL != urls[0] {
		t.Fatalf("page target A's document: %s", m.Raw)
	}
	var html int64
	for _, n := range doc.Root.Children {
		if n.NodeName == "HTML" {
			html = n.NodeID
		}
	}
	if html == 0 {
		t.Fatalf("A's document came without its <html> (depth 1): %s", m.Raw)
	}
	a.MustCall("DOM.requestChildNodes", map[string]any{"nodeId": html})
	set := a.ExpectEvent("DOM.setChildNodes", nil)
	if !strings.Contains(string(set.Params), `"nodeName":"BODY"`) {
		t.Fatalf("A's <html>'s children: %s", set.Raw)
	}
	if h := a.MustCall("DOM.getOuterHTML", map[string]any{"nodeId": html}); !strings.Contains(string(h.Result), titles[0]) ||
		strings.Contains(string(h.Result), titles[1]) {
		t.Fatalf("A's <html>: %s", h.Raw)
	}
	refused(t, a, "DOM.requestChildNodes", map[string]any{"nodeId": bDoc}, "node")
	refused(t, a, "DOM.getOuterHTML", map[string]any{"nodeId": bDoc}, "node")
	refused(t, a, "DOM.getOuterHTML", map[string]any{"nodeId": 1}, "no node with id 1")

	// Frames and target info: A is the main frame.
	m = a.MustCall("Page.getFrameTree", nil)
	if !strings.Contains(string(m.Result), `"id":"`+ta.ID+`"`) || strings.Contains(string(m.Result), "parentId") {
		t.Fatalf("A's frame tree: %s", m.Raw)
	}
	if m = a.MustCall("Target.getTargetInfo", nil); !strings.Contains(string(m.Result), `"targetId":"`+ta.ID+`"`) {
		t.Fatalf("A's target info: %s", m.Raw)
	}

	// Console and Network: A's arrive, B's do not. B's are awaited in the
	// combined window first; A's that follow them are then awaited in A's
	// session: one projection order (the hub's lock, the journal's), so a
	// leaked B event would have reached A's session before them.
	a.MustCall("Network.enable", nil)
	comb.MustCall("Network.enable", nil)
	pageEval(t, a, `console.log("console of A 1"); fetch("/data?fetch-of-A-1").then(r => r.text())`)
	a.ExpectAnyEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "console of A 1") })
	a.ExpectAnyEvent("Network.requestWillBeSent", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "fetch-of-A-1") })
	evalValue(t, comb, b, `console.log("console of B"); fetch("/data?fetch-of-B").then(r => r.text())`)
	comb.ExpectAnyEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "console of B") })
	rw := comb.ExpectAnyEvent("Network.requestWillBeSent", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "fetch-of-B") })
	var bReq struct {
		RequestID string `json:"requestId"`
	}
	_ = json.Unmarshal(rw.Params, &bReq)
	comb.ExpectAnyEvent("Network.loadingFinished", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"requestId":"`+bReq.RequestID+`"`)
	})
	refused(t, a, "Network.getResponseBody", map[string]any{"requestId": bReq.RequestID}, "not this target's")
	pageEval(t, a, `console.log("console of A 2"); fetch("/data?fetch-of-A-2").then(r => r.text())`)
	a.ExpectAnyEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "console of A 2") })
	a.ExpectAnyEvent("Network.requestWillBeSent", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "fetch-of-A-2") })
	noEventWith(t, a, "console of B", "page B's console")
	noEventWith(t, a, "fetch-of-B", "page B's request")

	// What a JavaScript agent cannot do is refused, naming the limit.
	refused(t, a, "Page.captureScreenshot", nil, "JavaScript agent")
	refused(t, a, "Input.dispatchMouseEvent", map[string]any{"type": "mousePressed", "x": 1, "y": 1}, "trusted input")
	refused(t, a, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1, "height": 1, "deviceScaleFactor": 1, "mobile": false}, "device metrics")
	refused(t, a, "Debugger.enable", nil, "no Debugger domain")
	a.MustCall("Performance.enable", nil)
	a.MustCall("Page.setLifecycleEventsEnabled", map[string]any{"enabled": true})

	// A named world is announced as an isolated world of A's frame and
	// runs in A's own world (a JavaScript agent cannot make another).
	m = a.MustCall("Page.createIsolatedWorld", map[string]any{"frameId": ta.ID, "worldName": "utility"})
	var world struct {
		ExecutionContextID int `json:"executionContextId"`
	}
	_ = json.Unmarshal(m.Result, &world)
	a.ExpectAnyEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), fmt.Sprintf(`"id":%d,`, world.ExecutionContextID)) &&
			strings.Contains(string(m.Params), `"name":"utility"`) && strings.Contains(string(m.Params), `"type":"isolated"`)
	})
	m = a.MustCall("Runtime.evaluate", map[string]any{"expression": "document.title", "contextId": world.ExecutionContextID, "returnByValue": true})
	if !strings.Contains(string(m.Result), titles[0]) {
		t.Fatalf("evaluate in the named world: %s", m.Raw)
	}
	refused(t, a, "Page.createIsolatedWorld", map[string]any{"frameId": tb.ID, "worldName": "utility"}, "no frame")
}

func TestPageTargetNavigateAndClose(t *testing.T) {
	w, reg, token := targetWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	titles := []string{"Nav page A", "Nav page B"}
	urls, kill := targetPages(t, reg, token, titles...)
	comb, _ := domWindow(t, w, "combined", titles...)
	ta := targetByTitle(t, listTargets(t, w, 3), titles[0])
	a := cdptest.Dial(t, "A", ta.WebSocketDebuggerURL, nil)
	a.SetTimeout(2 * time.Minute)
	a.MustCall("Page.enable", nil)
	a.MustCall("Page.setLifecycleEventsEnabled", map[string]any{"enabled": true})
	a.MustCall("Runtime.enable", nil)
	a.MustCall("Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "window.__newDoc = (window.__newDoc || 0) + 1"})
	// A script for a named world makes the world in each later load; the
	// world is the page's own, so the script runs there.
	a.MustCall("Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "window.__world = 1", "worldName": "utility"})

	// Navigate to another URL of the same app: the answer carries the new
	// load's loaderId, the main frame navigates, load fires, and the
	// session keeps working in the new load.
	next := urls[0] + "?next"
	start := time.Now()
	m := a.MustCall("Page.navigate", map[string]any{"url": next})
	t.Logf("Page.navigate answered after %v: %s", time.Since(start), m.Result)
	var nav struct {
		FrameID  string `json:"frameId"`
		LoaderID string `json:"loaderId"`
	}
	_ = json.Unmarshal(m.Result, &nav)
	if nav.FrameID != ta.ID || nav.LoaderID == "" {
		t.Fatalf("Page.navigate answer: %s", m.Raw)
	}
	a.ExpectAnyEvent("Page.frameNavigated", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"url":"`+next+`"`) && strings.Contains(string(m.Params), nav.LoaderID)
	})
	a.ExpectAnyEvent("Page.lifecycleEvent", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"name":"load"`) && strings.Contains(string(m.Params), nav.LoaderID)
	})
	a.ExpectAnyEvent("Page.loadEventFired", nil)
	if got := string(pageEval(t, a, "location.search + ' ' + document.title")); got != `"?next `+titles[0]+`"` {
		t.Fatalf("after Page.navigate the session evaluates %s", got)
	}
	// The new-document scripts ran in the new load (once each).
	deadline := time.Now().Add(cdptest.Timeout)
	for string(pageEval(t, a, "[window.__newDoc, window.__world]")) != "[1,1]" {
		if time.Now().After(deadline) {
			t.Fatalf("the new-document scripts did not run in the new load: [window.__newDoc, window.__world] = %s",
				pageEval(t, a, "[window.__newDoc, window.__world]"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.ExpectAnyEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"name":"utility"`) && strings.Contains(string(m.Params), `"type":"isolated"`)
	})
	if list := listTargets(t, w, 3); targetByTitle(t, list, titles[0]).ID != ta.ID {
		t.Fatalf("the page target's id changed across the navigation: %+v", list)
	}

	// The page closes while a request awaits its answer: the request is
	// answered with an error, then the session ends with the target.
	id := a.Send("Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
	time.Sleep(200 * time.Millisecond) // let the command reach the page
	start = time.Now()
	kill(0)
	ans := a.ExpectResponse(id)
	t.Logf("the pending evaluation was answered %v after the page's browser was killed: %s", time.Since(start), ans.Raw)
	if ans.Error == nil || !strings.Contains(ans.Error.Message, "closed before it answered") {
		t.Fatalf("pending evaluation on a closed page: %s", ans.Raw)
	}
	err := a.ExpectClosed()
	t.Logf("the session closed %v after the page's browser was killed: %v", time.Since(start), err)
	if err == nil || !strings.Contains(err.Error(), "the page closed") {
		t.Fatalf("the page target's session ended with %v, want the reason", err)
	}
	listTargets(t, w, 2)
	// The combined window stays.
	comb.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
}

// TestPageTargetOpenUnknown: the browser endpoint's way in refuses a
// target id no page has, with the reason, and takes no window slot.
func TestPageTargetOpenUnknown(t *testing.T) {
	w := startWorker(t, hostScript, Options{MaxWindows: 1})
	for range 3 {
		if _, err := w.srv.openPageSession("no-such-page", func(*Session) {}); err == nil || !strings.Contains(err.Error(), "no page target") {
			t.Fatalf("openPageSession of an unknown id: %v", err)
		}
	}
	c := w.dial("after") // the one slot is still free
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
}
