package cdpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return buf.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Every entry of the method table is reachable and answers as the entry
// says: a local answer its exact shape, a named no-op its literal, a
// refusal -32000 with its reason, a routed method Node's answer (not
// -32601); anything else is -32601. The cases come from the table itself.
func TestMethodTableAnswers(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	c := w.dial("A")
	srv := w.srv
	// Local answers depend on the worker's state; with no client page:
	wantLocal := map[string]func() []byte{
		"Page.enable":          func() []byte { return []byte(`{}`) },
		"Page.disable":         func() []byte { return []byte(`{}`) },
		"Page.getResourceTree": func() []byte { return srv.resourceTree(nil) },
		"Page.getFrameTree":    srv.frameTreeAnswer,
		"Target.getTargetInfo": srv.targetInfo,
		"Network.enable":       func() []byte { return []byte(`{}`) },
		"Network.disable":      func() []byte { return []byte(`{}`) },
		// Without flatten: no child sessions, {} as before (threads.go).
		"Target.setAutoAttach": func() []byte { return []byte(`{}`) },
		"DOM.enable":           func() []byte { return []byte(`{}`) },
		"DOM.disable":          func() []byte { return []byte(`{}`) },
		// The host's empty document, no page (pagerealm/dom.go).
		"DOM.getDocument":                     func() []byte { return []byte(strings.ReplaceAll(hostDocumentAnswer, "TARGET", srv.targetID)) },
		"DOM.pushNodesByBackendIdsToFrontend": func() []byte { return []byte(`{"nodeIds":[]}`) },
		"DOM.discardSearchResults":            func() []byte { return []byte(`{}`) },
		// No highlight shown, no page to inspect (pagerealm/overlay.go).
		"Overlay.hideHighlight":  func() []byte { return []byte(`{}`) },
		"Overlay.setInspectMode": func() []byte { return []byte(`{}`) },
		// As the browser target answers it (browser_target.go).
		"Browser.getVersion": srv.versionAnswer,
	}
	// Local answers that are errors without a client page.
	wantLocalError := map[string]string{
		"Page.getResourceContent":       `no frame "": the page has gone`,
		"Network.getResponseBody":       `Network.getResponseBody: params must be {"requestId": <string>}`,
		"Network.getRequestPostData":    `Network.getRequestPostData: params must be {"requestId": <string>}`,
		"DOM.describeNode":              "DOM.describeNode: give one of nodeId, backendNodeId, objectId",
		"DOM.getOuterHTML":              "DOM.getOuterHTML: give one of nodeId, backendNodeId, objectId",
		"DOM.resolveNode":               "DOM.resolveNode: give one of nodeId, backendNodeId, objectId",
		"DOM.requestNode":               "DOM.requestNode: objectId is required",
		"DOMDebugger.getEventListeners": "DOMDebugger.getEventListeners: objectId is required",
		"DOM.performSearch":             "DOM.performSearch: query is required",
		"DOM.getSearchResults":          `DOM.getSearchResults: no search "" in this window (discarded, or the document was asked for again)`,
		"DOM.getFrameOwner":             `DOM.getFrameOwner: no frame "" in this window's document (ask DOM.getDocument first, or the page has gone)`,
		"DOM.getBoxModel":               "DOM.getBoxModel: give one of nodeId, backendNodeId, objectId",
		"Overlay.highlightNode":         "Overlay.highlightNode: give one of nodeId, backendNodeId, objectId",
		"Overlay.highlightRect":         "Overlay.highlightRect: the window's document holds 0 pages and no highlight: a rect names no page, so highlight a node of the page first (Overlay.highlightNode)",
	}
	// The CSS methods of pages (pagerealm/css.go), with no page and no params.
	for _, m := range []string{"getMatchedStylesForNode", "getComputedStyleForNode", "getInlineStylesForNode",
		"forcePseudoState", "getBackgroundColors", "getPlatformFontsForNode"} {
		wantLocalError["CSS."+m] = "CSS." + m + ": node id 0 is not a node id (ids come from DOM.getDocument and DOM.setChildNodes)"
	}
	for _, m := range []string{"getStyleSheetText", "addRule", "setRuleSelector", "setMediaText", "setSupportsText"} {
		wantLocalError["CSS."+m] = "CSS." + m + `: no style sheet "" in this window (ids come from CSS.styleSheetAdded and CSS.getMatchedStylesForNode)`
	}
	wantLocalError["CSS.setStyleTexts"] = "CSS.setStyleTexts: give exactly one edit with styleSheetId, range and text (the Styles pane sends one at a time)"
	wantLocalError["CSS.createStyleSheet"] = `CSS.createStyleSheet: no frame "" in this window's document (ask DOM.getDocument first, or the page has gone)`
	for _, m := range []string{"requestChildNodes", "setAttributeValue", "setAttributesAsText", "removeAttribute", "setNodeValue", "removeNode", "setOuterHTML", "setInspectedNode"} {
		wantLocalError["DOM."+m] = "DOM." + m + ": node id 0 is not a node id (ids come from DOM.getDocument and DOM.setChildNodes)"
	}
	for _, m := range []string{"setNodeName", "moveTo", "copyTo", "collectClassNamesFromSubtree"} {
		wantLocalError["DOM."+m] = "DOM." + m + ": node id 0 is not a node id (ids come from DOM.getDocument and DOM.setChildNodes)"
	}
	wantLocalError["DOM.getNodeForLocation"] = "DOM.getNodeForLocation: no page is connected: the host has no DOM to hit-test" // DOM.getDocument ran before, in sorted order

	for _, method := range sortedKeys(methods) {
		e := methods[method]
		t.Run(method, func(t *testing.T) {
			m := c.Call(method, map[string]any{})
			switch e.kind {
			case answerLocal:
				if msg, ok := wantLocalError[method]; ok {
					if m.Error == nil || m.Error.Code != codeServerError || m.Error.Message != msg {
						t.Fatalf("answer %s, want -32000 %q", m.Raw, msg)
					}
					return
				}
				want, ok := wantLocal[method]
				if !ok {
					t.Fatalf("local entry %s has no expected answer in wantLocal", method)
				}
				if m.Error != nil || compact(t, m.Result) != compact(t, want()) {
					t.Fatalf("answer %s, want result %s", m.Raw, want())
				}
			case answerNoop:
				if m.Error != nil || compact(t, m.Result) != compact(t, []byte(e.result)) {
					t.Fatalf("answer %s, want result %s", m.Raw, e.result)
				}
			case answerRefusal:
				if m.Error == nil || m.Error.Code != codeServerError || m.Error.Message != e.reason {
					t.Fatalf("answer %s, want -32000 %q", m.Raw, e.reason)
				}
			case answerRouted:
				// Relayed to Node, which knows the method: its answer is a
				// result or a parameter error, never "wasn't found".
				if m.Error != nil && m.Error.Code == codeMethodNotFound {
					t.Fatalf("answer %s: routed to no one who knows it", m.Raw)
				}
			default:
				t.Fatalf("entry without a kind: %+v", e)
			}
		})
	}
	for _, method := range []string{"Bogus.method", "DOMSnapshot.captureSnapshot", "Page.nonexistent", "Runtime.noSuchThing"} {
		t.Run("notfound/"+method, func(t *testing.T) {
			m := c.Call(method, nil)
			want := "'" + method + "' wasn't found"
			if m.Error == nil || m.Error.Code != codeMethodNotFound || m.Error.Message != want {
				t.Fatalf("answer %s, want -32601 %q", m.Raw, want)
			}
		})
	}
}

