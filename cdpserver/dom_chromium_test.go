//go:build linux

package cdpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/coder/websocket"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// The DOM tests with real pages (the fixture: dom_fixture_chromium_test.go).

// Two pages: no MutationObserver (nor any DOM agent) in either before a
// window asks for its nodes, DOM.enable and getDocument included; the one
// tree shows both documents under frame owners whose frameIds are
// Page.getResourceTree's pages; expanding one page's document runs the
// agent in that page only; after a burst of mutations the window's tree
// equals the page's DOM.
func TestDOMPagesInOneTree(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	titles := []string{"DOM page one", "DOM page two"}
	domPages(t, reg, token, titles...)
	a, ctxs := domWindow(t, w, "A", titles...)
	one, two := ctxs[titles[0]], ctxs[titles[1]]

	// The client's own observer (new scripts, the title) is there from the
	// start; the DOM agent adds one only once a window asks for nodes.
	base := map[string]int{}
	for _, title := range titles {
		var n int
		_ = json.Unmarshal(evalValue(t, a, ctxs[title], `window.__moCount`), &n)
		base[title] = n
	}
	noAgent := func(when string) {
		for _, title := range titles {
			want := fmt.Sprintf("[%d,null]", base[title])
			if got := string(evalValue(t, a, ctxs[title], `[window.__moCount, __inspectorWorkerClient.stats().dom]`)); got != want {
				t.Fatalf("%s: page %q has made [MutationObservers, DOM agent stats] %s, want %s", when, title, got, want)
			}
		}
	}
	noAgent("before DOM.enable")
	a.MustCall("DOM.enable", nil)
	tr := newDOMTree(t, a)
	noAgent("after DOM.enable and DOM.getDocument")

	// The owners are the resource tree's child frames, with the pages'
	// documents.
	m := a.MustCall("Page.getResourceTree", nil)
	var rt struct {
		FrameTree struct {
			ChildFrames []struct {
				Frame struct {
					ID  string `json:"id"`
					URL string `json:"url"`
				} `json:"frame"`
			} `json:"childFrames"`
		} `json:"frameTree"`
	}
	_ = json.Unmarshal(m.Result, &rt)
	owners := tr.owners()
	var got, want []string
	for id, o := range owners {
		got = append(got, id+" "+o.ContentDocument.DocumentURL)
	}
	for _, f := range rt.FrameTree.ChildFrames {
		want = append(want, f.Frame.ID+" "+f.Frame.URL)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != 2 {
		t.Fatalf("frame owners %q, want the resource tree's pages %q", got, want)
	}
	ownerOf := func(ctx ctxEvent) *domNode { return owners[ctx.Context.AuxData.FrameID] }
	fo := a.MustCall("DOM.getFrameOwner", map[string]any{"frameId": one.Context.AuxData.FrameID})
	if !strings.Contains(string(fo.Result), fmt.Sprintf(`"nodeId":%d`, ownerOf(one).NodeID)) {
		t.Fatalf("DOM.getFrameOwner %s, want node %d", fo.Raw, ownerOf(one).NodeID)
	}

	doc1 := ownerOf(one).ContentDocument
	a.MustCall("DOM.requestChildNodes", map[string]any{"nodeId": doc1.NodeID, "depth": 1})
	tr.sync()
	if !doc1.known || len(doc1.Children) != 2 || doc1.Children[1].NodeName != "HTML" {
		t.Fatalf("page one's document children %+v", doc1.Children)
	}
	tr.expandAll(doc1)
	if w, p := windowDOM(doc1), pageTreeText(t, a, one); w != p {
		t.Fatalf("window's tree of page one:\n%s\npage:\n%s", w, p)
	}
	if got, want := string(evalValue(t, a, two, `window.__moCount`)), fmt.Sprint(base[titles[1]]); got != want {
		t.Fatalf("page two made %s MutationObservers, want %s: only page one was expanded", got, want)
	}
	if got, want := string(evalValue(t, a, one, `window.__moCount`)), fmt.Sprint(base[titles[0]]+1); got != want {
		t.Fatalf("page one made %s MutationObservers, want %s (the DOM agent's)", got, want)
	}

	burstConverges(t, a, tr, one, doc1)
}

// burstConverges mutates page ctx's list with 2,000 nodes added, moved,
// edited and removed in 20 tasks, waits for the window to be quiet, and
// compares the window's tree of the page's document doc with the page.
func burstConverges(t *testing.T, a *cdptest.Client, tr *domTree, ctx ctxEvent, doc1 *domNode) {
	t.Helper()
	one := ctx
	tr.sync()
	tr.events = 0
	start := time.Now()
	evalValue(t, a, one, `new Promise(function (done) {
	  var list = document.getElementById('list'), n = 0;
	  function step() {
	    for (var i = 0; i < 100; i++, n++) {
	      var li = document.createElement('li');
	      li.setAttribute('data-n', n);
	      li.appendChild(document.createTextNode('item ' + n));
	      if (n % 3 === 0) li.appendChild(document.createElement('span')).textContent = 'inner ' + n;
	      list.insertBefore(li, n % 2 ? list.firstChild : null);
	      if (n % 7 === 0 && list.children.length > 3) list.removeChild(list.children[1]);
	      if (n % 11 === 0) list.appendChild(list.firstElementChild);
	      if (n % 5 === 0) list.lastElementChild.setAttribute('class', 'c' + n);
	      if (n % 13 === 0 && list.firstElementChild.firstChild) list.firstElementChild.firstChild.data = 'edited ' + n;
	      if (n % 17 === 0) list.firstElementChild.removeAttribute('data-n');
	    }
	    document.getElementById('title').setAttribute('data-step', n);
	    if (n < 2000) setTimeout(step, 10); else done(n);
	  }
	  step();
	})`)
	// Quiet: two flush windows with no DOM event.
	last := -1
	for quiet := 0; quiet < 3; time.Sleep(150 * time.Millisecond) {
		tr.sync()
		if tr.events == last {
			quiet++
		} else {
			quiet, last = 0, tr.events
		}
	}
	elapsed, burstEvents := time.Since(start), tr.events
	tr.expandAll(doc1)
	if w, p := windowDOM(doc1), pageTreeText(t, a, one); w != p {
		i := 0
		for i < len(w) && i < len(p) && w[i] == p[i] {
			i++
		}
		from := max(0, i-300)
		t.Fatalf("after the burst, the window's tree of page one differs from the page at byte %d:\nwindow (%d bytes): …%.600s\npage (%d bytes): …%.600s", i, len(w), w[from:], len(p), p[from:])
	}
	var st struct {
		Flushes, Events, Overflows int
	}
	_ = json.Unmarshal(evalValue(t, a, one, `__inspectorWorkerClient.stats().dom`), &st)
	t.Logf("burst: %d DOM events in the window over %v (%d flushes, %d events sent by the page, %d overflows)",
		burstEvents, elapsed.Round(time.Millisecond), st.Flushes, st.Events, st.Overflows)
}

// Node ids are the window's own: a forged id, a page's id the page does not
// have, another page's node passed with a page's context, an id of an
// earlier document and another window's id are all refused by name, and
// the pages never see them.
func TestDOMNodeIDsRefused(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	titles := []string{"DOM ids one", "DOM ids two"}
	domPages(t, reg, token, titles...)
	a, ctxs := domWindow(t, w, "A", titles...)
	one, two := ctxs[titles[0]], ctxs[titles[1]]
	tr := newDOMTree(t, a)
	h1 := expanded(t, tr, one).Children[0]
	if h1.NodeName != "H1" {
		t.Fatalf("first child of page one's body %+v", h1)
	}
	ns := h1.NodeID >> 32

	for _, tc := range []struct {
		name   string
		method string
		params map[string]any
		want   string
	}{
		{"forged namespace", "DOM.describeNode", map[string]any{"nodeId": int64(1<<20)<<32 | 5}, "no node with id"},
		{"forged host id", "DOM.getOuterHTML", map[string]any{"nodeId": 77}, "no node with id 77"},
		{"unknown id in a page", "DOM.describeNode", map[string]any{"nodeId": ns<<32 | 999999}, "no node with id 999999 in this page"},
		{"another page's node with a page's context", "DOM.resolveNode",
			map[string]any{"nodeId": h1.NodeID, "executionContextId": two.Context.ID}, "nodes cannot cross pages"},
		{"the host's placeholder", "DOM.setAttributeValue", map[string]any{"nodeId": 4, "name": "a", "value": "b"}, "placeholders"},
		{"a host object", "DOM.requestNode", map[string]any{"objectId": "1234567.1.1"}, "Node.js host, which has no DOM"},
	} {
		if got := domError(t, a, tc.method, tc.params); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %s answered %q, want it to say %q", tc.name, tc.method, got, tc.want)
		}
	}
	// The page's own node, in its own context, resolves.
	m := a.MustCall("DOM.resolveNode", map[string]any{"nodeId": h1.NodeID, "executionContextId": one.Context.ID})
	if !strings.Contains(string(m.Result), `"subtype":"node"`) {
		t.Fatalf("DOM.resolveNode of page one's <h1>: %s", m.Raw)
	}

	// Another window cannot use A's ids.
	b, _ := domWindow(t, w, "B", titles...)
	newDOMTree(t, b)
	if got := domError(t, b, "DOM.describeNode", map[string]any{"nodeId": h1.NodeID}); !strings.Contains(got, "another window's") {
		t.Errorf("window B using A's node: %q", got)
	}
	// A new document: A's old ids are stale.
	newDOMTree(t, a)
	if got := domError(t, a, "DOM.getOuterHTML", map[string]any{"nodeId": h1.NodeID}); !strings.Contains(got, "no longer holds") {
		t.Errorf("an id of A's earlier document: %q", got)
	}
}

