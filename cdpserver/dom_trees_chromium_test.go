//go:build linux

package cdpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// The trees beside a page's document in the one tree — shadow roots,
// <template> contents, same-origin frames' documents — with real pages
// (the fixture: dom_fixture_chromium_test.go).

// shadowSetup gives page ctx an open shadow host, a closed one (kept in
// window.__closedRoots for the test's page serializer), a closed root made
// with another realm's attachShadow (as one made before client.js loaded:
// the client never saw it) and a <template>.
const shadowSetup = `(function () {
	window.__closedRoots = new WeakMap();
	var open = document.createElement('div'); open.id = 'open-host';
	open.attachShadow({ mode: 'open' }).innerHTML = '<span class="in-open">open text</span><slot></slot>';
	open.appendChild(document.createElement('i')).textContent = 'light';
	var closed = document.createElement('div'); closed.id = 'closed-host';
	var cr = closed.attachShadow({ mode: 'closed' });
	cr.innerHTML = '<b id="in-closed">closed text</b>';
	window.__closedRoots.set(closed, cr);
	window.__closedNode = cr.firstChild;
	var f = document.createElement('iframe'); document.body.appendChild(f);
	var hidden = document.createElement('div'); hidden.id = 'unseen-host';
	var ur = f.contentWindow.Element.prototype.attachShadow.call(hidden, { mode: 'closed' });
	ur.innerHTML = '<em>unseen</em>';
	window.__unseenNode = ur.firstChild;
	f.remove();
	var tpl = document.createElement('template'); tpl.id = 'tpl';
	tpl.innerHTML = '<p class="in-template">template text</p>';
	document.body.append(open, closed, hidden, tpl);
	return 1; })()`

