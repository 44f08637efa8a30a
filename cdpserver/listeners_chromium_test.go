//go:build linux

package cdpserver

import (
	"encoding/json"
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

// The Event Listeners pane with a real page (headless Chromium, the
// shipped client.js, the real worker): DOMDebugger.getEventListeners for a
// page's node and window, the handlers' places in the page's script, the
// pane's "Remove" (a Runtime.callFunctionOn in the page), and the limit:
// a listener added before client.js is not listed.

// listenersApp is the page's script file: each handler's place in it is
// what the pane must link to.
const listenersApp = `window.__clicks = 0;
function onButtonClick(e) {
  window.__clicks++;
}
var b = document.getElementById('b');
b.addEventListener('click', onButtonClick);
b.addEventListener('keydown', (e) => { window.__keys = (window.__keys || 0) + 1; }, { passive: true, once: true });
window.addEventListener('resize', function onResize() {}, true);
document.getElementById('s').addEventListener('mouseover', function onSpanOver() {});
`

// servePage serves html at / and files beside it, with the shipped
// client.js, and opens it in headless Chromium.
func servePage(t *testing.T, reg *sourceproto.Registry, token sourceproto.Token, html func(carrierAddr string) string, files map[string]string) {
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
	page := html(ln.Addr().String())
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	})
	for name, body := range files {
		ct := "text/javascript"
		if strings.HasSuffix(name, ".html") {
			ct = "text/html"
		}
		mux.HandleFunc("/"+name, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ct)
			_, _ = w.Write([]byte(body))
		})
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	cmd := exec.Command(chromiumBinary(t), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
		"--user-data-dir="+t.TempDir(), "http://"+ln.Addr().String()+"/")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		proctest.AssertGone(t, cmd.Process.Pid)
	})
}

// cdpListener is DOMDebugger.EventListener as the frontend reads it.
type cdpListener struct {
	Type            string       `json:"type"`
	UseCapture      bool         `json:"useCapture"`
	Passive         bool         `json:"passive"`
	Once            bool         `json:"once"`
	ScriptID        string       `json:"scriptId"`
	LineNumber      int          `json:"lineNumber"`
	ColumnNumber    int          `json:"columnNumber"`
	Handler         remoteObject `json:"handler"`
	OriginalHandler remoteObject `json:"originalHandler"`
	BackendNodeID   int64        `json:"backendNodeId"`
}

func eventListeners(t *testing.T, c *cdptest.Client, params map[string]any) []cdpListener {
	t.Helper()
	m := c.MustCall("DOMDebugger.getEventListeners", params)
	var ans struct {
		Listeners []cdpListener `json:"listeners"`
	}
	if err := json.Unmarshal(m.Result, &ans); err != nil || ans.Listeners == nil {
		t.Fatalf("DOMDebugger.getEventListeners: %s", m.Raw)
	}
	return ans.Listeners
}

// handlerName is the handler function's name, read in the page through
// its objectId.
func handlerName(t *testing.T, c *cdptest.Client, h remoteObject) string {
	t.Helper()
	m := c.MustCall("Runtime.callFunctionOn", map[string]any{"objectId": h.ObjectID,
		"functionDeclaration": "function () { return this.name; }", "returnByValue": true})
	var ans evalAnswer
	if err := json.Unmarshal(m.Result, &ans); err != nil || ans.ExceptionDetails != nil {
		t.Fatalf("the handler's name: %s", m.Raw)
	}
	var s string
	_ = json.Unmarshal(ans.Result.Value, &s)
	return s
}

