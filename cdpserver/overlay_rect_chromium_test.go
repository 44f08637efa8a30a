//go:build linux

package cdpserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// Overlay.highlightRect and inspect mode's hover with real pages (headless
// Chromium with its own CDP for trusted input and screenshots).

// Overlay.highlightRect draws the rectangle in the window's one page: a
// screenshot of the page (Chromium's own CDP) shows the fill colour inside
// the rectangle and the page's white outside it; hideHighlight removes it.
func TestOverlayHighlightRect(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "Highlight rect page"
	tab := inspectPage(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	if e := domError(t, a, "Overlay.highlightRect", map[string]any{"x": 1, "y": 1, "width": 1, "height": 1}); !strings.Contains(e, "DOM.getDocument first") {
		t.Errorf("highlightRect before the window has a document: %q", e)
	}
	newDOMTree(t, a)
	evalValue(t, a, ctx, `(document.body.style.background = 'white', document.body.style.margin = '0', 1)`)
	pixel := func(x, y int) (r, g, b uint32) {
		t.Helper()
		var shot struct {
			Data string `json:"data"`
		}
		_ = json.Unmarshal(tab.call("Page.captureScreenshot", map[string]any{"format": "png"}), &shot)
		raw, err := base64.StdEncoding.DecodeString(shot.Data)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		r, g, b, _ = img.At(x, y).RGBA()
		return r >> 8, g >> 8, b >> 8
	}
	red := func(x, y int) bool { r, g, b := pixel(x, y); return r > 200 && g < 80 && b < 80 }
	// Below the page's text (the <h1> and the list sit at the top).
	rect := map[string]any{"x": 300, "y": 400, "width": 100, "height": 60,
		"color": map[string]any{"r": 255, "g": 0, "b": 0}, "outlineColor": map[string]any{"r": 0, "g": 0, "b": 255, "a": 1}}
	if red(350, 430) {
		t.Fatal("the page is red where the rectangle goes before it is drawn")
	}
	a.MustCall("Overlay.highlightRect", rect)
	var inside, outside bool
	for deadline := time.Now().Add(10 * time.Second); !inside && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		inside = red(350, 430)
	}
	outside = red(450, 430) || red(350, 480)
	if !inside || outside {
		r, g, b := pixel(350, 430)
		t.Fatalf("after highlightRect: inside the rectangle red=%v (rgb %d,%d,%d), outside red=%v", inside, r, g, b, outside)
	}
	if got := strings.Trim(string(evalValue(t, a, ctx, overlayCount)), `"`); got != "1:none:true" {
		t.Fatalf("the rectangle's overlay: %q, want 1:none:true (pointer-events none, closed root)", got)
	}
	a.MustCall("Overlay.hideHighlight", nil)
	if got := string(evalValue(t, a, ctx, overlayCount)); got != `"0"` {
		t.Fatalf("after hideHighlight the page has %s overlay hosts", got)
	}
	if red(350, 430) {
		t.Fatal("the rectangle is still drawn after hideHighlight")
	}
}

// In inspect mode the window's tree follows the pointer, as Chrome's: the
// pointer over an element the window was never sent (a <b> inside a <p>,
// then a <span> inside an open shadow root) sends its path
// (setChildNodes) and Overlay.nodeHighlightRequested naming it.
func TestOverlayInspectModeHoverRequestsNode(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "Inspect hover page"
	tab := inspectPage(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	evalValue(t, a, ctx, `(function () {
		var h = document.createElement('div');
		h.attachShadow({ mode: 'open' }).innerHTML = '<span id="deep" style="display:inline-block;width:120px;height:40px">in a root</span>';
		document.body.appendChild(h); return 1; })()`)
	tr := newDOMTree(t, a)
	a.MustCall("Overlay.setInspectMode", map[string]any{"mode": "searchForNode", "highlightConfig": map[string]any{"showInfo": true}})
	for _, c := range []struct{ where, name string }{
		{`document.querySelector('p b')`, "B"},
		{`document.querySelector('div').shadowRoot.getElementById('deep')`, "SPAN"},
	} {
		var at struct{ X, Y float64 }
		if err := json.Unmarshal(evalValue(t, a, ctx, `(function () { var r = `+c.where+`.getBoundingClientRect();
			return { X: r.left + r.width / 2, Y: r.top + r.height / 2 }; })()`), &at); err != nil {
			t.Fatal(err)
		}
		seen := len(a.Events("Overlay.nodeHighlightRequested"))
		tab.call("Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": at.X, "y": at.Y})
		var m cdptest.Msg
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if evs := a.Events("Overlay.nodeHighlightRequested"); len(evs) > seen {
				m = evs[len(evs)-1]
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pointer over %s: no Overlay.nodeHighlightRequested in 30 s", c.where)
			}
		}
		var ev struct {
			NodeID int64 `json:"nodeId"`
		}
		_ = json.Unmarshal(m.Params, &ev)
		tr.sync()
		if n := tr.byID[ev.NodeID]; n == nil || n.NodeName != c.name {
			t.Fatalf("pointer over %s: %s; the window's tree has %+v for it", c.where, m.Raw, n)
		}
	}
	a.MustCall("Overlay.setInspectMode", map[string]any{"mode": "none"})
}