// Open shadow roots and closed ones made after the client loaded show on
// their host as Chrome sends them (shadowRoots, shadowRootType), a
// <template> with its content (templateContent, a document fragment); the
// window's tree of them follows the page's mutations inside them; a root
// attached to a host the window holds comes as DOM.shadowRootPushed; pierce
// describes roots to depth; requestNode and search reach nodes inside
// roots; a closed root the client never saw is not shown, and a node in it
// is refused by name; the overlay's own root never shows.
func TestDOMShadowRootsAndTemplates(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "Shadow page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	evalValue(t, a, ctx, shadowSetup)
	tr := newDOMTree(t, a)
	body := expanded(t, tr, ctx)
	doc := tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument
	byID := func(id string) *domNode {
		for _, c := range body.Children {
			for i := 0; i+1 < len(c.Attributes); i += 2 {
				if c.Attributes[i] == "id" && c.Attributes[i+1] == id {
					return c
				}
			}
		}
		t.Fatalf("no #%s in the window's <body>: %s", id, windowDOM(body))
		return nil
	}
	open, closed, unseen, tpl := byID("open-host"), byID("closed-host"), byID("unseen-host"), byID("tpl")
	for _, c := range []struct {
		host *domNode
		mode string
	}{{open, "open"}, {closed, "closed"}} {
		if len(c.host.ShadowRoots) != 1 || c.host.ShadowRoots[0].ShadowRootType != c.mode ||
			c.host.ShadowRoots[0].NodeType != 11 || c.host.ShadowRoots[0].NodeName != "#document-fragment" {
			t.Fatalf("the %s host's shadowRoots: %+v", c.mode, c.host.ShadowRoots)
		}
	}
	if len(unseen.ShadowRoots) != 0 {
		t.Fatalf("a closed root the client never saw shows: %+v", unseen.ShadowRoots)
	}
	if tc := tpl.TemplateContent; tc == nil || tc.NodeType != 11 || tc.NodeName != "#document-fragment" || tc.ShadowRootType != "" {
		t.Fatalf("the <template>'s templateContent: %+v", tpl.TemplateContent)
	}
	if w, p := windowDOM(doc), pageTreeText(t, a, ctx); w != p {
		t.Fatalf("the window's tree:\n%s\nthe page:\n%s", w, p)
	}

	// Mutations inside the roots and the template's content, and a root
	// attached to a host the window holds.
	tr.sync()
	evalValue(t, a, ctx, `(function () {
		var r = document.getElementById('open-host').shadowRoot;
		r.appendChild(document.createElement('u')).textContent = 'added in open';
		r.querySelector('span').setAttribute('data-x', '1');
		window.__closedNode.firstChild.data = 'closed edited';
		window.__closedNode.parentNode.appendChild(document.createElement('s'));
		document.getElementById('tpl').content.appendChild(document.createElement('hr'));
		document.getElementById('title').attachShadow({ mode: 'open' }).innerHTML = '<mark>late root</mark>';
		return 1; })()`)
	pushed := a.ExpectAnyEvent("DOM.shadowRootPushed", func(cdptest.Msg) bool { return true })
	var sp struct {
		HostID int64    `json:"hostId"`
		Root   *domNode `json:"root"`
	}
	_ = json.Unmarshal(pushed.Params, &sp)
	if h := tr.byID[sp.HostID]; h == nil || h.NodeName != "H1" || sp.Root == nil || sp.Root.ShadowRootType != "open" {
		t.Fatalf("DOM.shadowRootPushed %s, want the <h1>'s new open root", pushed.Params)
	}
	waitQuiet(tr)
	tr.expandAll(doc)
	if w, p := windowDOM(doc), pageTreeText(t, a, ctx); w != p {
		t.Fatalf("after mutations in the roots, the window's tree:\n%s\nthe page:\n%s", w, p)
	}

	// pierce: the root's subtree with describeNode, none without.
	var dn struct {
		Node *domNode `json:"node"`
	}
	_ = json.Unmarshal(a.MustCall("DOM.describeNode", map[string]any{"nodeId": open.NodeID, "depth": -1, "pierce": true}).Result, &dn)
	if dn.Node == nil || len(dn.Node.ShadowRoots) != 1 || len(dn.Node.ShadowRoots[0].Children) == 0 {
		t.Fatalf("describeNode with pierce: %+v", dn.Node)
	}
	dn.Node = nil // a fresh node: Unmarshal would keep the earlier children
	_ = json.Unmarshal(a.MustCall("DOM.describeNode", map[string]any{"nodeId": open.NodeID, "depth": -1}).Result, &dn)
	if dn.Node == nil || len(dn.Node.ShadowRoots) != 1 || dn.Node.ShadowRoots[0].Children != nil {
		t.Fatalf("describeNode without pierce expands the root: %+v", dn.Node)
	}

	// Console → Elements inside a root, in a fresh document.
	tr = newDOMTree(t, a)
	for _, expr := range []string{`document.getElementById('open-host').shadowRoot.querySelector('span')`, `window.__closedNode`} {
		obj := evalIn(t, a, ctx, expr, "console")
		m := a.MustCall("DOM.requestNode", map[string]any{"objectId": obj.Result.ObjectID})
		var rn struct {
			NodeID int64 `json:"nodeId"`
		}
		_ = json.Unmarshal(m.Result, &rn)
		tr.sync()
		if n := tr.byID[rn.NodeID]; n == nil || (n.NodeName != "SPAN" && n.NodeName != "B") {
			t.Fatalf("DOM.requestNode of %s: %s; in the window's tree: %+v", expr, m.Raw, n)
		}
	}
	obj := evalIn(t, a, ctx, `window.__unseenNode`, "console")
	if e := domError(t, a, "DOM.requestNode", map[string]any{"objectId": obj.Result.ObjectID}); !strings.Contains(e, "closed shadow root made before") {
		t.Errorf("a node in a closed root the client never saw: %q", e)
	}

	// Ctrl-F finds text inside a closed root; the result is pushed with
	// its path through the host and the root.
	s := a.MustCall("DOM.performSearch", map[string]any{"query": "closed edited"})
	var ps struct {
		SearchID    string `json:"searchId"`
		ResultCount int    `json:"resultCount"`
	}
	_ = json.Unmarshal(s.Result, &ps)
	if ps.ResultCount != 1 {
		t.Fatalf("a search for text in a closed root: %s", s.Raw)
	}
	r := a.MustCall("DOM.getSearchResults", map[string]any{"searchId": ps.SearchID, "fromIndex": 0, "toIndex": 1})
	var gr struct {
		NodeIDs []int64 `json:"nodeIds"`
	}
	_ = json.Unmarshal(r.Result, &gr)
	tr.sync()
	if len(gr.NodeIDs) != 1 || tr.byID[gr.NodeIDs[0]] == nil || tr.byID[gr.NodeIDs[0]].NodeType != 3 {
		t.Fatalf("the search result %s is not a text node in the window's tree", r.Raw)
	}

	// The overlay's own (closed) root never reaches the window.
	h1 := nodeFor(t, a, ctx, "#title")
	a.MustCall("Overlay.highlightNode", map[string]any{"nodeId": h1, "highlightConfig": map[string]any{}})
	evalValue(t, a, ctx, `new Promise(function (r) { setTimeout(r, 200); })`)
	a.MustCall("DOM.describeNode", map[string]any{"nodeId": h1})
	tr.sync()
	for _, m := range a.All() {
		if m.Method == "DOM.shadowRootPushed" && string(m.Raw) != string(pushed.Raw) {
			t.Fatalf("a shadow root pushed while the overlay showed: %s", m.Raw)
		}
	}
}

// waitQuiet syncs tr until two flush windows pass with no DOM event.
func waitQuiet(tr *domTree) {
	last := -1
	for quiet := 0; quiet < 3; time.Sleep(150 * time.Millisecond) {
		tr.sync()
		if tr.events == last {
			quiet++
		} else {
			quiet, last = 0, tr.events
		}
	}
}

