package pagerealm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/chromedp/cdproto/cdp"
	cdpoverlay "github.com/chromedp/cdproto/overlay"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The overlay of pages (docs/agent-note.md "Elements: the pages' DOM in one
// tree"): DOM.getBoxModel, Overlay.highlightNode / hideHighlight and
// DOM.setInspectedNode ($0) become domBox and domOverlay commands to the
// page that owns the node (client/js/overlay.mjs draws and keeps them). A
// window highlights in one page at a time: highlighting a node of another
// page first hides the one shown (domState.highlight), as Chrome's one
// overlay per target does. Host placeholders (the host document and the
// pages' <iframe> owners) have no box: their box model is empty,
// highlighting one hides the highlight, selecting one clears nothing.

// boxModelAnswer is DOM.getBoxModel's answer.
type boxModelAnswer struct {
	Model *sourceproto.DOMBox `json:"model"`
}

// The overlay methods (the method table's entries).
var (
	GetBoxModel DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, handle, host, err := h.targetLocked(w, p)
		if err != nil {
			return nil, err
		}
		if pageLocal(n, host, handle) != nil {
			// The host document is laid out nowhere: an empty box, so
			// the Layout pane shows zeros (the frontend asks for the
			// <body> it selects by default) rather than an error.
			return json.Marshal(boxModelAnswer{emptyBox()})
		}
		return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMBox, &sourceproto.DOMParams{Node: n.local, Handle: handle},
			func(_ *runtimeCall, r *sourceproto.DOMResult, _ *objectMapper) ([][]byte, []byte, error) {
				if r.Box == nil {
					return nil, nil, errors.New("the page answered without a box model")
				}
				b, err := json.Marshal(boxModelAnswer{r.Box})
				return nil, b, err
			})
	}

	HighlightNode DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, handle, host, err := h.targetLocked(w, p)
		if err != nil {
			return nil, err
		}
		d := &w.client.dom
		if d.highlight != 0 && (host || d.highlight != n.ns) {
			h.hideOwnLocked(w)
		}
		if host || (handle == "" && n.local == pageOwner) {
			return []byte(`{}`), nil // a placeholder: nothing to draw
		}
		d.highlight = n.ns
		return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMOverlay,
			&sourceproto.DOMParams{Overlay: sourceproto.OverlayHighlight, Node: n.local, Handle: handle}, answerEmpty)
	}

	HideHighlight DOM = func(h *Hub, w *Window, req Request, _ *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		d := &w.client.dom
		c, ok := d.byNS[d.highlight]
		ns := d.highlight
		d.highlight = 0
		if !ok || h.byRef[c.ref] != c {
			return []byte(`{}`), nil
		}
		// Answered once the page has hidden it.
		return nil, h.domCallLocked(w, req, pageNode{ctx: c, ns: ns}, sourceproto.MethodDOMOverlay,
			&sourceproto.DOMParams{Overlay: sourceproto.OverlayHide}, answerEmpty)
	}

	SetInspectedNode DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, host, err := h.resolveNodeLocked(w, p.NodeID)
		if err != nil {
			return nil, err
		}
		if host || n.local == pageOwner {
			return []byte(`{}`), nil // a placeholder is no page's $0
		}
		return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMOverlay,
			&sourceproto.DOMParams{Overlay: sourceproto.OverlayInspect, Node: n.local}, answerEmpty)
	}
)

// HighlightRect draws a rectangle (Overlay.highlightRect: the viewport's
// CSS pixels, as Chrome's) in place of the window's highlight. Its
// coordinates name no node, so it goes to the page that shows the window's
// highlight, else to the one page of its document; with several pages and
// no highlight it is refused with what to do.
var HighlightRect DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
	d := &w.client.dom
	if !d.doc {
		return nil, errors.New("this window holds no document yet: ask DOM.getDocument first (open the Elements panel)")
	}
	ns := d.highlight
	if c, ok := d.byNS[ns]; !ok || h.byRef[c.ref] != c {
		ns = 0
		live := 0
		for c, cns := range d.pages {
			if h.byRef[c.ref] == c {
				ns, live = cns, live+1
			}
		}
		if live != 1 {
			return nil, fmt.Errorf("the window's document holds %d pages and no highlight: a rect names no page, "+
				"so highlight a node of the page first (Overlay.highlightNode)", live)
		}
	}
	for _, v := range []float64{p.X, p.Y, p.Width, p.Height} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("x, y, width and height must be finite numbers")
		}
	}
	d.highlight = ns
	return nil, h.domCallLocked(w, req, pageNode{ctx: d.byNS[ns], ns: ns}, sourceproto.MethodDOMOverlay,
		&sourceproto.DOMParams{Overlay: sourceproto.OverlayRect, Rect: []float64{p.X, p.Y, p.Width, p.Height},
			Colors: []string{p.Color.css(), p.OutlineColor.css()}}, answerEmpty)
}

// rgba is CDP's DOM.RGBA with an alpha that may be absent (default 1);
// cdproto's drops an explicit 0.
type rgba struct {
	R, G, B int64
	A       *float64
}