// TestDOMDebuggerEventListeners: a button's listeners (added by a script
// file after client.js, and an onclick attribute), the window's, a subtree
// with depth -1; each handler's place is its line and column in app.js by
// the window's scriptId for it, or V8's "no script" ("0") where the page
// cannot name one (an attribute, an inline script); "Remove" as the
// frontend does it; a once listener gone after its event; a listener added
// before client.js loaded is not listed (the documented limit).
func TestDOMDebuggerEventListeners(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "Listeners page"
	servePage(t, reg, token, func(addr string) string {
		return `<!doctype html><html><head><title>` + title + `</title>` +
			`<script>document.addEventListener('early', function early() {});</script>` +
			`<script src="/client.js" data-endpoint="ws://` + addr + `/client" data-token="` + token.Reveal() + `"></script>` +
			`</head><body><button id="b" onclick="window.__attr = 1">go</button><div id="d"><p><span id="s">x</span></p></div>` +
			`<script>document.getElementById('d').addEventListener('focus', function inlineFocus() {});</script>` +
			`<script src="/app.js"></script></body></html>`
	}, map[string]string{"app.js": listenersApp})
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	a.MustCall("Debugger.enable", nil)
	sp := a.ExpectAnyEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `/app.js"`) })
	var script struct {
		ScriptID string `json:"scriptId"`
	}
	_ = json.Unmarshal(sp.Params, &script)
	newDOMTree(t, a)
	evalValue(t, a, ctx, `new Promise((r) => { const f = () => document.readyState === 'complete' ? r(1) : setTimeout(f, 20); f(); })`)

	button := evalIn(t, a, ctx, `document.getElementById('b')`, "event-listeners-panel").Result
	ls := eventListeners(t, a, map[string]any{"objectId": button.ObjectID})
	var got []string
	for _, l := range ls {
		got = append(got, l.Type)
	}
	if len(ls) != 3 {
		t.Fatalf("the button's listeners: %v, want click, keydown (app.js) and click (onclick)\n%+v", got, ls)
	}
	click, key, attr := ls[0], ls[1], ls[2]
	if click.Type != "click" || click.UseCapture || click.ScriptID != script.ScriptID || click.LineNumber != 1 || click.ColumnNumber != 0 {
		t.Errorf("click listener: %+v, want app.js (%s) line 1 column 0", click, script.ScriptID)
	}
	if name := handlerName(t, a, click.Handler); name != "onButtonClick" {
		t.Errorf("the click handler is %q", name)
	}
	if key.Type != "keydown" || !key.Passive || !key.Once || key.ScriptID != script.ScriptID || key.LineNumber != 6 ||
		key.ColumnNumber != strings.Index(strings.Split(listenersApp, "\n")[6], "(e) =>") {
		t.Errorf("keydown listener: %+v", key)
	}
	if attr.Type != "click" || attr.ScriptID != "0" || handlerName(t, a, attr.Handler) != "onclick" {
		t.Errorf("onclick attribute: %+v, want scriptId 0 (an attribute has no script the window knows)", attr)
	}

	// The window (the pane evaluates `self` in the node's page).
	win := evalIn(t, a, ctx, `self`, "event-listeners-panel").Result
	wl := eventListeners(t, a, map[string]any{"objectId": win.ObjectID})
	if len(wl) != 1 || wl[0].Type != "resize" || !wl[0].UseCapture || wl[0].LineNumber != 7 {
		t.Errorf("the window's listeners: %+v, want resize (capture) at app.js line 7 (the client's own are not listed)", wl)
	}
	// Added before client.js: not listed (the limit).
	doc := evalIn(t, a, ctx, `document`, "event-listeners-panel").Result
	if dl := eventListeners(t, a, map[string]any{"objectId": doc.ObjectID}); len(dl) != 0 {
		t.Errorf("the document's listeners: %+v, want none (its one was added before client.js)", dl)
	}
	// A subtree: the span's listener, named by its node.
	div := evalIn(t, a, ctx, `document.getElementById('d')`, "event-listeners-panel").Result
	sub := eventListeners(t, a, map[string]any{"objectId": div.ObjectID, "depth": -1})
	if len(sub) != 2 || sub[0].Type != "focus" || sub[0].ScriptID != "0" || sub[0].BackendNodeID != 0 ||
		sub[1].Type != "mouseover" || sub[1].BackendNodeID == 0 {
		t.Fatalf("#d with depth -1: %+v, want focus (inline script: no place) on #d and mouseover on the span", sub)
	}
	m := a.MustCall("DOM.pushNodesByBackendIdsToFrontend", map[string]any{"backendNodeIds": []int64{sub[1].BackendNodeID}})
	if !strings.Contains(string(m.Result), `"nodeIds":[`) || strings.Contains(string(m.Result), `[0]`) {
		t.Errorf("the span's backendNodeId does not push: %s", m.Raw)
	}

	// "Remove", as the frontend's EventListener.remove does it.
	remove := `function (type, listener, useCapture) { this.removeEventListener(type, listener, useCapture); if (this['on' + type]) this['on' + type] = undefined; }`
	a.MustCall("Runtime.callFunctionOn", map[string]any{"objectId": button.ObjectID, "functionDeclaration": remove,
		"arguments": []map[string]any{{"value": "click"}, {"objectId": click.OriginalHandler.ObjectID}, {"value": false}}})
	// The once listener fires and goes.
	if v := string(evalValue(t, a, ctx, `document.getElementById('b').dispatchEvent(new KeyboardEvent('keydown')),
		document.getElementById('b').click(), window.__clicks + ',' + window.__keys + ',' + (window.__attr || 0)`)); v != `"0,1,0"` {
		t.Errorf("clicks, keys, attribute handler runs after Remove: %s, want 0,1,0", v)
	}
	if after := eventListeners(t, a, map[string]any{"objectId": button.ObjectID}); len(after) != 0 {
		t.Errorf("the button's listeners after Remove and the once event: %+v, want none", after)
	}

	// Refusals, with a reason.
	for _, c := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"objectId": "-123.1.1"}, "Node.js host"},
		{map[string]any{}, "objectId is required"},
	} {
		m := a.Call("DOMDebugger.getEventListeners", c.params)
		if m.Error == nil || !strings.Contains(m.Error.Message, c.want) {
			t.Errorf("getEventListeners %v: %s, want an error with %q", c.params, m.Raw, c.want)
		}
	}
}