// frameSetup gives page ctx a same-origin frame (srcdoc) and a
// cross-origin one (a data: URL, an opaque origin), and waits for both to
// load.
const frameSetup = `new Promise(function (done) {
	var same = document.createElement('iframe'); same.id = 'same';
	same.style.cssText = 'position:absolute; left:40px; top:300px; width:300px; height:150px; border:3px solid black; padding:0';
	same.srcdoc = '<p id="inner" style="margin:10px">inside the frame</p>';
	var cross = document.createElement('iframe'); cross.id = 'cross';
	cross.src = 'data:text/html,<p>cross-origin</p>';
	var n = 0;
	function loaded() { if (++n === 2) done(1); }
	same.onload = loaded; cross.onload = loaded;
	document.body.append(same, cross); })`

// A same-origin <iframe> inside a page shows its document as its
// contentDocument, live (a MutationObserver in the frame's document); a
// cross-origin one shows as an empty owner; the frame loading another
// document swaps the owner (childNodeRemoved, childNodeInserted with the
// new document); a node inside the frame reveals with its path, and its
// box model is in the page's coordinates (offset by the frame's content
// box).
func TestDOMSameOriginFrames(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "Frames page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	evalValue(t, a, ctx, frameSetup)
	tr := newDOMTree(t, a)
	body := expanded(t, tr, ctx)
	doc := tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument
	var same, cross *domNode
	for _, c := range body.Children {
		if c.NodeName == "IFRAME" && len(c.Attributes) > 1 {
			switch c.Attributes[1] {
			case "same":
				same = c
			case "cross":
				cross = c
			}
		}
	}
	if same == nil || cross == nil {
		t.Fatalf("no #same and #cross <iframe> in the window's <body>: %s", windowDOM(body))
	}
	if cd := same.ContentDocument; cd == nil || cd.NodeType != 9 || cd.DocumentURL != "about:srcdoc" {
		t.Fatalf("the same-origin frame's contentDocument: %+v", same.ContentDocument)
	}
	if cross.ContentDocument != nil {
		t.Fatalf("the cross-origin frame shows a document: %+v", cross.ContentDocument)
	}
	if w, p := windowDOM(doc), pageTreeText(t, a, ctx); w != p || !strings.Contains(w, "inside the frame") {
		t.Fatalf("the window's tree:\n%s\nthe page:\n%s", w, p)
	}

	// Mutations inside the frame's document.
	evalValue(t, a, ctx, `(function () { var d = document.getElementById('same').contentDocument;
		d.body.appendChild(d.createElement('section')).textContent = 'added in the frame';
		d.getElementById('inner').setAttribute('data-x', '1'); return 1; })()`)
	waitQuiet(tr)
	tr.expandAll(doc)
	if w, p := windowDOM(doc), pageTreeText(t, a, ctx); w != p || !strings.Contains(w, "added in the frame") {
		t.Fatalf("after mutations in the frame, the window's tree:\n%s\nthe page:\n%s", w, p)
	}

	// The frame loads another document: its owner is swapped.
	oldID := same.NodeID
	evalValue(t, a, ctx, `new Promise(function (done) { var f = document.getElementById('same');
		f.onload = function () { done(1); }; f.srcdoc = '<h2 id="second">second document</h2>'; })`)
	waitQuiet(tr)
	if tr.byID[oldID] != nil {
		t.Fatalf("the owner %d of the frame's first document is still in the window's tree", oldID)
	}
	tr.expandAll(doc)
	if w, p := windowDOM(doc), pageTreeText(t, a, ctx); w != p || !strings.Contains(w, "second document") {
		t.Fatalf("after the frame's new document, the window's tree:\n%s\nthe page:\n%s", w, p)
	}

	// A node inside the frame, in a fresh document: revealed with its
	// path, its box in the page's coordinates.
	tr = newDOMTree(t, a)
	obj := evalIn(t, a, ctx, `document.getElementById('same').contentDocument.getElementById('second')`, "console")
	m := a.MustCall("DOM.requestNode", map[string]any{"objectId": obj.Result.ObjectID})
	var rn struct {
		NodeID int64 `json:"nodeId"`
	}
	_ = json.Unmarshal(m.Result, &rn)
	tr.sync()
	if n := tr.byID[rn.NodeID]; n == nil || n.NodeName != "H2" {
		t.Fatalf("DOM.requestNode of the frame's <h2>: %s; in the window's tree: %+v", m.Raw, n)
	}
	var box struct {
		Model boxModel `json:"model"`
	}
	_ = json.Unmarshal(a.MustCall("DOM.getBoxModel", map[string]any{"nodeId": rn.NodeID}).Result, &box)
	var want []float64
	_ = json.Unmarshal(evalValue(t, a, ctx, `(function () { var f = document.getElementById('same'), fr = f.getBoundingClientRect();
		var r = f.contentDocument.getElementById('second').getBoundingClientRect();
		return [fr.left + 3 + r.left, fr.top + 3 + r.top]; })()`), &want)
	if len(box.Model.Border) != 8 || len(want) != 2 || box.Model.Border[0] != want[0] || box.Model.Border[1] != want[1] {
		t.Fatalf("the frame's <h2> border quad %v, want its top left at %v (the frame's content box + the element's rect)", box.Model.Border, want)
	}
}