// Closing a window (and DOM.disable) frees its node ids in the page: the
// page's DOM agent holds no session and no node and stops observing, while
// the window that watches it never asked for nodes.
func TestDOMWindowCloseFreesPageNodes(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM close page"
	domPages(t, reg, token, title)
	watch, ctxs := domWindow(t, w, "watch", title)
	ctx := ctxs[title]
	type domStats struct {
		Observing bool `json:"observing"`
		Sessions  int  `json:"sessions"`
		Nodes     int  `json:"nodes"`
	}
	stats := func() domStats {
		var st domStats
		_ = json.Unmarshal(evalValue(t, watch, ctx, `__inspectorWorkerClient.stats().dom`), &st)
		return st
	}
	waitFor := func(what string, ok func(domStats) bool) domStats {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			st := stats()
			if ok(st) {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: page DOM agent %+v", what, st)
			}
		}
	}
	for round, end := range []string{"DOM.disable", "close"} {
		a, _ := domWindow(t, w, fmt.Sprintf("A%d", round), title)
		tr := newDOMTree(t, a)
		expanded(t, tr, ctx)
		held := waitFor("while expanded", func(st domStats) bool { return st.Sessions == 1 && st.Nodes > 10 && st.Observing })
		if end == "close" {
			_ = a.Conn().CloseNow()
		} else {
			a.MustCall("DOM.disable", nil)
		}
		freed := waitFor("after "+end, func(st domStats) bool { return st.Sessions == 0 && st.Nodes == 0 && !st.Observing })
		t.Logf("%s: page agent %+v, then %+v", end, held, freed)
	}
}

