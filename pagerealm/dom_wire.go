package pagerealm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The one boundary between CDP DOM and the page's DOM agent: a window's DOM
// request is answered from the host document (dom.go) or becomes a dom*
// command of the Runtime union to the page that owns the node (the
// Runtime's flow, deadline and cancellation), and the page's result becomes
// DOM events and the answer, with the window's ids.

// cdpDOMParams is the union of the CDP DOM params the page backend reads.
type cdpDOMParams struct {
	NodeID             int64   `json:"nodeId"`
	BackendNodeID      int64   `json:"backendNodeId"`
	ObjectID           string  `json:"objectId"`
	Depth              int64   `json:"depth"`
	Pierce             bool    `json:"pierce"`
	ObjectGroup        string  `json:"objectGroup"`
	ExecutionContextID *int    `json:"executionContextId"`
	Name               string  `json:"name"`
	Value              string  `json:"value"`
	Text               string  `json:"text"`
	OuterHTML          string  `json:"outerHTML"`
	BackendNodeIDs     []int64 `json:"backendNodeIds"`
	FrameID            string  `json:"frameId"`
	Mode               string  `json:"mode"` // Overlay.setInspectMode
	// Overlay.highlightRect's (overlay.go); X and Y also
	// DOM.getNodeForLocation's (dom_place.go).
	X            float64 `json:"x"`
	Y            float64 `json:"y"`
	Width        float64 `json:"width"`
	Height       float64 `json:"height"`
	Color        *rgba   `json:"color"`
	OutlineColor *rgba   `json:"outlineColor"`
	// DOM.moveTo/copyTo and DOM.getNodeForLocation (dom_place.go).
	TargetNodeID            int64 `json:"targetNodeId"`
	InsertBeforeNodeID      int64 `json:"insertBeforeNodeId"`
	IgnorePointerEventsNone bool  `json:"ignorePointerEventsNone"`
	// The CSS methods' (css.go).
	StyleSheetID string           `json:"styleSheetId"`
	Edits        []cssEdit        `json:"edits"`
	RuleText     string           `json:"ruleText"`
	Location     *css.SourceRange `json:"location"`
	// CSS.forcePseudoState's, setRuleSelector's and set…Text's.
	ForcedPseudoClasses []string         `json:"forcedPseudoClasses"`
	Selector            string           `json:"selector"`
	Range               *css.SourceRange `json:"range"`
}

// DOM is a DOM method's handler (the method table's DOM entries): it runs
// under Hub.mu, queues the events that go before its answer in out, and
// returns the answer; (nil, nil) when a page command will answer.
type DOM func(h *Hub, w *Window, req Request, p *cdpDOMParams, out *[][]byte) ([]byte, error)

// domRender turns a page's DOM result into the events before the answer
// and the answer.
type domRender func(call *runtimeCall, res *sourceproto.DOMResult, m *objectMapper) (events [][]byte, answer []byte, err error)

// DOMRequest answers a window's DOM request by its handler.
func (h *Hub) DOMRequest(w *Window, req Request, d DOM) {
	var p cdpDOMParams
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &p); err != nil {
			w.refuse(req, &wireError{codeServerError, fmt.Sprintf("%s: invalid params: %v", req.Method, err)})
			return
		}
	}
	var out [][]byte
	h.mu.Lock()
	answer, err := d(h, w, req, &p, &out)
	h.mu.Unlock()
	for _, m := range out {
		w.enqueue(m)
	}
	switch {
	case err != nil:
		w.refuse(req, &wireError{codeServerError, req.Method + ": " + err.Error()})
	case answer != nil:
		w.enqueue(appendResult(nil, req.ID, answer))
	}
}

var errPlaceholder = errors.New("the host document and the pages' <iframe> owners are the worker's placeholders " +
	"(the Node.js host has no DOM): use a node inside a page's document")

