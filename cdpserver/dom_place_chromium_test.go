//go:build linux

package cdpserver

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// The Elements tree's rename, drag and drop and copy, the hit test by
// point and the Styles pane's class names, against a real page through the
// real worker (fixture: dom_fixture_chromium_test.go). Each answer's node
// is compared with the window's tree (built from the events only) and the
// page's own DOM.

// nodeIDOf is a DOM answer's nodeId.
func nodeIDOf(t *testing.T, m cdptest.Msg) int64 {
	t.Helper()
	var a struct {
		NodeID int64 `json:"nodeId"`
	}
	if err := json.Unmarshal(m.Result, &a); err != nil || a.NodeID == 0 {
		t.Fatalf("%s: no nodeId", m.Raw)
	}
	return a.NodeID
}

func TestDOMSetNodeNameMoveToCopyTo(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM place page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	tr := newDOMTree(t, a)
	body := expanded(t, tr, ctx)
	h1, ul, p := findNode(body, named("H1")), findNode(body, named("UL")), findNode(body, named("P"))

	// Rename: a new <h2> with the <h1>'s attributes and text, a new id.
	h2 := nodeIDOf(t, a.MustCall("DOM.setNodeName", map[string]any{"nodeId": h1.NodeID, "name": "h2"}))
	tr.sync() // the old node's removal and the new one's insertion came first
	if n := tr.byID[h2]; h2 == h1.NodeID || n == nil || n.NodeName != "H2" || !slices.Equal(n.Attributes, []string{"id", "title", "class", "big"}) ||
		tr.byID[h1.NodeID] != nil {
		t.Fatalf("setNodeName answered %d (the <h1> was %d): in the window %+v; the <h1> still there: %v", h2, h1.NodeID, tr.byID[h2], tr.byID[h1.NodeID] != nil)
	}
	// Drag and drop: the <p> before the <ul>'s first <li>.
	li1 := ul.Children[0].NodeID
	moved := nodeIDOf(t, a.MustCall("DOM.moveTo", map[string]any{"nodeId": p.NodeID, "targetNodeId": ul.NodeID, "insertBeforeNodeId": li1}))
	tr.sync()
	if n := tr.byID[moved]; n == nil || n.NodeName != "P" || ul.Children[0] != n || tr.byID[p.NodeID] != nil {
		t.Fatalf("moveTo answered %d: in the window %+v, the <ul>'s first child %+v", moved, n, ul.Children[0])
	}
	// Copy: the <h2> last in the <ul>.
	copied := nodeIDOf(t, a.MustCall("DOM.copyTo", map[string]any{"nodeId": h2, "targetNodeId": ul.NodeID}))
	tr.sync()
	if n := tr.byID[copied]; n == nil || n.NodeName != "H2" || ul.Children[len(ul.Children)-1] != n || tr.byID[h2] == nil {
		t.Fatalf("copyTo answered %d: in the window %+v; the original kept: %v", copied, n, tr.byID[h2] != nil)
	}
	want := `"<h2 id=\"title\" class=\"big\">DOM place page</h2><ul id=\"list\"><p>text <b>bold</b></p><li>one</li><li>two</li><h2 id=\"title\" class=\"big\">DOM place page</h2></ul><!-- a comment -->"`
	if got := string(evalValue(t, a, ctx, `document.body.innerHTML`)); got != want {
		t.Fatalf("the page's <body> after rename, move and copy:\n%s\nwant\n%s", got, want)
	}
	doc := tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument
	tr.expandAll(doc)
	if got, want := windowDOM(doc), pageTreeText(t, a, ctx); got != want {
		t.Fatalf("the window's tree:\n%s\npage:\n%s", got, want)
	}
	// Refusals, with the page unchanged.
	for _, tc := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{"DOM.moveTo", map[string]any{"nodeId": ul.NodeID, "targetNodeId": moved}, "the page refused the edit"}, // into its own child
		{"DOM.moveTo", map[string]any{"nodeId": moved, "targetNodeId": ul.NodeID, "insertBeforeNodeId": h2}, "not a child of targetNodeId"},
		{"DOM.moveTo", map[string]any{"nodeId": moved, "targetNodeId": 4}, "placeholders"},
		{"DOM.moveTo", map[string]any{"nodeId": moved}, "targetNodeId is required"},
		{"DOM.setNodeName", map[string]any{"nodeId": moved, "name": "no good"}, "the page refused the edit"},
		{"DOM.setNodeName", map[string]any{"nodeId": findNode(doc, named("HTML")).NodeID, "name": "x"}, "<html>"},
		{"DOM.copyTo", map[string]any{"nodeId": moved, "targetNodeId": tr.byID[moved].Children[0].NodeID}, "has no children"},
		{"DOM.undo", map[string]any{}, "no undo history"},
		{"DOM.redo", map[string]any{}, "no undo history"},
	} {
		if got := domError(t, a, tc.method, tc.params); !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: %q, want it to say %q", tc.method, tc.params, got, tc.want)
		}
	}
	if r := a.MustCall("DOM.markUndoableState", nil); compact(t, r.Result) != `{}` {
		t.Errorf("DOM.markUndoableState: %s", r.Raw)
	}
	if got := string(evalValue(t, a, ctx, `document.body.innerHTML`)); got != want {
		t.Fatalf("the page's <body> after the refused edits:\n%s", got)
	}
}