// Console ↔ Elements: a page object that is a node becomes the window's
// node (DOM.requestNode, with its path pushed) and back (DOM.resolveNode);
// describeNode and getOuterHTML name it; edits change the page's DOM and
// come back as events before their answers.
func TestDOMRevealAndEdit(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM reveal page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	tr := newDOMTree(t, a)

	obj := evalIn(t, a, ctx, `document.querySelector('#list li + li')`, "console")
	if obj.Result.Subtype != "node" {
		t.Fatalf("a page element evaluates to %+v, want subtype node", obj.Result)
	}
	m := a.MustCall("DOM.requestNode", map[string]any{"objectId": obj.Result.ObjectID})
	var rn struct {
		NodeID int64 `json:"nodeId"`
	}
	_ = json.Unmarshal(m.Result, &rn)
	tr.sync()
	li := tr.byID[rn.NodeID]
	if li == nil || li.NodeName != "LI" {
		t.Fatalf("DOM.requestNode answered %s; the window's tree has %+v for it", m.Raw, li)
	}
	d := a.MustCall("DOM.describeNode", map[string]any{"objectId": obj.Result.ObjectID})
	if !strings.Contains(string(d.Result), fmt.Sprintf(`"backendNodeId":%d`, rn.NodeID)) {
		t.Fatalf("DOM.describeNode by objectId %s, want backendNodeId %d", d.Raw, rn.NodeID)
	}
	p := a.MustCall("DOM.pushNodesByBackendIdsToFrontend", map[string]any{"backendNodeIds": []int64{rn.NodeID, 3}})
	if want := fmt.Sprintf(`{"nodeIds":[%d,3]}`, rn.NodeID); compact(t, p.Result) != want {
		t.Fatalf("pushNodesByBackendIdsToFrontend %s, want %s", p.Raw, want)
	}
	r := a.MustCall("DOM.resolveNode", map[string]any{"nodeId": rn.NodeID, "objectGroup": "g"})
	var ro struct {
		Object remoteObject `json:"object"`
	}
	_ = json.Unmarshal(r.Result, &ro)
	if got := string(evalValue(t, a, ctx, `1`)); got != "1" || ro.Object.Subtype != "node" {
		t.Fatalf("DOM.resolveNode %s", r.Raw)
	}
	cf := a.MustCall("Runtime.callFunctionOn", map[string]any{"objectId": ro.Object.ObjectID,
		"functionDeclaration": "function () { return this.textContent; }", "returnByValue": true})
	if !strings.Contains(string(cf.Result), `"value":"two"`) {
		t.Fatalf("the resolved object is not the page's second <li>: %s", cf.Raw)
	}

	a.MustCall("DOM.setAttributeValue", map[string]any{"nodeId": rn.NodeID, "name": "data-x", "value": "1"})
	a.MustCall("DOM.setAttributesAsText", map[string]any{"nodeId": rn.NodeID, "text": `class="picked" title='t'`, "name": "data-x"})
	a.MustCall("DOM.requestChildNodes", map[string]any{"nodeId": rn.NodeID})
	tr.sync()
	if len(li.Children) != 1 {
		t.Fatalf("the <li>'s children: %+v", li.Children)
	}
	a.MustCall("DOM.setNodeValue", map[string]any{"nodeId": li.Children[0].NodeID, "value": "TWO"})
	html := a.MustCall("DOM.getOuterHTML", map[string]any{"nodeId": rn.NodeID})
	if want := `{"outerHTML":"<li class=\"picked\" title=\"t\">TWO</li>"}`; compact(t, html.Result) != want {
		t.Fatalf("DOM.getOuterHTML after the edits %s, want %s", html.Result, want)
	}
	tr.sync() // the edits' events came before their answers
	var b strings.Builder
	serialize(li, &b)
	if got := b.String(); got != `<li class="picked" title="t">#TWO</li>` {
		t.Fatalf("the window's <li> after the edits: %s", got)
	}
	a.MustCall("DOM.removeNode", map[string]any{"nodeId": rn.NodeID})
	tr.sync()
	if tr.byID[rn.NodeID] != nil {
		t.Fatalf("removed node %d is still in the window's tree", rn.NodeID)
	}
	if got := string(evalValue(t, a, ctx, `document.querySelectorAll('#list li').length`)); got != "1" {
		t.Fatalf("the page has %s <li> after DOM.removeNode, want 1", got)
	}
}

