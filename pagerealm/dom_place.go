package pagerealm

import (
	"errors"
	"fmt"

	"github.com/chromedp/cdproto/cdp"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The Elements panel's edits that make a node anew (DOM.setNodeName,
// DOM.moveTo, DOM.copyTo: drag and drop in the tree), DOM.getNodeForLocation
// and DOM.collectClassNamesFromSubtree (the Styles pane's class toggles),
// served by the page agent (client/js/domedit.mjs), and the undo stack's
// methods (docs/agent-note.md "Elements").

// placeAnswer renders a domPlace or domLocate result: the path's
// setChildNodes, then the node's new id.
func placeAnswer(call *runtimeCall, r *sourceproto.DOMResult, _ *objectMapper) ([][]byte, []byte, error) {
	if len(r.Nodes) != 1 || r.Nodes[0] == 0 {
		return nil, nil, errors.New("the page made the edit but answered no node for it")
	}
	return childrenEvents(call, r), cdpproject.NodeIDAnswer(nodeID(call.domNS, r.Nodes[0])), nil
}

// samePage resolves id as a node of n's page for a command on n: another
// page's node is refused, as a placeholder is.
func (h *Hub) samePageLocked(w *Window, n pageNode, id int64, what string) (uint64, error) {
	o, host, err := h.resolveNodeLocked(w, id)
	if err == nil {
		err = pageLocal(o, host, "")
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s: %w", what, err)
	case o.ns != n.ns:
		return 0, fmt.Errorf("%s %d belongs to another page than node %d: nodes cannot cross pages (copy its outerHTML instead)",
			what, id, nodeID(n.ns, n.local))
	}
	return o.local, nil
}

var (
	// SetNodeName answers the renamed element's new id; its events (the
	// old element removed, the new one inserted) come first.
	SetNodeName DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, host, err := h.resolveNodeLocked(w, p.NodeID)
		if err == nil {
			err = pageLocal(n, host, "")
		}
		if err != nil {
			return nil, err
		}
		if p.Name == "" {
			return nil, errors.New("name is required")
		}
		return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMPlace,
			&sourceproto.DOMParams{Node: n.local, Edit: sourceproto.EditSetNodeName, Name: p.Name}, placeAnswer)
	}

	MoveTo DOM = place(sourceproto.EditMoveTo)
	CopyTo DOM = place(sourceproto.EditCopyTo)

	// GetNodeForLocation hit-tests a point of a page's viewport. A page
	// target's window has one page; the combined window, one page per
	// frame side by side with no common viewport, names a page only when
	// it shows exactly one.
	GetNodeForLocation DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		d := &w.client.dom
		if !d.doc {
			return nil, errors.New("this window holds no document yet: ask DOM.getDocument first (open the Elements panel)")
		}
		var n pageNode
		live := 0
		for c, ns := range d.pages {
			if h.byRef[c.ref] == c {
				n, live = pageNode{ctx: c, ns: ns, local: pageDocument}, live+1
			}
		}
		switch {
		case live == 0:
			return nil, errors.New("no page is connected: the host has no DOM to hit-test")
		case live > 1:
			return nil, fmt.Errorf("this window shows %d pages, each in its own browser viewport, so x, y name no one page: "+
				"open the page's own target (its entry in /json/list) to locate nodes by point", live)
		}
		return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMLocate,
			&sourceproto.DOMParams{X: p.X, Y: p.Y, IgnorePointerEventsNone: p.IgnorePointerEventsNone},
			func(call *runtimeCall, r *sourceproto.DOMResult, _ *objectMapper) ([][]byte, []byte, error) {
				if len(r.Nodes) != 1 || r.Nodes[0] == 0 {
					return nil, nil, errors.New("no node found at given location")
				}
				id := nodeID(call.domNS, r.Nodes[0])
				return childrenEvents(call, r), cdpproject.NodeForLocationAnswer(id, cdp.FrameID(call.ctx.frame.id)), nil
			})
	}

	// CollectClassNamesFromSubtree answers the class names used below a
	// node (the node included), sorted.
	CollectClassNamesFromSubtree DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, host, err := h.resolveNodeLocked(w, p.NodeID)
		switch {
		case err != nil:
			return nil, err
		case host || n.local == pageOwner:
			return []byte(`{"classNames":[]}`), nil // the placeholders have no class
		}
		return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMClasses, &sourceproto.DOMParams{Node: n.local},
			func(_ *runtimeCall, r *sourceproto.DOMResult, _ *objectMapper) ([][]byte, []byte, error) {
				return nil, cdpproject.ClassNamesAnswer(r.ClassNames), nil
			})
	}
)

// place is DOM.moveTo's or DOM.copyTo's handler: node, targetNodeId and
// insertBeforeNodeId must be nodes of one page.
func place(e sourceproto.DOMEdit) DOM {
	return func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, host, err := h.resolveNodeLocked(w, p.NodeID)
		if err == nil {
			err = pageLocal(n, host, "")
		}
		if err != nil {
			return nil, err
		}
		if p.TargetNodeID == 0 {
			return nil, errors.New("targetNodeId is required")
		}
		target, err := h.samePageLocked(w, n, p.TargetNodeID, "targetNodeId")
		if err != nil {
			return nil, err
		}
		nodes := []uint64{target}
		if p.InsertBeforeNodeID != 0 {
			before, err := h.samePageLocked(w, n, p.InsertBeforeNodeID, "insertBeforeNodeId")
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, before)
		}
		return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMPlace,
			&sourceproto.DOMParams{Node: n.local, Edit: e, Nodes: nodes}, placeAnswer)
	}
}
