//go:build linux

package cdpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A page mutating 2,000 nodes every animation frame for 5 s while a window
// shows them all. The fixture is dom_fixture_chromium_test.go's.

// floodFlushMs and floodMaxFlush are client/js/dom.mjs's FLUSH_MS and
// MAX_EVENTS_PER_FLUSH: a window gets at most floodMaxFlush events per
// page per flush, and a page flushes on its timer at most every
// floodFlushMs (and before each DOM command), so at most 40,000 DOM events
// a second per page and window.
const (
	floodFlushMs  = 50
	floodMaxFlush = 2000
)

// voidElements are the HTML elements outerHTML writes without an end tag.
var voidElements = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

// outerHTMLOf is the HTML serialization of a window's element, as the
// page's Element.outerHTML writes it (the HTML spec's fragment
// serialization) of a tree without whitespace-only text.
func outerHTMLOf(n *domNode, raw bool, b *strings.Builder) {
	switch n.NodeType {
	case 1:
		tag := strings.ToLower(n.NodeName)
		b.WriteString("<" + tag)
		for i := 0; i+1 < len(n.Attributes); i += 2 {
			v := strings.NewReplacer("&", "&amp;", `"`, "&quot;", "\u00a0", "&nbsp;").Replace(n.Attributes[i+1])
			b.WriteString(" " + n.Attributes[i] + `="` + v + `"`)
		}
		b.WriteString(">")
		if voidElements[tag] {
			return
		}
		for _, c := range n.Children {
			outerHTMLOf(c, tag == "script" || tag == "style", b)
		}
		b.WriteString("</" + tag + ">")
	case 3:
		if raw {
			b.WriteString(n.NodeValue)
		} else {
			b.WriteString(strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;").Replace(n.NodeValue))
		}
	case 8:
		b.WriteString("<!--" + n.NodeValue + "-->")
	}
}

// The window shows 1,200 <li> of a page (each with its text); every
// animation frame for 5 s the page sets an attribute on all 1,200 and the
// text of 800 of them: 2,000 nodes a frame. Coalesced, a flush is at most
// those 2,000 events whatever the frames it covers, so the window is never
// reset (documentUpdated fails the test), its tree, rebuilt from
// getDocument, setChildNodes and the mutation events alone, has the page's
// outerHTML at the end, and no flush sent more than MAX_EVENTS_PER_FLUSH.
// TestDOMSustainedMutationsBounded is the same flood past the bound.
func TestDOMFloodEqualsOuterHTML(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM outerHTML flood page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	evalValue(t, a, ctx, `(function () { var l = document.getElementById('list');
	  for (var i = 0; i < 1198; i++) l.appendChild(document.createElement('li')).textContent = 'n' + i; return 1; })()`)
	tr := newDOMTree(t, a)
	doc := tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument
	tr.expandAll(doc)
	var before struct{ Flushes, Events int }
	_ = json.Unmarshal(evalValue(t, a, ctx, `__inspectorWorkerClient.stats().dom`), &before)
	tr.events = 0
	start := time.Now()
	evalValue(t, a, ctx, `(function () { var l = document.getElementById('list').children, end = Date.now() + 5000, f = 0;
	  (function frame() { f++;
	    for (var i = 0; i < l.length; i++) { l[i].setAttribute('data-f', f + ' & "' + i + '"'); if (i < 800) l[i].firstChild.data = 'f' + f + ' <' + i + '>'; }
	    if (Date.now() < end) requestAnimationFrame(frame); else window.__floodDone = f; })(); return 1; })()`)
	peak, lastEvents, last := 0, 0, time.Now()
	for string(evalValue(t, a, ctx, `window.__floodDone || 0`)) == "0" {
		time.Sleep(100 * time.Millisecond)
		tr.sync()
		if time.Since(last) >= time.Second {
			peak = max(peak, tr.events-lastEvents)
			last, lastEvents = time.Now(), tr.events
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatal("the flood did not end")
		}
	}
	elapsed := time.Since(start)
	frames := string(evalValue(t, a, ctx, `window.__floodDone`))
	time.Sleep(6 * floodFlushMs * time.Millisecond)
	tr.sync()
	var b strings.Builder
	outerHTMLOf(findNode(doc, named("HTML")), false, &b)
	var parts []string
	_ = json.Unmarshal(evalValue(t, a, ctx, `(function (s) { var out = []; for (var i = 0; i < s.length; i += 16000) out.push(s.slice(i, i + 16000)); return out; })(document.documentElement.outerHTML)`), &parts)
	if got, want := b.String(), strings.Join(parts, ""); got != want {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		from := max(0, i-200)
		t.Fatalf("after the flood the window's <html> differs from the page's outerHTML at byte %d:\nwindow (%d bytes): …%.400s\npage (%d bytes): …%.400s", i, len(got), got[from:], len(want), want[from:])
	}
	var st struct{ Flushes, Events, Overflows, MaxFlush int }
	_ = json.Unmarshal(evalValue(t, a, ctx, `__inspectorWorkerClient.stats().dom`), &st)
	flushes := st.Flushes - before.Flushes
	t.Logf("%s frames of 2,000 changed nodes in %v: the window got %d DOM events (%.0f/s, peak %d in one second; bound %d/s), "+
		"in %d flushes, at most %d in one; %d overflows",
		frames, elapsed.Round(time.Millisecond), tr.events, float64(tr.events)/elapsed.Seconds(), peak,
		floodMaxFlush*1000/floodFlushMs, flushes, st.MaxFlush, st.Overflows)
	if st.MaxFlush > floodMaxFlush || st.Overflows != 0 {
		t.Fatalf("a flush sent %d events (%d overflows): over MAX_EVENTS_PER_FLUSH", st.MaxFlush, st.Overflows)
	}
	// The page's flushes are paced by its timer (plus one per DOM command,
	// of which the test sent none during the flood): what bounds the rate.
	if limit := int(elapsed/(floodFlushMs*time.Millisecond)) + 10; flushes > limit {
		t.Fatalf("%d flushes in %v: more than one per FLUSH_MS (%d)", flushes, elapsed, limit)
	}
}
