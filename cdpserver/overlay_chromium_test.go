//go:build linux

package cdpserver

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	clientjs "github.com/inspector-worker/inspector-worker/client/js"
	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
)

// The overlay of pages with real pages (headless Chromium, the shipped
// client.js, the real worker): DOM.getBoxModel, Overlay.highlightNode /
// hideHighlight and DOM.setInspectedNode ($0). The page's own DOM is read
// by evaluation in the page.

// nodeFor is the window's node id of the page element sel (made known
// with its path, as revealing it in Elements does).
func nodeFor(t *testing.T, c *cdptest.Client, ctx ctxEvent, sel string) int64 {
	t.Helper()
	obj := evalIn(t, c, ctx, `document.querySelector(`+jsString(sel)+`)`, "overlay-test")
	if obj.Result.Subtype != "node" {
		t.Fatalf("%s evaluates to %+v, want a node", sel, obj.Result)
	}
	m := c.MustCall("DOM.requestNode", map[string]any{"objectId": obj.Result.ObjectID})
	var rn struct {
		NodeID int64 `json:"nodeId"`
	}
	if err := json.Unmarshal(m.Result, &rn); err != nil || rn.NodeID == 0 {
		t.Fatalf("DOM.requestNode %s: %s", sel, m.Raw)
	}
	return rn.NodeID
}

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

// boxModel is DOM.getBoxModel's model.
type boxModel struct {
	Content []float64 `json:"content"`
	Padding []float64 `json:"padding"`
	Border  []float64 `json:"border"`
	Margin  []float64 `json:"margin"`
	Width   int       `json:"width"`
	Height  int       `json:"height"`
}

// An element with distinct padding, border and margin on every side: the
// box model's four quads are its getBoundingClientRect inset and outset by
// those widths, in the page's CSS pixels; width and height are the border
// box's. Also by objectId; an element without a box is refused with
// Chrome's reason; a host placeholder has an empty box.
func TestDOMGetBoxModel(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "Box model page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	newDOMTree(t, a)
	evalValue(t, a, ctx, `(function () {
		var d = document.createElement('div'); d.id = 'box';
		d.style.cssText = 'position:absolute; left:30.5px; top:40px; width:100px; height:50px; border-style:solid;' +
			'padding:5px 6px 7px 8px; border-width:1px 2px 3px 4px; margin:9px 10px 11px 12px';
		document.body.appendChild(d);
		var h = document.createElement('span'); h.id = 'hidden'; h.style.display = 'none'; h.textContent = 'x';
		document.body.appendChild(h);
		return 1; })()`)
	id := nodeFor(t, a, ctx, "#box")
	m := a.MustCall("DOM.getBoxModel", map[string]any{"nodeId": id})
	var ans struct {
		Model boxModel `json:"model"`
	}
	if err := json.Unmarshal(m.Result, &ans); err != nil {
		t.Fatalf("DOM.getBoxModel: %s", m.Raw)
	}
	var r struct{ L, T, R, B float64 }
	if err := json.Unmarshal(evalValue(t, a, ctx, `(function () { var r = document.querySelector('#box').getBoundingClientRect();
		return { L: r.left, T: r.top, R: r.right, B: r.bottom }; })()`), &r); err != nil {
		t.Fatal(err)
	}
	q := func(l, t, r, b float64) []float64 { return []float64{l, t, r, t, r, b, l, b} }
	want := boxModel{
		Border:  q(r.L, r.T, r.R, r.B),
		Padding: q(r.L+4, r.T+1, r.R-2, r.B-3),
		Content: q(r.L+4+8, r.T+1+5, r.R-2-6, r.B-3-7),
		Margin:  q(r.L-12, r.T-9, r.R+10, r.B+11),
		Width:   int(math.Round(r.R - r.L)), Height: int(math.Round(r.B - r.T)),
	}
	same := func(a, b []float64) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-6 {
				return false
			}
		}
		return true
	}
	got := ans.Model
	if !same(got.Border, want.Border) || !same(got.Padding, want.Padding) || !same(got.Content, want.Content) ||
		!same(got.Margin, want.Margin) || got.Width != want.Width || got.Height != want.Height {
		t.Fatalf("DOM.getBoxModel %+v, want %+v (from the page's getBoundingClientRect %+v)", got, want, r)
	}
	if got.Width != 100+8+6+4+2 || got.Height != 50+5+7+1+3 {
		t.Errorf("box %dx%d, want the border box 120x66", got.Width, got.Height)
	}
	t.Logf("box model of #box: %s", m.Result)

	obj := evalIn(t, a, ctx, `document.querySelector('#box')`, "g")
	byObj := a.MustCall("DOM.getBoxModel", map[string]any{"objectId": obj.Result.ObjectID})
	if compact(t, byObj.Result) != compact(t, m.Result) {
		t.Errorf("by objectId %s, by nodeId %s", byObj.Result, m.Result)
	}
	if e := domError(t, a, "DOM.getBoxModel", map[string]any{"nodeId": nodeFor(t, a, ctx, "#hidden")}); !strings.Contains(e, "Could not compute box model") {
		t.Errorf("an element with display:none: %q", e)
	}
	zero := `[0,0,0,0,0,0,0,0]`
	if got, want := compact(t, a.MustCall("DOM.getBoxModel", map[string]any{"nodeId": 4}).Result),
		`{"model":{"content":`+zero+`,"padding":`+zero+`,"border":`+zero+`,"margin":`+zero+`,"width":0,"height":0}}`; got != want {
		t.Errorf("the host <body> (laid out nowhere): %s, want %s", got, want)
	}
}