// The table's entries are well formed: what a kind needs is there, and
// nothing a kind would ignore is set.
func TestMethodTableShape(t *testing.T) {
	for _, method := range sortedKeys(methods) {
		e := methods[method]
		domain, name, ok := strings.Cut(method, ".")
		if !ok || domain == "" || name == "" || strings.Contains(name, ".") {
			t.Errorf("%q is not Domain.method", method)
		}
		var obj map[string]any
		switch {
		case e.kind == answerLocal && e.local == nil,
			e.kind == answerNoop && json.Unmarshal([]byte(e.result), &obj) != nil,
			e.kind == answerRefusal && e.reason == "":
			t.Errorf("%s: %v entry lacks its answer", method, e.kind)
		case e.kind != answerRouted && (e.hook != nil || e.after != nil || e.before != nil || e.hostParams != nil ||
			e.page != pageRule{} || e.watch != watchNo || e.keys != 0):
			t.Errorf("%s: hooks, a pages' column or a realm key on an entry that is not routed are never used", method)
		case e.page.Runtime != nil && (e.page.Answer != pageAgent || domain != "Runtime"),
			(e.page.Script != nil) != (e.page.Answer == pageScriptRead),
			e.page.Answer == pageRefusal && e.page.Reason == "",
			e.page.Answer == pageLiteral && json.Unmarshal([]byte(e.page.Result), &obj) != nil:
			t.Errorf("%s: the pages' column %+v is not well formed", method, e.page)
		case e.kind == answerRouted:
			if _, ok := nodeDomains[domain]; !ok {
				t.Errorf("%s: routed, but Node does not serve %s", method, domain)
			}
		}
	}
}