// target is the page node a request names by nodeId, backendNodeId or
// objectId; handle is set for an objectId.
func (h *Hub) targetLocked(w *Window, p *cdpDOMParams) (n pageNode, handle string, host bool, err error) {
	switch {
	case p.ObjectID != "":
		n, handle, err = h.objectNodeLocked(w, p.ObjectID)
		return n, handle, false, err
	case p.NodeID != 0:
		n, host, err = h.resolveNodeLocked(w, p.NodeID)
	case p.BackendNodeID != 0:
		n, host, err = h.resolveNodeLocked(w, p.BackendNodeID)
	default:
		err = errors.New("give one of nodeId, backendNodeId, objectId")
	}
	return n, "", host, err
}

// objectNodeLocked is the page (and Runtime handle) behind a window's
// objectId naming a node.
func (h *Hub) objectNodeLocked(w *Window, objectID string) (pageNode, string, error) {
	if !object.Owns(objectID) {
		return pageNode{}, "", fmt.Errorf("object %s belongs to the Node.js host, which has no DOM", objectID)
	}
	e, ok := w.objects.Entry(objectID)
	if !ok {
		return pageNode{}, "", errors.New("could not find object with given id")
	}
	ref := sourceproto.SourceRef{ID: strings.TrimPrefix(e.Handle.Realm, "client:"), Gen: e.Handle.Generation, Role: sourceproto.RoleClient}
	c := h.byRef[ref]
	if c == nil {
		return pageNode{}, "", fmt.Errorf("object %s belongs to a page load that is gone", objectID)
	}
	ns, ok := w.client.dom.pages[c]
	if !ok {
		return pageNode{}, "", errors.New("this window holds no document yet: ask DOM.getDocument first (open the Elements panel)")
	}
	return pageNode{ctx: c, ns: ns}, e.Handle.ID, nil
}

// domCallLocked sends a dom* command for a window's request to the page
// of n; render answers it.
func (h *Hub) domCallLocked(w *Window, req Request, n pageNode, m sourceproto.RuntimeMethod, p *sourceproto.DOMParams, render domRender) error {
	c := n.ctx
	if !c.caps.Has(sourceproto.CapDOM) || h.reg == nil {
		return fmt.Errorf("the page %q runs a client agent without DOM support: reload it to load this worker's client.js", c.frame.displayName())
	}
	p.Doc = n.ns
	w.client.dom.markUsed(n.ns)
	cmd := &sourceproto.RuntimeCommand{}
	cmd.SetDOM(m, p)
	call := &runtimeCall{ref: c.ref, ctx: c, page: c.frame.displayName(), realm: c.realm.ID, sess: w, wire: wireSession(w),
		reqID: req.ID, method: m, cdp: req.Method, ctxID: c.id, group: p.ObjectGroup, size: len(req.Params) + commandOverhead,
		dom: render, domNS: n.ns}
	h.registerLocked(call, cmd)
	if werr := h.admitLocked(c, call); werr != nil {
		h.forgetCallLocked(cmd.ID)
		return werr
	}
	return nil
}

// deliverDOMLocked answers a window's DOM request from its page's result.
func (h *Hub) deliverDOMLocked(call *runtimeCall, res *sourceproto.RuntimeResult, m *objectMapper) bool {
	w := call.sess
	fail := func(why string) bool {
		m.rollback()
		w.enqueue(appendError(nil, call.reqID, "", &wireError{codeServerError, call.cdp + ": " + why}))
		return false
	}
	if w.client.dom.byNS[call.domNS] != call.ctx {
		return fail("the window's document was replaced (DOM.getDocument, or the page reloaded) before the page answered")
	}
	r := res.DOMResultOf()
	if r == nil {
		return fail("the page answered without a DOM result")
	}
	events, answer, err := call.dom(call, r, m)
	if err == nil && m.full {
		err = h.objectsFullLocked(w, call.realm, call.page)
	}
	if err != nil {
		return fail(err.Error())
	}
	for _, e := range events {
		w.enqueue(e)
	}
	w.enqueue(appendResult(nil, call.reqID, answer))
	return true
}

// childrenEvents are a result's setChildNodes, in the window's ids.
func childrenEvents(call *runtimeCall, r *sourceproto.DOMResult) [][]byte {
	ids := idsOf(call.domNS)
	out := make([][]byte, 0, len(r.Children))
	for i := range r.Children {
		ch := &r.Children[i]
		out = append(out, cdpproject.SetChildNodes(ids(ch.Parent), cdpproject.DOMNodes(ch.Nodes, ids)))
	}
	return out
}