// overlayCount is the number of overlay hosts in the page, and whether
// the one there lets the pointer through and hides its shadow root.
const overlayCount = `(function () {
	var o = document.querySelectorAll('inspector-worker-overlay');
	return o.length + (o.length ? ':' + getComputedStyle(o[0]).pointerEvents + ':' + (o[0].shadowRoot === null) : ''); })()`

// Overlay.highlightNode draws in the page that holds the node, in an
// element of the worker's own that lets the pointer through (the page's
// elementFromPoint still finds the page's element) and whose shadow root is
// closed; the window's tree never shows it (not in a mutation event, not
// after a new getDocument, not in a search). Highlighting a node of
// another page hides the first; hideHighlight removes the element.
func TestOverlayHighlightNode(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	titles := []string{"Highlight one", "Highlight two"}
	domPages(t, reg, token, titles...)
	a, ctxs := domWindow(t, w, "A", titles...)
	one, two := ctxs[titles[0]], ctxs[titles[1]]
	tr := newDOMTree(t, a)
	expanded(t, tr, one)
	h1 := nodeFor(t, a, one, "#title")
	config := map[string]any{"showInfo": true, "contentColor": map[string]any{"r": 111, "g": 168, "b": 220, "a": 0.66}}
	a.MustCall("Overlay.highlightNode", map[string]any{"nodeId": h1, "highlightConfig": config})
	if got := strings.Trim(string(evalValue(t, a, one, overlayCount)), `"`); got != "1:none:true" {
		t.Fatalf("after highlightNode the page has %q overlay hosts, want 1:none:true (pointer-events none, closed shadow root)", got)
	}
	if got := string(evalValue(t, a, one, `(function () { var r = document.querySelector('#title').getBoundingClientRect();
		return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2).id; })()`)); got != `"title"` {
		t.Errorf("the page's elementFromPoint over the highlighted <h1> finds %s, want the <h1>", got)
	}
	// The flush of the page's mutations (FLUSH_MS) has passed once the
	// page answers a command after 200 ms.
	evalValue(t, a, one, `new Promise(function (r) { setTimeout(r, 200); })`)
	a.MustCall("DOM.describeNode", map[string]any{"nodeId": h1})
	tr.sync()
	for _, m := range a.All() {
		if strings.Contains(string(m.Raw), "inspector-worker-overlay") || strings.Contains(string(m.Raw), "INSPECTOR-WORKER-OVERLAY") {
			t.Fatalf("the window was sent the overlay's host: %s", m.Raw)
		}
	}
	again := newDOMTree(t, a)
	if s := windowDOM(expanded(t, again, one)); strings.Contains(strings.ToLower(s), "inspector-worker-overlay") {
		t.Fatalf("a new document shows the overlay: %s", s)
	}
	if html := windowDOM(again.root); strings.Contains(strings.ToLower(html), "overlay") {
		t.Fatalf("the window's tree has the overlay: %s", html)
	}
	s := a.MustCall("DOM.performSearch", map[string]any{"query": "inspector-worker-overlay"})
	if !strings.Contains(string(s.Result), `"resultCount":0`) {
		t.Errorf("a search for the overlay's tag: %s", s.Raw)
	}

	h1two := nodeFor(t, a, two, "#title")
	a.MustCall("Overlay.highlightNode", map[string]any{"nodeId": h1two, "highlightConfig": config})
	if got := strings.Trim(string(evalValue(t, a, two, overlayCount)), `"`); got != "1:none:true" {
		t.Fatalf("page two after highlightNode: %q", got)
	}
	if got := string(evalValue(t, a, one, overlayCount)); got != `"0"` {
		t.Fatalf("page one still shows the overlay after page two's node was highlighted: %s", got)
	}
	a.MustCall("Overlay.hideHighlight", nil)
	if got := string(evalValue(t, a, two, overlayCount)); got != `"0"` {
		t.Fatalf("page two after hideHighlight: %s", got)
	}
	a.MustCall("Overlay.hideHighlight", nil) // nothing shown: still answered
	a.MustCall("Overlay.highlightNode", map[string]any{"nodeId": 4, "highlightConfig": config})
}

