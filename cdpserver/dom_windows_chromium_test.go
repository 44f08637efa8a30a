//go:build linux

package cdpserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// Two windows on one page, each showing a different part of its DOM, and
// mutations in both parts and in a part neither shows. The fixture is
// dom_fixture_chromium_test.go's.

// findNode is the first node of n's subtree (depth first) that ok accepts.
func findNode(n *domNode, ok func(*domNode) bool) *domNode {
	if n == nil {
		return nil
	}
	if ok(n) {
		return n
	}
	for _, c := range n.Children {
		if f := findNode(c, ok); f != nil {
			return f
		}
	}
	return findNode(n.ContentDocument, ok)
}

func named(name string) func(*domNode) bool {
	return func(n *domNode) bool { return n.NodeName == name }
}

// domEventsSince labels the DOM events c received after message from:
// the method and the nodes it names, by the labels given (an id without a
// label shows as ?id).
func domEventsSince(c *cdptest.Client, from int, labels map[int64]string) []string {
	label := func(id int64) string {
		if l, ok := labels[id]; ok {
			return l
		}
		return fmt.Sprintf("?%d", id)
	}
	var out []string
	for _, m := range c.All()[from:] {
		if m.ID != nil || !strings.HasPrefix(m.Method, "DOM.") {
			continue
		}
		var p struct {
			ParentNodeID int64  `json:"parentNodeId"`
			NodeID       int64  `json:"nodeId"`
			Name         string `json:"name"`
			Node         struct {
				NodeName string `json:"nodeName"`
			} `json:"node"`
		}
		_ = json.Unmarshal(m.Params, &p)
		switch m.Method {
		case "DOM.childNodeInserted":
			out = append(out, m.Method+" "+label(p.ParentNodeID)+" "+p.Node.NodeName)
		case "DOM.childNodeRemoved":
			out = append(out, m.Method+" "+label(p.ParentNodeID)+" "+label(p.NodeID))
		case "DOM.attributeModified", "DOM.attributeRemoved":
			out = append(out, m.Method+" "+label(p.NodeID)+" "+p.Name)
		default:
			out = append(out, m.Method+" "+label(p.NodeID))
		}
	}
	slices.Sort(out)
	return out
}

// Window A shows the page's <ul> expanded, window B its <p>; neither
// expanded <head>. One page task changes the <ul>, the <p>'s subtree, the
// <p> itself and <head>'s children and <title>: each window gets exactly
// the events for what it shows (a count update for a node it holds
// unexpanded), none for what it was never sent, and each tree equals the
// page once both are fully expanded.
func TestDOMTwoWindowsGetTheirUpdates(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM two windows page"
	domPages(t, reg, token, title)
	watch, ctxs := domWindow(t, w, "watch", title)
	ctx := ctxs[title]

	type view struct {
		c      *cdptest.Client
		tr     *domTree
		labels map[int64]string
	}
	open := func(name, expand string) view {
		c, _ := domWindow(t, w, name, title)
		tr := newDOMTree(t, c)
		doc := tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument
		c.MustCall("DOM.requestChildNodes", map[string]any{"nodeId": doc.NodeID, "depth": 2})
		tr.sync()
		body := findNode(doc, named("BODY"))
		c.MustCall("DOM.requestChildNodes", map[string]any{"nodeId": body.NodeID, "depth": 1})
		tr.sync()
		c.MustCall("DOM.requestChildNodes", map[string]any{"nodeId": findNode(body, named(expand)).NodeID, "depth": -1})
		tr.sync()
		labels := map[int64]string{}
		for _, n := range []string{"HEAD", "UL", "P", "B"} {
			if f := findNode(doc, named(n)); f != nil {
				labels[f.NodeID] = strings.ToLower(n)
			}
		}
		if li := findNode(doc, named("LI")); li != nil {
			labels[li.NodeID] = "li1"
			labels[li.Children[0].NodeID] = "li1-text"
		}
		if b := findNode(doc, named("B")); b != nil && len(b.Children) == 1 {
			labels[b.Children[0].NodeID] = "b-text"
		}
		return view{c, tr, labels}
	}
	a, b := open("A", "UL"), open("B", "P")
	if findNode(a.tr.root, named("B")) != nil || findNode(b.tr.root, named("LI")) != nil {
		t.Fatalf("window A holds the <p>'s <b>, or B the <ul>'s <li>: the views overlap")
	}
	fromA, fromB := len(a.c.All()), len(b.c.All())
	evalValue(t, watch, ctx, `(function () {
	  var ul = document.getElementById('list'), li = ul.firstElementChild;
	  ul.appendChild(document.createElement('li')).textContent = 'three';
	  li.setAttribute('class', 'first');
	  li.firstChild.data = 'ONE';
	  document.querySelector('p b').textContent = 'BOLD';
	  document.querySelector('p').setAttribute('data-p', '1');
	  document.head.appendChild(document.createElement('meta')).setAttribute('name', 'x');
	  document.querySelector('title').setAttribute('data-t', '1');
	  document.querySelector('title').firstChild.data = 'renamed';
	  return 1; })()`)
	// Six flush windows: every event of that one task has come.
	time.Sleep(300 * time.Millisecond)
	wantA := []string{
		"DOM.attributeModified li1 class", "DOM.attributeModified p data-p", "DOM.characterDataModified li1-text",
		"DOM.childNodeCountUpdated head", "DOM.childNodeInserted ul LI",
	}
	wantB := []string{
		"DOM.attributeModified p data-p", "DOM.childNodeCountUpdated head", "DOM.childNodeCountUpdated ul",
		"DOM.childNodeInserted b #text", "DOM.childNodeRemoved b b-text",
	}
	for _, v := range []struct {
		name string
		view
		from int
		want []string
	}{{"A", a, fromA, wantA}, {"B", b, fromB, wantB}} {
		v.tr.sync() // fails on an event for a node the window was never sent
		if got := domEventsSince(v.c, v.from, v.labels); !slices.Equal(got, v.want) {
			t.Errorf("window %s got\n  %s\nwant\n  %s", v.name, strings.Join(got, "\n  "), strings.Join(v.want, "\n  "))
		}
	}
	for name, v := range map[string]view{"A": a, "B": b} {
		doc := v.tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument
		v.tr.expandAll(doc)
		if got, want := windowDOM(doc), pageTreeText(t, watch, ctx); got != want {
			t.Fatalf("window %s's tree, fully expanded:\n%s\npage:\n%s", name, got, want)
		}
	}
}

