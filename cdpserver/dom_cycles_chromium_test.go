//go:build linux

package cdpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/pagerealm"
)

// Node ids are freed on both sides: in the page's DOM agent (its
// per-window maps, read with __inspectorWorkerClient.stats().dom) and in
// the worker (pagerealm.Hub.DOMCounts), through many expand/collapse
// cycles, a window that closes and a page that goes. The fixture is
// dom_fixture_chromium_test.go's.

// pageDOMStats is the page's DOM agent's counts.
type pageDOMStats struct {
	Observing bool `json:"observing"`
	Sessions  int  `json:"sessions"`
	Nodes     int  `json:"nodes"`
}

func pageStats(t *testing.T, c *cdptest.Client, ctx ctxEvent) pageDOMStats {
	t.Helper()
	var st pageDOMStats
	if v := evalValue(t, c, ctx, `__inspectorWorkerClient.stats().dom`); string(v) != "null" {
		if err := json.Unmarshal(v, &st); err != nil {
			t.Fatalf("page DOM stats %s: %v", v, err)
		}
	}
	return st
}

// waitPageStats polls the page's counts until ok.
func waitPageStats(t *testing.T, c *cdptest.Client, ctx ctxEvent, what string, ok func(pageDOMStats) bool) pageDOMStats {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		st := pageStats(t, c, ctx)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: page DOM agent %+v", what, st)
		}
	}
}

// waitHubCounts polls the worker's counts until they equal want.
func waitHubCounts(t *testing.T, w *worker, what string, want pagerealm.DOMCounts) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		got := w.srv.clients.DOMCounts()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the worker holds %+v, want %+v", what, got, want)
		}
	}
}

// domCycles and domCycleBatch: 10,000 expand/collapse cycles, 100 at a
// time (one page task replaces 100 sections; a flush's 200 events stay
// under MAX_EVENTS_PER_FLUSH).
const (
	domCycles     = 10_000
	domCycleBatch = 100
)

// 10,000 expand/collapse cycles: each batch the page replaces the 100
// sections the window expanded (collapsing them: the window's subtrees
// leave the page) with 100 new ones, and the window expands each new one
// (DOM.requestChildNodes → setChildNodes). The page's node map stays the
// size of what the window shows, and once the window closes both sides
// hold nothing for it.
func TestDOMExpandCollapseCyclesFreeNodeIDs(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM cycles page"
	domPages(t, reg, token, title)
	watch, ctxs := domWindow(t, w, "watch", title)
	ctx := ctxs[title]
	evalValue(t, watch, ctx, `document.body.appendChild(document.createElement('div')).id = 'box'; 1`)
	a, _ := domWindow(t, w, "A", title)
	tr := newDOMTree(t, a)
	body := expanded(t, tr, ctx)
	var box *domNode
	for _, c := range body.Children {
		if c.NodeName == "DIV" {
			box = c
		}
	}
	if box == nil {
		t.Fatalf("no #box in the window's tree: %+v", body.Children)
	}
	// Empty, so not expanded yet: the window asks, as a user clicking it.
	a.MustCall("DOM.requestChildNodes", map[string]any{"nodeId": box.NodeID})
	tr.sync()
	start, maxNodes := time.Now(), 0
	for batch := range domCycles / domCycleBatch {
		a.Forget()
		tr.seen = 0
		evalValue(t, watch, ctx, fmt.Sprintf(`(function () { var s = [];
		  for (var i = 0; i < %d; i++) { var e = document.createElement('section'); e.setAttribute('data-b', '%d'); e.setAttribute('data-i', i);
		    e.innerHTML = '<b>x</b><i>y</i>t' + i; s.push(e); }
		  document.getElementById('box').replaceChildren.apply(document.getElementById('box'), s); return 1; })()`, domCycleBatch, batch))
		last := fmt.Sprintf(`"data-b","%d","data-i","%d"`, batch, domCycleBatch-1)
		a.ExpectAnyEvent("DOM.childNodeInserted", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), last) })
		tr.sync()
		if len(box.Children) != domCycleBatch {
			t.Fatalf("batch %d: the window's #box has %d children, want %d", batch, len(box.Children), domCycleBatch)
		}
		ids := make([]int64, 0, domCycleBatch)
		for _, s := range box.Children {
			ids = append(ids, a.Send("DOM.requestChildNodes", map[string]any{"nodeId": s.NodeID, "depth": 1}))
		}
		for _, id := range ids {
			if m := a.ExpectResponse(id); m.Error != nil {
				t.Fatalf("batch %d: DOM.requestChildNodes: %s", batch, m.Raw)
			}
		}
		tr.sync()
		for _, s := range box.Children {
			if !s.known || len(s.Children) != 3 {
				t.Fatalf("batch %d: section %d expanded to %+v", batch, s.NodeID, s.Children)
			}
		}
		if batch%10 == 9 {
			st := pageStats(t, watch, ctx)
			maxNodes = max(maxNodes, st.Nodes)
			// What the window shows: ~30 nodes of the page, the 100
			// sections and their 3 children (and the <b>'s and <i>'s
			// text). Without freeing, 1,000 cycles would hold 6,000 more.
			if st.Nodes > 1000 {
				t.Fatalf("after %d cycles the page holds %d node ids for the window", (batch+1)*domCycleBatch, st.Nodes)
			}
		}
	}
	if w, p := windowDOM(tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument), pageTreeText(t, watch, ctx); w != p {
		t.Fatalf("after the cycles the window's tree differs from the page (%d vs %d bytes)", len(w), len(p))
	}
	held := w.srv.clients.DOMCounts()
	_ = a.Conn().CloseNow()
	freed := waitPageStats(t, watch, ctx, "after the window closed", func(st pageDOMStats) bool {
		return st.Sessions == 0 && st.Nodes == 0 && !st.Observing
	})
	waitHubCounts(t, w, "after the window closed", pagerealm.DOMCounts{Windows: 1})
	t.Logf("%d expand/collapse cycles in %v: the page held at most %d node ids; worker before the close %+v; page after %+v",
		domCycles, time.Since(start).Round(time.Millisecond), maxNodes, held, freed)
}