// The page scaffold: the host context belongs to the main frame, which is
// the target itself.
func TestPageScaffoldMatchesHostContext(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	c := w.dial("A")
	c.MustCall("Page.enable", nil)
	tree := c.MustCall("Page.getResourceTree", nil)
	var rt struct {
		FrameTree struct {
			Frame struct {
				ID, URL, MimeType, LoaderID, SecurityOrigin string
			} `json:"frame"`
			Resources []struct{ URL, Type string } `json:"resources"`
		} `json:"frameTree"`
	}
	if err := json.Unmarshal(tree.Result, &rt); err != nil {
		t.Fatal(err)
	}
	// The frame's own URL is listed, as a non-Document: otherwise the
	// frontend adds a Document for it, which Sources shows and cannot open.
	if r := rt.FrameTree.Resources; len(r) != 1 || r[0].URL != rt.FrameTree.Frame.URL || r[0].Type == "Document" {
		t.Fatalf("host frame resources %+v: want one non-Document entry for the frame URL %q", r, rt.FrameTree.Frame.URL)
	}
	f := rt.FrameTree.Frame
	if f.ID != w.srv.TargetID() || f.MimeType != "text/html" || f.LoaderID == "" || rt.FrameTree.Resources == nil {
		t.Fatalf("bad frame tree %s", tree.Result)
	}
	if f.URL == "file://"+w.script {
		t.Fatalf("frame url %q equals the host script's url: Sources would list it twice", f.URL)
	}
	c.MustCall("Runtime.enable", nil)
	ctx := c.ExpectEvent("Runtime.executionContextCreated", nil)
	var ec struct {
		Context struct {
			ID       int    `json:"id"`
			UniqueID string `json:"uniqueId"`
			AuxData  struct {
				IsDefault bool   `json:"isDefault"`
				FrameID   string `json:"frameId"`
			} `json:"auxData"`
		} `json:"context"`
	}
	json.Unmarshal(ctx.Params, &ec)
	if !ec.Context.AuxData.IsDefault || ec.Context.AuxData.FrameID != f.ID {
		t.Fatalf("host context %s: want auxData {isDefault:true, frameId:%q}", ctx.Params, f.ID)
	}
	// DevTools evaluates by uniqueContextId: it must route to the host.
	m := c.MustCall("Runtime.evaluate", map[string]any{"expression": "40+2", "uniqueContextId": ec.Context.UniqueID})
	if !strings.Contains(string(m.Result), `"value":42`) {
		t.Fatalf("evaluate by uniqueContextId: %s", m.Raw)
	}
	ti := c.MustCall("Target.getTargetInfo", nil)
	var info struct {
		TargetInfo struct {
			TargetID, Type, Title, URL string
			Attached                   bool
		} `json:"targetInfo"`
	}
	json.Unmarshal(ti.Result, &info)
	if info.TargetInfo.TargetID != w.srv.TargetID() || info.TargetInfo.Type != "page" || !info.TargetInfo.Attached ||
		info.TargetInfo.Title != "host.js" || info.TargetInfo.URL != "file://"+w.script {
		t.Fatalf("bad target info %s", ti.Result)
	}
	// A negative context id names a client realm; none is registered.
	m = c.Call("Runtime.evaluate", map[string]any{"expression": "1", "contextId": -5})
	if m.Error == nil || !strings.Contains(m.Error.Message, "cannot find context") {
		t.Fatalf("evaluate in unknown client context: %s", m.Raw)
	}
}