// The DOM methods no other test calls, against a real page: search by
// XPath and by text (TestDOMSearchAcrossPages searches by selector),
// DOM.removeAttribute and DOM.setOuterHTML, whose mutation events come
// before their answers, and their refusals with a reason.
func TestDOMSearchXPathTextAndEdits(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM methods page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	tr := newDOMTree(t, a)
	body := expanded(t, tr, ctx)

	for _, tc := range []struct{ query, wantName, wantText string }{
		{"//ul/li[2]", "LI", "two"},
		{"bOlD", "#text", "bold"}, // text, case-insensitive: the <b>'s text node
	} {
		m := a.MustCall("DOM.performSearch", map[string]any{"query": tc.query})
		var ps struct {
			SearchID    string `json:"searchId"`
			ResultCount int    `json:"resultCount"`
		}
		_ = json.Unmarshal(m.Result, &ps)
		if ps.ResultCount != 1 {
			t.Fatalf("DOM.performSearch %q: %s, want 1 result", tc.query, m.Raw)
		}
		r := a.MustCall("DOM.getSearchResults", map[string]any{"searchId": ps.SearchID, "fromIndex": 0, "toIndex": 1})
		var ans struct {
			NodeIDs []int64 `json:"nodeIds"`
		}
		_ = json.Unmarshal(r.Result, &ans)
		tr.sync()
		n := tr.byID[ans.NodeIDs[0]]
		var text string
		if n != nil && n.NodeName == "#text" {
			text = n.NodeValue
		} else if n != nil && len(n.Children) == 1 {
			text = n.Children[0].NodeValue
		}
		if n == nil || n.NodeName != tc.wantName || text != tc.wantText {
			t.Fatalf("search %q found %s: in the window's tree %+v, want a %s with %q", tc.query, r.Raw, n, tc.wantName, tc.wantText)
		}
		a.MustCall("DOM.discardSearchResults", map[string]any{"searchId": ps.SearchID})
	}

	h1, p := findNode(body, named("H1")), findNode(body, named("P"))
	a.MustCall("DOM.removeAttribute", map[string]any{"nodeId": h1.NodeID, "name": "class"})
	a.MustCall("DOM.setOuterHTML", map[string]any{"nodeId": p.NodeID, "outerHTML": `<section id="new"><i>it</i> here</section>`})
	tr.sync() // the edits' events came before their answers
	if slices.Contains(h1.Attributes, "class") || tr.byID[p.NodeID] != nil || findNode(body, named("SECTION")) == nil {
		t.Fatalf("after removeAttribute and setOuterHTML the window has <h1> %v, the <p> %v, a <section> %v",
			h1.Attributes, tr.byID[p.NodeID] != nil, findNode(body, named("SECTION")) != nil)
	}
	if got := string(evalValue(t, a, ctx, `[document.querySelector('h1').hasAttribute('class'), !!document.querySelector('p'), document.getElementById('new').outerHTML]`)); got != `[false,false,"<section id=\"new\"><i>it</i> here</section>"]` {
		t.Fatalf("the page after the edits: %s", got)
	}
	doc := tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument
	tr.expandAll(doc)
	if got, want := windowDOM(doc), pageTreeText(t, a, ctx); got != want {
		t.Fatalf("after the edits the window's tree:\n%s\npage:\n%s", got, want)
	}
	html := findNode(doc, named("HTML"))
	text := findNode(h1, named("#text"))
	for _, tc := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{"DOM.setOuterHTML", map[string]any{"nodeId": html.NodeID, "outerHTML": "<html></html>"}, "below <html>"},
		{"DOM.removeAttribute", map[string]any{"nodeId": text.NodeID, "name": "x"}, "is not an element"},
		{"DOM.setOuterHTML", map[string]any{"nodeId": 4, "outerHTML": "<b></b>"}, "placeholders"},
	} {
		if got := domError(t, a, tc.method, tc.params); !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: %q, want it to say %q", tc.method, tc.params, got, tc.want)
		}
	}
}