// A page that goes (here: navigates away) frees what windows held for it
// in the worker: its namespace, and its mark as a page the window sent
// commands to. Five page loads in turn, each expanded by the window.
func TestDOMPageGoneFreesNamespaces(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM gone page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	tr := newDOMTree(t, a)
	for load := range 5 {
		a.Forget()
		tr.seen = 0
		expanded(t, tr, ctx)
		waitHubCounts(t, w, fmt.Sprintf("load %d expanded", load), pagerealm.DOMCounts{Windows: 1, Pages: 1, Namespaces: 1, Used: 1})
		owner := tr.owners()[ctx.Context.AuxData.FrameID]
		a.Send("Runtime.evaluate", map[string]any{"expression": "setTimeout(() => location.reload(), 50)", "uniqueContextId": ctx.Context.UniqueID})
		a.ExpectAnyEvent("DOM.childNodeRemoved", func(m cdptest.Msg) bool {
			return strings.Contains(string(m.Params), fmt.Sprintf(`"nodeId":%d`, owner.NodeID))
		})
		ctx = clientContextEventNamed(t, a, title, ctx.Context.UniqueID)
		a.ExpectAnyEvent("DOM.childNodeInserted", func(m cdptest.Msg) bool {
			return strings.Contains(string(m.Params), ctx.Context.AuxData.FrameID)
		})
		tr.sync()
		// The new load is in the document; nothing of the old one is held.
		waitHubCounts(t, w, fmt.Sprintf("load %d gone", load), pagerealm.DOMCounts{Windows: 1, Pages: 1, Namespaces: 1})
	}
}

// DOM.describeNode gives ids to the nodes it describes (their
// backendNodeId is the window's id), though the window's tree holds none
// of them: 10,000 nodes described (100 children of an unexpanded element,
// 100 times, each time replaced by the page) leave the page's node map
// bounded; the page forgets the oldest such ids past MAX_LOOSE_NODES
// (client/js/dom.mjs).
func TestDOMDescribedNodesFreed(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM describe page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	evalValue(t, a, ctx, `document.body.appendChild(document.createElement('div')).id = 'junk'; 1`)
	tr := newDOMTree(t, a)
	body := expanded(t, tr, ctx)
	junk := body.Children[len(body.Children)-1]
	if junk.NodeName != "DIV" {
		t.Fatalf("the last child of the body in the window's tree: %+v", junk)
	}
	maxNodes := 0
	for batch := range domCycles / domCycleBatch {
		evalValue(t, a, ctx, fmt.Sprintf(`(function () { var j = document.getElementById('junk'), s = [];
		  for (var i = 0; i < %d; i++) { var p = document.createElement('p'); p.textContent = 'p' + i; s.push(p); }
		  j.replaceChildren.apply(j, s); return 1; })()`, domCycleBatch))
		m := a.MustCall("DOM.describeNode", map[string]any{"nodeId": junk.NodeID, "depth": 1})
		if n := strings.Count(string(m.Result), `"nodeName":"P"`); n != domCycleBatch {
			t.Fatalf("batch %d: DOM.describeNode of #junk has %d <p>: %.300s", batch, n, m.Raw)
		}
		if batch%10 == 9 {
			st := pageStats(t, a, ctx)
			maxNodes = max(maxNodes, st.Nodes)
			if st.Nodes > 2000 {
				t.Fatalf("after %d nodes described the page holds %d node ids for the window", (batch+1)*domCycleBatch, st.Nodes)
			}
		}
		a.Forget()
		tr.seen = 0
	}
	t.Logf("%d nodes described: the page held at most %d node ids", domCycles, maxNodes)
}