// pageLocal refuses the placeholders where a page node is needed (a
// node named by a Runtime handle is the page's own).
func pageLocal(n pageNode, host bool, handle string) error {
	if host || (handle == "" && n.ctx != nil && n.local == pageOwner) {
		return errPlaceholder
	}
	return nil
}

// The DOM methods (the method table's DOM entries).
var (
	DOMEnable DOM = func(*Hub, *Window, Request, *cdpDOMParams, *[][]byte) ([]byte, error) { return []byte(`{}`), nil }

	DOMDisable DOM = func(h *Hub, w *Window, _ Request, _ *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		h.dropDocumentLocked(w)
		return []byte(`{}`), nil
	}

	GetDocument DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		root := h.hostDocumentLocked(w)
		if w.client.target != "" {
			return h.targetDocumentAnswerLocked(w, req, root, p.Depth) // pagetarget.go
		}
		// The pages' documents are at depth 4 (#document, html, body,
		// iframe); as in Chrome, only pierce goes into them.
		if !p.Pierce || (p.Depth >= 0 && p.Depth <= hostDepth) {
			return cdpproject.DocumentAnswer(root), nil
		}
		depth := int64(-1)
		if p.Depth > 0 {
			depth = p.Depth - hostDepth
		}
		h.piercedDocumentLocked(w, req, root, depth)
		return nil, nil
	}

	RequestChildNodes DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, out *[][]byte) ([]byte, error) {
		n, host, err := h.resolveNodeLocked(w, p.NodeID)
		switch {
		case err != nil:
			return nil, err
		case host:
			*out = append(*out, cdpproject.SetChildNodes(cdp.NodeID(p.NodeID), h.hostChildrenLocked(w, cdp.NodeID(p.NodeID))))
			return []byte(`{}`), nil
		case n.local == pageOwner:
			return []byte(`{}`), nil // its child is its contentDocument, which the window has
		}
		depth := p.Depth
		if depth == 0 {
			depth = 1
		}
		return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMChildren, &sourceproto.DOMParams{Node: n.local, Depth: depth, Pierce: p.Pierce},
			func(call *runtimeCall, r *sourceproto.DOMResult, _ *objectMapper) ([][]byte, []byte, error) {
				return childrenEvents(call, r), []byte(`{}`), nil
			})
	}

	DescribeNode DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, handle, host, err := h.targetLocked(w, p)
		if err == nil {
			err = pageLocal(n, host, handle)
		}
		if err != nil {
			return nil, err
		}
		return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMDescribe, &sourceproto.DOMParams{Node: n.local, Handle: handle, Depth: p.Depth, Pierce: p.Pierce},
			func(call *runtimeCall, r *sourceproto.DOMResult, _ *objectMapper) ([][]byte, []byte, error) {
				return nil, cdpproject.NodeAnswer(cdpproject.DOMNode(r.Node, idsOf(call.domNS))), nil
			})
	}

	ResolveNode DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		if p.ObjectID != "" {
			return nil, errors.New("give nodeId or backendNodeId")
		}
		n, _, host, err := h.targetLocked(w, p)
		if err == nil {
			err = pageLocal(n, host, "")
		}
		if err != nil {
			return nil, err
		}
		if p.ExecutionContextID != nil && *p.ExecutionContextID != n.ctx.id {
			return nil, fmt.Errorf("node %d belongs to the page %q (context %d), not to context %d: nodes cannot cross pages",
				max(p.NodeID, p.BackendNodeID), n.ctx.frame.displayName(), n.ctx.id, *p.ExecutionContextID)
		}
		return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMResolve, &sourceproto.DOMParams{Node: n.local, ObjectGroup: p.ObjectGroup},
			func(_ *runtimeCall, r *sourceproto.DOMResult, m *objectMapper) ([][]byte, []byte, error) {
				return nil, cdpproject.ResolveNodeAnswer(r.Object, m.values()), nil
			})
	}

	RequestNode DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		if p.ObjectID == "" {
			return nil, errors.New("objectId is required")
		}
		n, handle, err := h.objectNodeLocked(w, p.ObjectID)
		if err != nil {
			return nil, err
		}
		return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMPush, &sourceproto.DOMParams{Handle: handle},
			func(call *runtimeCall, r *sourceproto.DOMResult, _ *objectMapper) ([][]byte, []byte, error) {
				if len(r.Nodes) != 1 || r.Nodes[0] == 0 {
					return nil, nil, errors.New("the node is not in its page's document (detached, in a closed shadow root made before the page's client loaded, or whitespace-only text)")
				}
				return childrenEvents(call, r), cdpproject.NodeIDAnswer(nodeID(call.domNS, r.Nodes[0])), nil
			})
	}

	PushNodesByBackendIDs DOM = pushNodesByBackendIDs

	GetOuterHTML DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, handle, host, err := h.targetLocked(w, p)
		if err == nil {
			err = pageLocal(n, host, handle)
		}
		if err != nil {
			return nil, err
		}
		return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMOuterHTML, &sourceproto.DOMParams{Node: n.local, Handle: handle},
			func(_ *runtimeCall, r *sourceproto.DOMResult, _ *objectMapper) ([][]byte, []byte, error) {
				return nil, cdpproject.OuterHTMLAnswer(r.HTML), nil
			})
	}

	SetAttributeValue   DOM = edit(sourceproto.EditSetAttributeValue)
	SetAttributesAsText DOM = edit(sourceproto.EditSetAttributesAsText)
	RemoveAttribute     DOM = edit(sourceproto.EditRemoveAttribute)
	SetNodeValue        DOM = edit(sourceproto.EditSetNodeValue)
	RemoveNode          DOM = edit(sourceproto.EditRemoveNode)
	SetOuterHTML        DOM = edit(sourceproto.EditSetOuterHTML)

	GetFrameOwner DOM = func(h *Hub, w *Window, _ Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		if p.FrameID == h.targetID {
			return nil, errors.New("the host frame is the top frame: it has no owner")
		}
		for c, ns := range w.client.dom.pages {
			if c.frame.id == p.FrameID {
				return cdpproject.FrameOwnerAnswer(nodeID(ns, pageOwner)), nil
			}
		}
		return nil, fmt.Errorf("no frame %q in this window's document (ask DOM.getDocument first, or the page has gone)", p.FrameID)
	}
)