// Discovery: one page target, Host checks, Origin checks, unknown ids.
func TestDiscoveryAndGuards(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	resp, err := w.get("/json/list", "")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var list []targetJSON
	if err := json.Unmarshal(body, &list); err != nil || len(list) != 1 {
		t.Fatalf("/json/list = %s", body)
	}
	tj := list[0]
	if tj.Type != "page" || tj.ID != w.srv.TargetID() || tj.WebSocketDebuggerURL != w.srv.PageWebSocketURL() ||
		!strings.HasPrefix(tj.DevtoolsFrontendURL, "devtools://devtools/bundled/devtools_app.html?ws=127.0.0.1:") {
		t.Fatalf("bad target %+v", tj)
	}
	for _, path := range []string{"/json", "/json/version", "/json/protocol"} {
		resp, err := w.get(path, "localhost:9229")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %v %v", path, resp, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !json.Valid(b) {
			t.Fatalf("GET %s: not JSON", path)
		}
		if path == "/json/protocol" && (!bytes.Contains(b, []byte(`"Runtime"`)) || !bytes.Contains(b, []byte(`"getResourceTree"`))) {
			t.Fatalf("/json/protocol lacks the host's or the worker's domains")
		}
	}
	for _, host := range []string{"evil.example:9229", "evil.example", "127.0.0.1.nip.io:9229"} {
		resp, err := w.get("/json/list", host)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "DNS rebinding") {
			t.Fatalf("Host %q on /json/list: %d %s", host, resp.StatusCode, b)
		}
		if _, err := cdptest.TryDial("evil", w.srv.PageWebSocketURL(), &cdptest.DialOptions{Host: host}); err == nil ||
			!strings.Contains(err.Error(), "400") {
			t.Fatalf("Host %q on the upgrade: %v, want HTTP 400", host, err)
		}
	}
	if _, err := cdptest.TryDial("evil", w.srv.PageWebSocketURL(), &cdptest.DialOptions{
		Header: http.Header{"Origin": {"https://evil.example"}}}); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("foreign Origin: %v, want HTTP 403", err)
	}
	for _, origin := range []string{"devtools://devtools", "http://127.0.0.1:9222", "http://localhost:3000"} {
		c, err := cdptest.TryDial("ok", w.srv.PageWebSocketURL(), &cdptest.DialOptions{Header: http.Header{"Origin": {origin}}})
		if err != nil {
			t.Fatalf("Origin %q refused: %v", origin, err)
		}
		c.Conn().CloseNow()
	}
	if _, err := cdptest.TryDial("x", "ws://"+w.srv.Addr()+"/devtools/page/NOPE", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("unknown target id: %v, want HTTP 404", err)
	}
	resp, _ = w.get("/devtools/page/NOPE", "")
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown target id over plain GET: %d", resp.StatusCode)
	}
	resp.Body.Close()
}

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.1:0", "example.com:0"} {
		if ln, _, err := Listen(addr, false); err == nil {
			ln.Close()
			t.Fatalf("Listen(%q) succeeded", addr)
		} else if !strings.Contains(err.Error(), "loopback") {
			t.Fatalf("Listen(%q): %v does not explain", addr, err)
		}
	}
	ln, _, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The port is taken now: fallback picks another one and says so.
	ln2, fellBack, err := Listen(ln.Addr().String(), true)
	if err != nil || !fellBack {
		t.Fatalf("fallback: %v %v", fellBack, err)
	}
	ln2.Close()
	if _, _, err := Listen(ln.Addr().String(), false); err == nil {
		t.Fatal("a taken port without fallback succeeded")
	}
}

// hostDocumentAnswer is DOM.getDocument's answer with no page connected:
// the host's empty document (TARGET: the target id).
const hostDocumentAnswer = `{"root":{"nodeId":1,"backendNodeId":1,"nodeType":9,"nodeName":"#document","localName":"","nodeValue":"",` +
	`"childNodeCount":1,"children":[{"nodeId":2,"backendNodeId":2,"nodeType":1,"nodeName":"HTML","localName":"html","nodeValue":"",` +
	`"childNodeCount":2,"children":[{"nodeId":3,"backendNodeId":3,"nodeType":1,"nodeName":"HEAD","localName":"head","nodeValue":"",` +
	`"isSVG":false,"isScrollable":false,"affectedByStartingStyles":false},{"nodeId":4,"backendNodeId":4,"nodeType":1,"nodeName":"BODY",` +
	`"localName":"body","nodeValue":"","childNodeCount":1,"children":[{"nodeId":5,"backendNodeId":5,"nodeType":8,"nodeName":"#comment",` +
	`"localName":"","nodeValue":" The Node.js host has no DOM: each page connected to inspector-worker is a frame below. ",` +
	`"isSVG":false,"isScrollable":false,"affectedByStartingStyles":false}],"isSVG":false,"isScrollable":false,"affectedByStartingStyles":false}],` +
	`"isSVG":false,"isScrollable":false,"affectedByStartingStyles":false}],"frameId":"TARGET","isSVG":false,"isScrollable":false,` +
	`"affectedByStartingStyles":false}}`