// DOM.getNodeForLocation hit-tests as Chrome (pointer-events: none is
// passed through unless ignorePointerEventsNone), never answers the
// overlay's own element, and answers the window's ids with the page's
// frame; DOM.collectClassNamesFromSubtree lists the subtree's classes.
func TestDOMGetNodeForLocationAndClassNames(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM locate page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	tr := newDOMTree(t, a)
	body := expanded(t, tr, ctx)
	h1 := findNode(body, named("H1"))
	var at []float64
	if err := json.Unmarshal(evalValue(t, a, ctx, `(function () { var r = document.querySelector('h1').getBoundingClientRect(); return [r.left + 5, r.top + r.height / 2]; })()`), &at); err != nil {
		t.Fatal(err)
	}
	locate := func(ignore bool) (id int64, frame string, raw string) {
		m := a.MustCall("DOM.getNodeForLocation", map[string]any{"x": at[0], "y": at[1], "ignorePointerEventsNone": ignore})
		var ans struct {
			BackendNodeID int64  `json:"backendNodeId"`
			NodeID        int64  `json:"nodeId"`
			FrameID       string `json:"frameId"`
		}
		_ = json.Unmarshal(m.Result, &ans)
		if ans.BackendNodeID != ans.NodeID {
			t.Errorf("getNodeForLocation: backendNodeId %d, nodeId %d: they are one id per window", ans.BackendNodeID, ans.NodeID)
		}
		tr.sync()
		return ans.NodeID, ans.FrameID, string(m.Raw)
	}
	// The overlay shows over the <h1> meanwhile: it never answers.
	a.MustCall("Overlay.highlightNode", map[string]any{"nodeId": h1.NodeID, "highlightConfig": map[string]any{"showInfo": true}})
	if id, frame, raw := locate(false); id != h1.NodeID || frame != ctx.Context.AuxData.FrameID {
		t.Fatalf("getNodeForLocation at the <h1>: %s, want nodeId %d and frame %s", raw, h1.NodeID, ctx.Context.AuxData.FrameID)
	}
	evalValue(t, a, ctx, `document.querySelector('h1').style.pointerEvents = 'none', 1`)
	tr.sync()
	if id, _, raw := locate(false); tr.byID[id] == nil || tr.byID[id].NodeName != "BODY" {
		t.Fatalf("getNodeForLocation at a pointer-events: none <h1>: %s, want the <body> below it", raw)
	}
	if id, _, raw := locate(true); id != h1.NodeID {
		t.Fatalf("getNodeForLocation with ignorePointerEventsNone at a pointer-events: none <h1>: %s, want %d", raw, h1.NodeID)
	}
	if got := string(evalValue(t, a, ctx, `document.adoptedStyleSheets.length`)); got != "0" {
		t.Fatalf("the page's adoptedStyleSheets after the hit test: %s, want 0", got)
	}
	if got := domError(t, a, "DOM.getNodeForLocation", map[string]any{"x": -50, "y": -50}); !strings.Contains(got, "no node found") {
		t.Errorf("getNodeForLocation outside the viewport: %q", got)
	}

	evalValue(t, a, ctx, `document.querySelector('li').className = 'b a big', document.querySelector('b').className = 'z', 1`)
	r := a.MustCall("DOM.collectClassNamesFromSubtree", map[string]any{"nodeId": body.NodeID})
	if got := compact(t, r.Result); got != `{"classNames":["a","b","big","z"]}` {
		t.Errorf("collectClassNamesFromSubtree of <body>: %s", got)
	}
	r = a.MustCall("DOM.collectClassNamesFromSubtree", map[string]any{"nodeId": findNode(body, named("P")).NodeID})
	if got := compact(t, r.Result); got != `{"classNames":["z"]}` {
		t.Errorf("collectClassNamesFromSubtree of <p>: %s", got)
	}
	r = a.MustCall("DOM.collectClassNamesFromSubtree", map[string]any{"nodeId": 4})
	if got := compact(t, r.Result); got != `{"classNames":[]}` {
		t.Errorf("collectClassNamesFromSubtree of the host <body>: %s", got)
	}
}

// With two pages in the window: a node of one page cannot be moved or
// copied into (or before a node of) the other, and a point names no one
// page; both are refused with the reason, and neither page changes.
func TestDOMPlaceAcrossPagesRefused(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	titles := []string{"DOM place one", "DOM place two"}
	domPages(t, reg, token, titles...)
	a, ctxs := domWindow(t, w, "A", titles...)
	tr := newDOMTree(t, a)
	one, two := expanded(t, tr, ctxs[titles[0]]), expanded(t, tr, ctxs[titles[1]])
	h1, ul, li := findNode(one, named("H1")).NodeID, findNode(two, named("UL")).NodeID, findNode(two, named("LI")).NodeID
	for _, tc := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{"DOM.moveTo", map[string]any{"nodeId": h1, "targetNodeId": ul}, "nodes cannot cross pages"},
		{"DOM.copyTo", map[string]any{"nodeId": h1, "targetNodeId": ul}, "nodes cannot cross pages"},
		{"DOM.moveTo", map[string]any{"nodeId": h1, "targetNodeId": findNode(one, named("UL")).NodeID, "insertBeforeNodeId": li}, "nodes cannot cross pages"},
		{"DOM.getNodeForLocation", map[string]any{"x": 10, "y": 10}, "this window shows 2 pages"},
	} {
		if got := domError(t, a, tc.method, tc.params); !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: %q, want it to say %q", tc.method, tc.params, got, tc.want)
		}
	}
	for _, title := range titles {
		if got := string(evalValue(t, a, ctxs[title], `document.querySelectorAll('h1').length + ',' + document.querySelectorAll('li').length`)); got != `"1,2"` {
			t.Errorf("page %q after the refused moves: h1s, lis = %s", title, got)
		}
	}
}