// A page that reloads swaps its subtree: the old frame owner is removed
// from the window's tree and a new one, with the new load's document,
// inserted in its place; the old load's ids are refused.
func TestDOMPageReloadSwapsSubtree(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM reload page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	tr := newDOMTree(t, a)
	old := tr.owners()[ctx.Context.AuxData.FrameID]
	h1 := expanded(t, tr, ctx).Children[0]
	a.Send("Runtime.evaluate", map[string]any{"expression": "setTimeout(() => location.reload(), 50)", "uniqueContextId": ctx.Context.UniqueID})
	a.ExpectAnyEvent("DOM.childNodeRemoved", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), fmt.Sprintf(`"nodeId":%d`, old.NodeID))
	})
	a.ExpectAnyEvent("DOM.childNodeInserted", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), ctx.Context.AuxData.FrameID)
	})
	tr.sync()
	now := tr.owners()[ctx.Context.AuxData.FrameID]
	if now == nil || now.NodeID == old.NodeID || tr.byID[h1.NodeID] != nil {
		t.Fatalf("after the reload: owner %+v (was %d); the old <h1> %d still known: %v", now, old.NodeID, h1.NodeID, tr.byID[h1.NodeID] != nil)
	}
	if got := domError(t, a, "DOM.describeNode", map[string]any{"nodeId": h1.NodeID}); !strings.Contains(got, "no longer holds") {
		t.Errorf("an id of the earlier load: %q", got)
	}
	tr.expandAll(now.ContentDocument)
	newCtx := clientContextEventNamed(t, a, title, ctx.Context.UniqueID)
	if w, p := windowDOM(now.ContentDocument), pageTreeText(t, a, newCtx); w != p {
		t.Fatalf("the reloaded page in the window:\n%s\npage:\n%s", w, p)
	}
}