// css is the color as CSS; transparent when absent (CDP's default for
// highlightRect's colors).
func (c *rgba) css() string {
	if c == nil {
		return "transparent"
	}
	a := 1.0
	if c.A != nil {
		a = *c.A
	}
	clamp := func(v int64) int64 { return min(max(v, 0), 255) }
	if math.IsNaN(a) {
		a = 1
	}
	return fmt.Sprintf("rgba(%d, %d, %d, %g)", clamp(c.R), clamp(c.G), clamp(c.B), min(max(a, 0), 1))
}

// emptyBox is the box model of a host placeholder.
func emptyBox() *sourceproto.DOMBox {
	z := func() []float64 { return make([]float64, 8) }
	return &sourceproto.DOMBox{Content: z(), Padding: z(), Border: z(), Margin: z()}
}

// answerEmpty renders a page command whose answer is {}.
func answerEmpty(*runtimeCall, *sourceproto.DOMResult, *objectMapper) ([][]byte, []byte, error) {
	return nil, []byte(`{}`), nil
}

// hideOwnLocked hides w's highlight in the page showing it, as the worker's
// own command (a window that highlights in another page, or a
// placeholder). A page whose backlog is full keeps it until the window
// hides or highlights there again.
func (h *Hub) hideOwnLocked(w *Window) {
	d := &w.client.dom
	c, ok := d.byNS[d.highlight]
	ns := d.highlight
	d.highlight = 0
	if !ok || h.byRef[c.ref] != c || h.reg == nil || !c.caps.Has(sourceproto.CapDOM) {
		return
	}
	cmd := &sourceproto.RuntimeCommand{}
	cmd.SetDOM(sourceproto.MethodDOMOverlay, &sourceproto.DOMParams{Doc: ns, Overlay: sourceproto.OverlayHide})
	call := &runtimeCall{ref: c.ref, ctx: c, page: c.frame.displayName(), realm: c.realm.ID, sess: w, wire: wireSession(w),
		method: cmd.Method, cdp: "Overlay.hideHighlight", ctxID: c.id, size: commandOverhead,
		own: func(*sourceproto.RuntimeResult, string) {}}
	h.registerLocked(call, cmd)
	if h.admitLocked(c, call) != nil {
		h.forgetCallLocked(cmd.ID)
	}
}

// inspectNodeRequested is the event of a node the user picked in a page
// in inspect mode: the frontend pushes it by its backend id (= node id,
// dom.go) and reveals it.
func inspectNodeRequested(id cdp.NodeID) []byte {
	return cdpproject.Event("Overlay.inspectNodeRequested", &cdpoverlay.EventInspectNodeRequested{BackendNodeID: cdp.BackendNodeID(id)})
}

// nodeHighlightRequested is the event of the node inspect mode highlights
// under the pointer: the page sent its path first, so the frontend has the
// node and selects it in the tree, as Chrome's tree follows the pointer.
func nodeHighlightRequested(id cdp.NodeID) []byte {
	return cdpproject.Event("Overlay.nodeHighlightRequested", &cdpoverlay.EventNodeHighlightRequested{NodeID: id})
}

// SetInspectMode starts or ends inspect mode in every page of the
// window's document (a mode other than none starts it); answered when each
// page has answered, failed or timed out. A page that connects later is
// not in inspect mode until the window sets it again.
var SetInspectMode DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
	action := sourceproto.OverlayPick
	if p.Mode == "" || p.Mode == "none" {
		action = sourceproto.OverlayUnpick
	}
	type target struct {
		c  *clientContext
		ns uint64
	}
	var pages []target
	for c, ns := range w.client.dom.pages {
		if h.byRef[c.ref] == c && c.caps.Has(sourceproto.CapDOM) && h.reg != nil {
			pages = append(pages, target{c, ns})
		}
	}
	if len(pages) == 0 {
		return []byte(`{}`), nil
	}
	id, pending := req.ID, len(pages)
	for _, pt := range pages {
		done := func(_ *sourceproto.RuntimeResult, why string) {
			if why != "" {
				h.host.Logf("Overlay.setInspectMode in the page %q: %s", pt.c.frame.displayName(), why)
			}
			if pending--; pending == 0 {
				w.enqueue(appendResult(nil, id, []byte(`{}`)))
			}
		}
		w.client.dom.markUsed(pt.ns)
		cmd := &sourceproto.RuntimeCommand{}
		cmd.SetDOM(sourceproto.MethodDOMOverlay, &sourceproto.DOMParams{Doc: pt.ns, Overlay: action})
		call := &runtimeCall{ref: pt.c.ref, ctx: pt.c, page: pt.c.frame.displayName(), realm: pt.c.realm.ID, sess: w,
			wire: wireSession(w), method: cmd.Method, cdp: req.Method, ctxID: pt.c.id, size: commandOverhead, own: done}
		h.registerLocked(call, cmd)
		if werr := h.admitLocked(pt.c, call); werr != nil {
			h.forgetCallLocked(cmd.ID)
			done(nil, werr.Message)
		}
	}
	return nil, nil
}