// DOM.setInspectedNode makes the node $0 in its page's Console context
// (the Command Line API, includeCommandLineAPI), the one before $1; no
// global stays in the page, and an evaluation without the API has none.
func TestDOMInspectedNodeIsDollarZero(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "Dollar zero page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	newDOMTree(t, a)
	consoleEval := func(expr string) string {
		m := a.MustCall("Runtime.evaluate", map[string]any{"expression": expr, "uniqueContextId": ctx.Context.UniqueID,
			"includeCommandLineAPI": true, "returnByValue": true, "objectGroup": "console"})
		var ans evalAnswer
		if err := json.Unmarshal(m.Result, &ans); err != nil || ans.ExceptionDetails != nil {
			t.Fatalf("evaluate %q: %s", expr, m.Raw)
		}
		return string(ans.Result.Value)
	}
	if got := consoleEval(`typeof $0`); got != `"undefined"` {
		t.Fatalf("$0 before a node was selected: %s", got)
	}
	a.MustCall("DOM.setInspectedNode", map[string]any{"nodeId": nodeFor(t, a, ctx, "#list li + li")})
	if got := consoleEval(`$0 === document.querySelector('#list li + li')`); got != "true" {
		t.Fatalf("$0 after DOM.setInspectedNode: %s", got)
	}
	a.MustCall("DOM.setInspectedNode", map[string]any{"nodeId": nodeFor(t, a, ctx, "#title")})
	if got := consoleEval(`$0.id + ',' + $1.textContent`); got != `"title,two"` {
		t.Fatalf("$0,$1 after a second selection: %s", got)
	}
	if got := string(evalValue(t, a, ctx, `typeof $0 + ',' + ('$0' in window)`)); got != `"undefined,false"` {
		t.Fatalf("the page's global $0 outside the Console's API: %s", got)
	}
	a.MustCall("DOM.setInspectedNode", map[string]any{"nodeId": 4}) // a placeholder: answered, nothing selected
}