// The overflow policy: a page that changes more of what a window shows in
// one flush than MAX_EVENTS_PER_FLUSH (client/js/dom.mjs) sends that window
// documentUpdated instead of the events and forgets its nodes; the window
// asks for the document again and then shows the page as it is.
func TestDOMOverflowSendsDocumentUpdated(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM overflow page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	tr := newDOMTree(t, a)
	expanded(t, tr, ctx) // the <ul>'s children are the window's
	before := len(a.Events("DOM.childNodeInserted"))
	// 5,000 insertions in one task: one flush, over the bound.
	evalValue(t, a, ctx, `(function () { var l = document.getElementById('list');
	  for (var i = 0; i < 5000; i++) l.appendChild(document.createElement('li')).textContent = 'n' + i; return 1; })()`)
	a.ExpectAnyEvent("DOM.documentUpdated", nil)
	if n := len(a.Events("DOM.childNodeInserted")) - before; n > 0 {
		t.Errorf("%d childNodeInserted events sent besides documentUpdated", n)
	}
	var st struct{ Sessions, Nodes, Overflows int }
	_ = json.Unmarshal(evalValue(t, a, ctx, `__inspectorWorkerClient.stats().dom`), &st)
	if st.Overflows != 1 || st.Sessions != 0 || st.Nodes != 0 {
		t.Errorf("page DOM agent after the overflow: %+v, want 1 overflow and the window's nodes forgotten", st)
	}
	tr = newDOMTree(t, a)
	doc := tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument
	tr.expandAll(doc)
	if w, p := windowDOM(doc), pageTreeText(t, a, ctx); w != p {
		t.Fatalf("after documentUpdated and a new document, the window differs from the page (%d vs %d bytes)", len(w), len(p))
	}
}

// A child moved within its parent costs the window two events (out, and in
// at its new place), however long the list: the rest keep their ids. The
// first diff kept only children matching the old order greedily from the
// front, so moving the first of 1,500 children to the end re-sent all of
// them and overflowed into documentUpdated.
func TestDOMMoveIsTwoEvents(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM move page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	evalValue(t, a, ctx, `(function () { var l = document.getElementById('list');
	  for (var i = 0; i < 1500; i++) l.appendChild(document.createElement('li')).textContent = 'n' + i; return 1; })()`)
	tr := newDOMTree(t, a)
	doc := tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument
	tr.expandAll(doc)
	tr.events = 0
	for _, move := range []string{"l.appendChild(l.firstElementChild)", "l.insertBefore(l.lastElementChild, l.firstElementChild)",
		"l.insertBefore(l.children[700], l.children[10])"} {
		before := tr.events
		evalValue(t, a, ctx, `(function () { var l = document.getElementById('list'); `+move+`; return 1; })()`)
		a.Expect("a DOM event", func(m cdptest.Msg) bool {
			return m.Method == "DOM.childNodeInserted" || m.Method == "DOM.documentUpdated"
		})
		time.Sleep(300 * time.Millisecond) // six flush windows: anything else would have come
		tr.sync()
		if got := tr.events - before; got != 2 || len(a.Events("DOM.documentUpdated")) > 0 {
			t.Errorf("%s: %d DOM events (documentUpdated: %d), want 2", move, got, len(a.Events("DOM.documentUpdated")))
		}
		a.Forget()
		tr.seen = 0
	}
	if w, p := windowDOM(doc), pageTreeText(t, a, ctx); w != p {
		t.Fatalf("after the moves the window differs from the page (%d vs %d bytes)", len(w), len(p))
	}
}