// Every method that takes a node id refuses a forged one, one of the
// window's earlier document and another window's, each with its reason,
// before anything reaches a page (TestDOMNodeIDsRefused covers the kinds
// of id on a few methods; this covers the methods).
func TestDOMForgedIDsRefusedByEveryMethod(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute, Logf: func(string, ...any) {}})
	title := "DOM forged page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	old := findNode(expanded(t, newDOMTree(t, a), ctx), named("H1")).NodeID
	tr := newDOMTree(t, a) // a new document: old is stale
	h1 := findNode(expanded(t, tr, ctx), named("H1")).NodeID
	b, _ := domWindow(t, w, "B", title)
	other := findNode(expanded(t, newDOMTree(t, b), ctx), named("H1")).NodeID
	if h1 == other || h1 == old {
		t.Fatalf("window A's <h1> %d, B's %d, A's earlier %d: ids are per window and document", h1, other, old)
	}
	ids := []struct {
		name string
		id   int64
		want string
	}{
		{"forged", 1<<52 | 3, "no node with id"},
		{"earlier document", old, "no longer holds"},
		{"another window's", other, "no longer holds"},
	}
	methods := []struct {
		method string
		params map[string]any
	}{
		{"DOM.requestChildNodes", nil}, {"DOM.describeNode", nil}, {"DOM.resolveNode", nil}, {"DOM.getOuterHTML", nil},
		{"DOM.setAttributeValue", map[string]any{"name": "a", "value": "b"}}, {"DOM.setAttributesAsText", map[string]any{"text": "a=b"}},
		{"DOM.removeAttribute", map[string]any{"name": "id"}}, {"DOM.setNodeValue", map[string]any{"value": "x"}},
		{"DOM.removeNode", nil}, {"DOM.setOuterHTML", map[string]any{"outerHTML": "<i></i>"}}, {"DOM.getBoxModel", nil},
		{"DOM.setInspectedNode", nil}, {"Overlay.highlightNode", map[string]any{"highlightConfig": map[string]any{}}},
		{"CSS.getMatchedStylesForNode", nil}, {"CSS.getComputedStyleForNode", nil}, {"CSS.getInlineStylesForNode", nil},
		{"DOM.setNodeName", map[string]any{"name": "i"}}, {"DOM.moveTo", map[string]any{"targetNodeId": h1}},
		{"DOM.copyTo", map[string]any{"targetNodeId": h1}}, {"DOM.collectClassNamesFromSubtree", nil},
	}
	for _, m := range methods {
		for _, id := range ids {
			params := map[string]any{"nodeId": id.id}
			for k, v := range m.params {
				params[k] = v
			}
			if got := domError(t, a, m.method, params); !strings.Contains(got, id.want) {
				t.Errorf("%s with %s id %d: %q, want it to say %q", m.method, id.name, id.id, got, id.want)
			}
		}
	}
	// The target and the node to insert before of a move or copy too.
	for _, id := range ids {
		for _, m := range []string{"DOM.moveTo", "DOM.copyTo"} {
			for _, params := range []map[string]any{{"nodeId": h1, "targetNodeId": id.id}, {"nodeId": h1, "targetNodeId": h1, "insertBeforeNodeId": id.id}} {
				if got := domError(t, a, m, params); !strings.Contains(got, id.want) {
					t.Errorf("%s %v with a %s id: %q, want it to say %q", m, params, id.name, got, id.want)
				}
			}
		}
	}
	// Backend ids that are not the window's are unknown: 0, as Chrome
	// answers a node that is gone.
	r := a.MustCall("DOM.pushNodesByBackendIdsToFrontend", map[string]any{"backendNodeIds": []int64{ids[0].id, old, other, h1}})
	if want := fmt.Sprintf(`{"nodeIds":[0,0,0,%d]}`, h1); compact(t, r.Result) != want {
		t.Errorf("pushNodesByBackendIdsToFrontend of forged, stale, another window's and A's own ids: %s, want %s", r.Result, want)
	}
	// The page's own <h1>, by the same methods, is unchanged.
	if got := string(evalValue(t, a, ctx, `document.querySelector('h1').outerHTML`)); got != `"<h1 id=\"title\" class=\"big\">DOM forged page</h1>"` {
		t.Errorf("the page's <h1> after the refused edits: %s", got)
	}
}