// edit is a DOM edit's handler: the page makes it; its mutation events
// come before the answer.
func edit(e sourceproto.DOMEdit) DOM {
	return func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, host, err := h.resolveNodeLocked(w, p.NodeID)
		if err == nil {
			err = pageLocal(n, host, "")
		}
		if err != nil {
			return nil, err
		}
		text := p.Text
		if e == sourceproto.EditSetOuterHTML {
			text = p.OuterHTML
		}
		return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMEdit,
			&sourceproto.DOMParams{Node: n.local, Edit: e, Name: p.Name, Value: p.Value, Text: text},
			func(*runtimeCall, *sourceproto.DOMResult, *objectMapper) ([][]byte, []byte, error) {
				return nil, []byte(`{}`), nil
			})
	}
}

// pushNodesByBackendIDs: backend node ids are the window's node ids
// (dom.go); the page pushes those it still has, with their paths. Ids of
// one page per call (the frontend asks per view).
func pushNodesByBackendIDs(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
	var page *pageNode
	var locals []uint64
	for _, id := range p.BackendNodeIDs {
		n, host, err := h.resolveNodeLocked(w, id)
		if err != nil || host || n.local == pageOwner {
			continue // answered as is (host, owner) or 0 (gone) below
		}
		if page != nil && page.ns != n.ns {
			return nil, errors.New("backendNodeIds of several pages in one call: ask once per page")
		}
		page = &n
		locals = append(locals, n.local)
	}
	local := func(pushed func(uint64) cdp.NodeID) []cdp.NodeID {
		out := make([]cdp.NodeID, 0, len(p.BackendNodeIDs))
		for _, id := range p.BackendNodeIDs {
			n, host, err := h.resolveNodeLocked(w, id)
			switch {
			case err != nil:
				out = append(out, 0)
			case host || n.local == pageOwner:
				out = append(out, cdp.NodeID(id))
			default:
				out = append(out, pushed(n.local))
			}
		}
		return out
	}
	if page == nil {
		return cdpproject.NodeIDsAnswer(local(func(uint64) cdp.NodeID { return 0 })), nil
	}
	if len(locals) > sourceproto.MaxDOMPush {
		return nil, fmt.Errorf("at most %d backendNodeIds per call", sourceproto.MaxDOMPush)
	}
	return nil, h.domCallLocked(w, req, *page, sourceproto.MethodDOMPush, &sourceproto.DOMParams{Nodes: locals},
		func(call *runtimeCall, r *sourceproto.DOMResult, _ *objectMapper) ([][]byte, []byte, error) {
			got := map[uint64]uint64{}
			for i, l := range locals {
				if i < len(r.Nodes) {
					got[l] = r.Nodes[i]
				}
			}
			// Under Hub.mu (deliverDOMLocked's caller holds it).
			ids := local(func(l uint64) cdp.NodeID {
				if v := got[l]; v != 0 {
					return nodeID(call.domNS, v)
				}
				return 0
			})
			return childrenEvents(call, r), cdpproject.NodeIDsAnswer(ids), nil
		})
}