// Ctrl-F in Elements over two pages: DOM.performSearch counts the matches
// of every page (a CSS selector here), and DOM.getSearchResults pushes each
// match with its path from the page that holds it.
func TestDOMSearchAcrossPages(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	titles := []string{"DOM search one", "DOM search two"}
	domPages(t, reg, token, titles...)
	a, ctxs := domWindow(t, w, "A", titles...)
	tr := newDOMTree(t, a)
	m := a.MustCall("DOM.performSearch", map[string]any{"query": "#list li"})
	var ps struct {
		SearchID    string `json:"searchId"`
		ResultCount int    `json:"resultCount"`
	}
	_ = json.Unmarshal(m.Result, &ps)
	if ps.ResultCount != 4 {
		t.Fatalf("DOM.performSearch #list li over two pages of two <li> each: %s", m.Raw)
	}
	got := map[string]int{}
	for i := range 4 {
		r := a.MustCall("DOM.getSearchResults", map[string]any{"searchId": ps.SearchID, "fromIndex": i, "toIndex": i + 1})
		var ans struct {
			NodeIDs []int64 `json:"nodeIds"`
		}
		_ = json.Unmarshal(r.Result, &ans)
		tr.sync()
		if len(ans.NodeIDs) != 1 || tr.byID[ans.NodeIDs[0]] == nil || tr.byID[ans.NodeIDs[0]].NodeName != "LI" {
			t.Fatalf("result %d: %s (in the window's tree: %+v)", i, r.Raw, tr.byID[ans.NodeIDs[0]])
		}
		for title, ctx := range ctxs {
			if owner := tr.owners()[ctx.Context.AuxData.FrameID]; owner.NodeID>>32 == ans.NodeIDs[0]>>32 {
				got[title]++
			}
		}
	}
	if got[titles[0]] != 2 || got[titles[1]] != 2 {
		t.Fatalf("results by page %v, want two in each", got)
	}
	if e := domError(t, a, "DOM.getSearchResults", map[string]any{"searchId": ps.SearchID, "fromIndex": 1, "toIndex": 3}); !strings.Contains(e, "span two pages") {
		t.Errorf("a range over two pages: %q", e)
	}
	a.MustCall("DOM.discardSearchResults", map[string]any{"searchId": ps.SearchID})
	if e := domError(t, a, "DOM.getSearchResults", map[string]any{"searchId": ps.SearchID, "fromIndex": 0, "toIndex": 1}); !strings.Contains(e, "no search") {
		t.Errorf("a discarded search: %q", e)
	}
	none := a.MustCall("DOM.performSearch", map[string]any{"query": "no-such-thing-anywhere"})
	if !strings.Contains(string(none.Result), `"resultCount":0`) {
		t.Errorf("a search that finds nothing: %s", none.Raw)
	}
}