// inspectPage serves one test page (domPageHTML) and opens it in a
// headless Chromium with a debugging port; it returns a connection to that
// tab's own CDP, for trusted input (Input.dispatchMouseEvent).
func inspectPage(t *testing.T, reg *sourceproto.Registry, token sourceproto.Token, title string) *chromiumTab {
	t.Helper()
	h, err := carrier.NewClientHandler(carrier.ClientOptions{Registry: reg, Token: token, ClientJS: clientjs.ClientJS(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	page := domPageHTML(title, ln.Addr().String(), token)
	mux := http.NewServeMux()
	mux.Handle("/client", h)
	mux.Handle("/client.js", h)
	mux.HandleFunc("/0", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	dir := t.TempDir()
	cmd := exec.Command(chromiumBinary(t), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--remote-debugging-port=0",
		"--user-data-dir="+dir, "--window-size=800,600", "http://"+ln.Addr().String()+"/0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		proctest.AssertGone(t, cmd.Process.Pid)
	})
	var port string
	for deadline := time.Now().Add(30 * time.Second); port == ""; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort")); err == nil {
			port, _, _ = strings.Cut(string(b), "\n")
		}
		if time.Now().After(deadline) {
			t.Fatal("chromium wrote no DevToolsActivePort in 30 s")
		}
	}
	var ws string
	for deadline := time.Now().Add(30 * time.Second); ws == ""; time.Sleep(50 * time.Millisecond) {
		var targets []struct {
			Type string `json:"type"`
			URL  string `json:"webSocketDebuggerUrl"`
		}
		if res, err := http.Get("http://127.0.0.1:" + port + "/json/list"); err == nil {
			_ = json.NewDecoder(res.Body).Decode(&targets)
			res.Body.Close()
		}
		for _, tg := range targets {
			if tg.Type == "page" {
				ws = tg.URL
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("chromium lists no page target")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	return &chromiumTab{t: t, c: c}
}

// chromiumTab is one tab's own CDP connection, one call at a time (events
// are read and dropped); call returns the answer's result.
type chromiumTab struct {
	t  *testing.T
	c  *websocket.Conn
	id int
}

func (tab *chromiumTab) call(method string, params any) json.RawMessage {
	tab.t.Helper()
	tab.id++
	b, _ := json.Marshal(map[string]any{"id": tab.id, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tab.c.Write(ctx, websocket.MessageText, b); err != nil {
		tab.t.Fatal(err)
	}
	for {
		_, m, err := tab.c.Read(ctx)
		if err != nil {
			tab.t.Fatalf("%s: %v", method, err)
		}
		var ans struct {
			ID     int             `json:"id"`
			Error  json.RawMessage `json:"error"`
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(m, &ans)
		if ans.ID == tab.id {
			if ans.Error != nil {
				tab.t.Fatalf("chromium %s: %s", method, m)
			}
			return ans.Result
		}
	}
}

// click is the user's click at x, y: the pointer moves there, presses and
// releases.
func (tab *chromiumTab) click(x, y float64) {
	tab.t.Helper()
	tab.call("Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": x, "y": y})
	tab.call("Input.dispatchMouseEvent", map[string]any{"type": "mousePressed", "x": x, "y": y, "button": "left", "clickCount": 1})
	tab.call("Input.dispatchMouseEvent", map[string]any{"type": "mouseReleased", "x": x, "y": y, "button": "left", "clickCount": 1})
}

// Inspect mode: with Overlay.setInspectMode on, the user's pointer over an
// element highlights it in the page, and the user's click on it sends the
// window Overlay.inspectNodeRequested with its backend id, which the
// window pushes (pushNodesByBackendIdsToFrontend) to the page's <h1> —
// while the page's own mousedown and click handlers see nothing. With the
// mode none, the highlight goes and the page's handlers see clicks again.
func TestOverlayInspectModePicksElement(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "Inspect mode page"
	tab := inspectPage(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	tr := newDOMTree(t, a)
	var at struct{ X, Y float64 }
	if err := json.Unmarshal(evalValue(t, a, ctx, `(function () {
		window.__clicks = 0;
		document.querySelector('#title').addEventListener('click', function () { window.__clicks++; });
		document.addEventListener('mousedown', function () { window.__clicks++; }, true);
		var r = document.querySelector('#title').getBoundingClientRect();
		return { X: r.left + r.width / 2, Y: r.top + r.height / 2 }; })()`), &at); err != nil {
		t.Fatal(err)
	}
	a.MustCall("Overlay.setInspectMode", map[string]any{"mode": "searchForNode", "highlightConfig": map[string]any{"showInfo": true}})
	tab.call("Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": at.X, "y": at.Y})
	if got := strings.Trim(string(evalValue(t, a, ctx, overlayCount)), `"`); got != "1:none:true" {
		t.Fatalf("the pointer over the <h1> in inspect mode: %q overlay hosts, want 1:none:true", got)
	}
	tab.click(at.X, at.Y)
	m := a.ExpectAnyEvent("Overlay.inspectNodeRequested", func(cdptest.Msg) bool { return true })
	var ev struct {
		BackendNodeID int64 `json:"backendNodeId"`
	}
	_ = json.Unmarshal(m.Params, &ev)
	p := a.MustCall("DOM.pushNodesByBackendIdsToFrontend", map[string]any{"backendNodeIds": []int64{ev.BackendNodeID}})
	tr.sync()
	if n := tr.byID[ev.BackendNodeID]; n == nil || n.NodeName != "H1" || compact(t, p.Result) != `{"nodeIds":[`+strconv.FormatInt(ev.BackendNodeID, 10)+`]}` {
		t.Fatalf("inspectNodeRequested %s pushed as %s; the window's tree has %+v", m.Params, p.Raw, n)
	}
	if got := string(evalValue(t, a, ctx, `window.__clicks`)); got != "0" {
		t.Fatalf("the page's handlers saw %s events of the inspect-mode click, want 0", got)
	}
	a.MustCall("Overlay.setInspectMode", map[string]any{"mode": "none"})
	if got := string(evalValue(t, a, ctx, overlayCount)); got != `"0"` {
		t.Fatalf("after inspect mode none the page has %s overlay hosts", got)
	}
	tab.click(at.X, at.Y)
	if got := string(evalValue(t, a, ctx, `window.__clicks`)); got != "2" {
		t.Fatalf("after inspect mode the page's handlers saw %s events of a click, want 2 (mousedown, click)", got)
	}
}

// A node a page logs, as the Console uses it: hovering it highlights it
// in its page (Overlay.highlightNode by the console argument's objectId),
// and "Store as global variable" (the frontend's saveToTempVariable: the
// context's global object by `this`, then a callFunctionOn on it with the
// node as argument) makes temp1 the page's node in the page.
func TestConsoleNodeHoverAndStoreAsGlobal(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "Logged node page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	newDOMTree(t, a)
	evalValue(t, a, ctx, `console.log('the heading', document.getElementById('title')), 1`)
	m := a.ExpectAnyEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `"the heading"`) })
	var ev struct {
		Args []remoteObject `json:"args"`
	}
	if err := json.Unmarshal(m.Params, &ev); err != nil || len(ev.Args) != 2 || ev.Args[1].Subtype != "node" || ev.Args[1].ObjectID == "" {
		t.Fatalf("the logged node: %s", m.Raw)
	}
	node := ev.Args[1].ObjectID

	// Hover: the frontend highlights a console node by its objectId.
	a.MustCall("Overlay.highlightNode", map[string]any{"objectId": node, "highlightConfig": map[string]any{"showInfo": true}})
	if got := strings.Trim(string(evalValue(t, a, ctx, overlayCount)), `"`); got != "1:none:true" {
		t.Fatalf("hovering the logged node: the page has %q overlay hosts, want 1:none:true", got)
	}
	a.MustCall("Overlay.hideHighlight", nil)

	// Store as global variable.
	global := evalIn(t, a, ctx, `this`, "")
	save := `function saveVariable(value) { const prefix = 'temp'; let index = 1; while ((prefix + index) in this) ++index;
		const name = prefix + index; this[name] = value; return name; }`
	r := a.MustCall("Runtime.callFunctionOn", map[string]any{"objectId": global.Result.ObjectID, "functionDeclaration": save,
		"arguments": []map[string]any{{"objectId": node}}, "silent": true, "returnByValue": true})
	var ans evalAnswer
	if err := json.Unmarshal(r.Result, &ans); err != nil || string(ans.Result.Value) != `"temp1"` {
		t.Fatalf("Store as global variable: %s", r.Raw)
	}
	if got := string(evalValue(t, a, ctx, `temp1 === document.getElementById('title')`)); got != "true" {
		t.Errorf("temp1 in the page is not the logged node: %s", got)
	}
}