// hostDepth is the depth of the pages' documents in the host document.
const hostDepth = 4

// piercedDocumentLocked answers DOM.getDocument with pierce: every page's
// document with its children to depth, asked of all pages at once; the
// answer goes when each has answered, failed or run out of time (a page
// that did not answer keeps its document unexpanded).
func (h *Hub) piercedDocumentLocked(w *Window, req Request, root *cdp.Node, depth int64) {
	body := root.Children[0].Children[1]
	type part struct {
		c   *clientContext
		ns  uint64
		doc *cdp.Node
	}
	var parts []part
	for _, o := range body.Children {
		if o.ContentDocument == nil {
			continue
		}
		ns := uint64(o.NodeID) >> nsShift
		if c := w.client.dom.byNS[ns]; c != nil && c.caps.Has(sourceproto.CapDOM) && h.reg != nil {
			parts = append(parts, part{c, ns, o.ContentDocument})
		}
	}
	id := req.ID
	if len(parts) == 0 {
		w.enqueue(appendResult(nil, id, cdpproject.DocumentAnswer(root)))
		return
	}
	pending := len(parts)
	finish := func() {
		if pending--; pending == 0 {
			w.enqueue(appendResult(nil, id, cdpproject.DocumentAnswer(root)))
		}
	}
	for _, pt := range parts {
		done := func(res *sourceproto.RuntimeResult, why string) {
			var r *sourceproto.DOMResult
			if res != nil {
				r = res.DOMResultOf()
			}
			if r != nil && len(r.Children) == 1 && w.client.dom.byNS[pt.ns] == pt.c {
				pt.doc.Children = cdpproject.DOMNodes(r.Children[0].Nodes, idsOf(pt.ns))
				pt.doc.ChildNodeCount = int64(len(pt.doc.Children))
			} else if why != "" {
				h.host.Logf("DOM.getDocument (pierce) in the page %q: %s", pt.c.frame.displayName(), why)
			}
			finish()
		}
		w.client.dom.markUsed(pt.ns)
		cmd := &sourceproto.RuntimeCommand{}
		cmd.SetDOM(sourceproto.MethodDOMChildren, &sourceproto.DOMParams{Doc: pt.ns, Node: pageDocument, Depth: depth, Pierce: true})
		call := &runtimeCall{ref: pt.c.ref, ctx: pt.c, page: pt.c.frame.displayName(), realm: pt.c.realm.ID, sess: w,
			wire: wireSession(w), method: cmd.Method, cdp: "DOM.getDocument", ctxID: pt.c.id, size: commandOverhead, own: done}
		h.registerLocked(call, cmd)
		if werr := h.admitLocked(pt.c, call); werr != nil {
			h.forgetCallLocked(cmd.ID)
			done(nil, werr.Message)
		}
	}
}