// A page that changes 2,000 shown nodes every animation frame for 5 s
// while a window shows them: no flush sends a window more than
// MAX_EVENTS_PER_FLUSH events (past it, documentUpdated), the window
// re-expands after each documentUpdated, and once the page stops the
// window's tree equals the page's DOM. Events per second are logged.
func TestDOMSustainedMutationsBounded(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM flood page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	evalValue(t, a, ctx, `(function () { var l = document.getElementById('list');
	  for (var i = 0; i < 2000; i++) l.appendChild(document.createElement('li')).textContent = 'n' + i; return 1; })()`)
	tr := newDOMTree(t, a)
	tr.allowReset = true
	doc := func() *domNode { return tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument }
	tr.expandAll(doc())
	evalValue(t, a, ctx, `(function () { var l = document.getElementById('list'), end = Date.now() + 5000, f = 0;
	  (function frame() { f++; for (var i = 0; i < l.children.length; i++) l.children[i].textContent = 'f' + f + ' n' + i;
	    if (Date.now() < end) requestAnimationFrame(frame); else window.__floodDone = f; })(); return 1; })()`)
	domEvents := func() int {
		n := 0
		for _, m := range a.All() {
			if m.ID == nil && strings.HasPrefix(m.Method, "DOM.") {
				n++
			}
		}
		return n
	}
	start, last, lastEvents, peak, resets := time.Now(), time.Now(), domEvents(), 0, 0
	for {
		time.Sleep(100 * time.Millisecond)
		tr.sync()
		if tr.resets > resets {
			resets = tr.resets
			tr = rebuilt(t, a, resets)
			tr.expandAll(doc())
		}
		if time.Since(last) >= time.Second {
			n := domEvents()
			peak = max(peak, n-lastEvents)
			last, lastEvents = time.Now(), n
		}
		if string(evalValue(t, a, ctx, `window.__floodDone || 0`)) != "0" {
			break
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatal("the flood did not end")
		}
	}
	frames := string(evalValue(t, a, ctx, `window.__floodDone`))
	time.Sleep(300 * time.Millisecond)
	tr.sync()
	if tr.resets > resets {
		resets = tr.resets
		tr = rebuilt(t, a, resets)
		tr.expandAll(doc())
	}
	if w, p := windowDOM(doc()), pageTreeText(t, a, ctx); w != p {
		t.Fatalf("after the flood the window differs from the page (%d vs %d bytes)", len(w), len(p))
	}
	var st struct{ Flushes, Events, Overflows, MaxFlush int }
	_ = json.Unmarshal(evalValue(t, a, ctx, `__inspectorWorkerClient.stats().dom`), &st)
	t.Logf("%s frames of 2,000 changed nodes: %d documentUpdated, peak %d DOM events/s in the window; page: %d flushes, %d events, %d overflows, at most %d events in one flush",
		frames, resets, peak, st.Flushes, st.Events, st.Overflows, st.MaxFlush)
	if st.MaxFlush > 2000 {
		t.Fatalf("one flush sent %d events, over MAX_EVENTS_PER_FLUSH (2,000)", st.MaxFlush)
	}
}

// rebuilt is a window's tree from a new DOM.getDocument, after a
// documentUpdated.
func rebuilt(t *testing.T, a *cdptest.Client, resets int) *domTree {
	tr := newDOMTree(t, a)
	tr.allowReset, tr.resets = true, resets
	return tr
}

// A window that stops reading while a page changes what it shows loses
// DOM events, and with them its tree: it gets DOM.documentUpdated ahead of
// its backlog instead of silently diverging, and the page forgets its
// nodes.
func TestDOMWindowBehindGetsDocumentUpdated(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute, MaxQueuedMessages: 400, Logf: func(string, ...any) {}})
	title := "DOM behind page"
	domPages(t, reg, token, title)
	watch, ctxs := domWindow(t, w, "watch", title)
	ctx := ctxs[title]
	evalValue(t, watch, ctx, `(function () { var l = document.getElementById('list');
	  for (var i = 0; i < 30; i++) l.appendChild(document.createElement('li')).textContent = 'n' + i; return 1; })()`)

	dt, _, err := websocket.Dial(t.Context(), w.srv.PageWebSocketURL(), &websocket.DialOptions{HTTPClient: smallWindowClient()})
	if err != nil {
		t.Fatal(err)
	}
	defer dt.CloseNow()
	dt.SetReadLimit(4 << 20)
	call := func(id int, method string, params any) []byte {
		b, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
		if err := dt.Write(t.Context(), websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
		prefix := []byte(`{"id":` + strconv.Itoa(id) + `,`)
		for {
			rctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			_, msg, err := dt.Read(rctx)
			cancel()
			if err != nil {
				t.Fatalf("no answer to %s: %v", method, err)
			}
			if bytes.HasPrefix(msg, prefix) {
				return msg
			}
		}
	}
	var doc struct {
		Result struct {
			Root *domNode `json:"root"`
		} `json:"result"`
	}
	_ = json.Unmarshal(call(1, "DOM.getDocument", map[string]any{}), &doc)
	var pageDoc int64
	for _, c := range doc.Result.Root.Children[0].Children[1].Children {
		if c.ContentDocument != nil {
			pageDoc = c.ContentDocument.NodeID
		}
	}
	call(2, "DOM.requestChildNodes", map[string]any{"nodeId": pageDoc, "depth": -1})

	// The window stops reading; the page changes 30 shown attributes (2 KB
	// each: more than the sockets' buffers hold) every 60 ms for 3 s.
	evalValue(t, watch, ctx, `(function () { var end = Date.now() + 3000, n = 0;
	  var pad = new Array(2000).join('x');
	  (function step() { n++; var li = document.querySelectorAll('#list li');
	    for (var i = 0; i < li.length; i++) li[i].setAttribute('data-x', n + '-' + i + pad);
	    if (Date.now() < end) setTimeout(step, 60); else window.__floodDone = n; })(); return 1; })()`)
	for string(evalValue(t, watch, ctx, `window.__floodDone || 0`)) == "0" {
		time.Sleep(100 * time.Millisecond)
	}
	// It reads again: documentUpdated comes, the page forgot its nodes.
	attrs, updated := 0, false
	for !updated {
		rctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		_, msg, err := dt.Read(rctx)
		cancel()
		if err != nil {
			t.Fatalf("no DOM.documentUpdated after %d attributeModified: %v", attrs, err)
		}
		switch {
		case bytes.Contains(msg, []byte(`"method":"DOM.documentUpdated"`)):
			updated = true
		case bytes.Contains(msg, []byte(`"method":"DOM.attributeModified"`)):
			attrs++
		}
	}
	var st struct{ Sessions, Nodes, Events int }
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		_ = json.Unmarshal(evalValue(t, watch, ctx, `__inspectorWorkerClient.stats().dom`), &st)
		if st.Sessions == 0 && st.Nodes == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page still holds the window's nodes: %+v", st)
		}
	}
	t.Logf("the window read %d attributeModified before documentUpdated; the page had sent %d events", attrs, st.Events)
}

// DOM.getDocument with pierce goes into the pages' documents (as Chrome's
// goes into iframes): with depth -1 each page's whole document comes in the
// answer, equal to the page's DOM; without pierce they come unexpanded.
func TestDOMGetDocumentPierce(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	titles := []string{"DOM pierce one", "DOM pierce two"}
	domPages(t, reg, token, titles...)
	a, ctxs := domWindow(t, w, "A", titles...)
	plain := newDOMTree(t, a)
	for _, o := range plain.owners() {
		if o.ContentDocument.Children != nil {
			t.Fatalf("without pierce a page's document came expanded: %+v", o.ContentDocument)
		}
	}
	m := a.MustCall("DOM.getDocument", map[string]any{"depth": -1, "pierce": true})
	var ans struct {
		Root *domNode `json:"root"`
	}
	if err := json.Unmarshal(m.Result, &ans); err != nil {
		t.Fatal(err)
	}
	tr := &domTree{t: t, c: a, root: ans.Root, byID: map[int64]*domNode{}, seen: len(a.All())}
	tr.index(ans.Root)
	for title, ctx := range ctxs {
		doc := tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument
		if w, p := windowDOM(doc), pageTreeText(t, a, ctx); w != p {
			t.Fatalf("%s in getDocument{depth:-1, pierce:true}:\n%s\npage:\n%s", title, w, p)
		}
	}
	// The window holds those nodes now: a change comes as events.
	evalValue(t, a, ctxs[titles[1]], `document.querySelector('h1').setAttribute('data-after', 'pierce'); 1`)
	a.ExpectAnyEvent("DOM.attributeModified", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `"data-after"`) })
}
