package pagerealm

import (
	"fmt"

	"github.com/chromedp/cdproto/cdp"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The DOM of pages in one tree (docs/agent-note.md "Elements: the DOM of
// pages"). A window's document is the host frame's, which has no DOM of its
// own: an empty HTML document whose <body> holds one frame owner
// (<iframe>) per connected page, with the page's frameId and its document
// as contentDocument, as Chrome shows a same-process iframe and as
// Page.getResourceTree lists the pages' frames.
//
// Node ids are the worker's, per window: every (window, page generation,
// document) gets a namespace ns from the hub's counter, and a page's node
// id local becomes ns<<nsShift | local in the window. The page's own ids
// are per DevTools session and per namespace (sourceproto.DOMParams.Doc),
// so a window can address only its own namespaces, a namespace names
// exactly one page generation, and an id of an earlier document, of a page
// that reloaded or of another window is refused by name. Local 0 is the
// page's frame owner, local 1 its document. Namespace 0 is the host
// document's (hostIDs).
//
// DOM.getDocument starts a new document for the window (as Chrome
// discards its node bindings there): new namespaces for every page, and
// the pages are told to forget the old ones (domDisable). A page that
// connects is inserted into every window's <body>; one that goes (reload,
// close) is removed, so a reload swaps the page's subtree.

// nsShift: a page's local ids stay below 2^32 (the page agent holds at
// most MAX_NODES_PER_SESSION per session), and namespaces below 2^21, so a
// window's node id stays a JavaScript safe integer.
const (
	nsShift       = 32
	maxNamespaces = 1<<(53-nsShift) - 1
)

// The host document's nodes (namespace 0).
const (
	hostDocumentID cdp.NodeID = 1 + iota
	hostHTMLID
	hostHeadID
	hostBodyID
	hostNoteID
)

// hostNote is the comment first in the host document's <body>.
const hostNote = " The Node.js host has no DOM: each page connected to inspector-worker is a frame below. "

// pageOwner and pageDocument are the local ids of a page's frame owner and
// document in its namespace.
const (
	pageOwner    = 0
	pageDocument = 1
)

// domState is a window's DOM. Guarded by Hub.mu.
type domState struct {
	// doc: the window holds a document (DOM.getDocument answered); page
	// events reach only such windows.
	doc   bool
	pages map[*clientContext]uint64 // the namespace of each page generation in the document
	byNS  map[uint64]*clientContext
	// used are the namespaces the window sent a page command in: only
	// those pages hold nodes for it (a page never asked runs no DOM code).
	used map[uint64]bool
	// searches are the window's DOM.performSearch results (dom_search.go).
	searches map[string]*domSearch
	// highlight is the namespace of the page showing the window's
	// highlight (overlay.go); 0: none.
	highlight uint64
	// edits are the styles with a live edit in flight (css_edit.go).
	edits map[styleKey]*liveEdits
}

// markUsed notes that the window sent a page command in namespace ns.
func (d *domState) markUsed(ns uint64) {
	if d.used == nil {
		d.used = map[uint64]bool{}
	}
	d.used[ns] = true
}

// nodeID is a page node's id in the window.
func nodeID(ns, local uint64) cdp.NodeID { return cdp.NodeID(ns<<nsShift | local) }

// idsOf maps a page's ids in namespace ns.
func idsOf(ns uint64) cdpproject.NodeIDs {
	return func(local uint64) cdp.NodeID { return nodeID(ns, local) }
}

// newNamespaceLocked gives page generation c a namespace in w's document.
func (h *Hub) newNamespaceLocked(w *Window, c *clientContext) (uint64, bool) {
	if h.nextNS >= maxNamespaces {
		return 0, false
	}
	h.nextNS++
	d := &w.client.dom
	if d.pages == nil {
		d.pages, d.byNS = map[*clientContext]uint64{}, map[uint64]*clientContext{}
	}
	d.pages[c], d.byNS[h.nextNS] = h.nextNS, c
	return h.nextNS, true
}

// dropDocumentLocked ends w's document: the pages forget the window's
// nodes (domDisable through their flows).
func (h *Hub) dropDocumentLocked(w *Window) {
	d := &w.client.dom
	for c, ns := range d.pages {
		if d.used[ns] && h.byRef[c.ref] == c {
			h.domOwnCallLocked(w, c, ns)
		}
	}
	*d = domState{}
}

// domOwnCallLocked tells page generation c to forget w's nodes of
// namespace ns: a worker-own command, never refused for a full backlog
// (the window forgot them already).
func (h *Hub) domOwnCallLocked(w *Window, c *clientContext, ns uint64) {
	if h.reg == nil || !c.caps.Has(sourceproto.CapDOM) {
		return
	}
	cmd := &sourceproto.RuntimeCommand{}
	cmd.SetDOM(sourceproto.MethodDOMDisable, &sourceproto.DOMParams{Doc: ns})
	call := &runtimeCall{ref: c.ref, ctx: c, page: c.frame.displayName(), realm: c.realm.ID, sess: w,
		wire: wireSession(w), method: cmd.Method, cdp: "DOM.disable", ctxID: c.id, size: commandOverhead}
	h.registerLocked(call, cmd)
	if h.admitLocked(c, call) != nil {
		h.forgetCallLocked(cmd.ID)
	}
}

// hostDocumentLocked is the host document of w, with a new namespace for
// every live page.
func (h *Hub) hostDocumentLocked(w *Window) *cdp.Node {
	h.dropDocumentLocked(w)
	w.client.dom.doc = true
	if w.client.target != "" {
		return h.targetDocumentLocked(w) // pagetarget.go
	}
	body := &cdp.Node{NodeID: hostBodyID, BackendNodeID: cdp.BackendNodeID(hostBodyID), NodeType: 1, NodeName: "BODY", LocalName: "body",
		Children: []*cdp.Node{{NodeID: hostNoteID, BackendNodeID: cdp.BackendNodeID(hostNoteID), NodeType: 8, NodeName: "#comment", NodeValue: hostNote}}}
	for _, id := range h.order {
		c := h.frames[id].ctx
		if c == nil {
			continue
		}
		if ns, ok := h.newNamespaceLocked(w, c); ok {
			body.Children = append(body.Children, h.ownerNode(c, ns))
		}
	}
	body.ChildNodeCount = int64(len(body.Children))
	head := &cdp.Node{NodeID: hostHeadID, BackendNodeID: cdp.BackendNodeID(hostHeadID), NodeType: 1, NodeName: "HEAD", LocalName: "head", Children: []*cdp.Node{}}
	html := &cdp.Node{NodeID: hostHTMLID, BackendNodeID: cdp.BackendNodeID(hostHTMLID), NodeType: 1, NodeName: "HTML", LocalName: "html",
		ChildNodeCount: 2, Children: []*cdp.Node{head, body}}
	return &cdp.Node{NodeID: hostDocumentID, BackendNodeID: cdp.BackendNodeID(hostDocumentID), NodeType: 9, NodeName: "#document",
		ChildNodeCount: 1, Children: []*cdp.Node{html}, FrameID: cdp.FrameID(h.targetID)}
}

// ownerNode is page generation c's frame owner in namespace ns, with its
// document (children unknown until the window asks: requestChildNodes).
func (h *Hub) ownerNode(c *clientContext, ns uint64) *cdp.Node {
	f := c.frame
	owner, doc := nodeID(ns, pageOwner), nodeID(ns, pageDocument)
	return &cdp.Node{
		NodeID: owner, BackendNodeID: cdp.BackendNodeID(owner), NodeType: 1, NodeName: "IFRAME", LocalName: "iframe",
		Attributes: []string{"src", f.url, "title", f.displayName()}, FrameID: cdp.FrameID(f.id),
		ContentDocument: &cdp.Node{NodeID: doc, BackendNodeID: cdp.BackendNodeID(doc), NodeType: 9, NodeName: "#document",
			DocumentURL: f.url, BaseURL: f.url, ChildNodeCount: 1, FrameID: cdp.FrameID(f.id)},
	}
}

// hostChildren is what DOM.setChildNodes says of a host node's children
// (the window has them all from getDocument; a frontend that asks again
// gets them again).
func (h *Hub) hostChildrenLocked(w *Window, id cdp.NodeID) []*cdp.Node {
	d := w.client.dom
	switch id {
	case hostDocumentID:
		return []*cdp.Node{{NodeID: hostHTMLID, BackendNodeID: cdp.BackendNodeID(hostHTMLID), NodeType: 1, NodeName: "HTML", LocalName: "html", ChildNodeCount: 2}}
	case hostHTMLID:
		return []*cdp.Node{
			{NodeID: hostHeadID, BackendNodeID: cdp.BackendNodeID(hostHeadID), NodeType: 1, NodeName: "HEAD", LocalName: "head"},
			{NodeID: hostBodyID, BackendNodeID: cdp.BackendNodeID(hostBodyID), NodeType: 1, NodeName: "BODY", LocalName: "body", ChildNodeCount: int64(1 + len(d.pages))},
		}
	case hostBodyID:
		out := []*cdp.Node{{NodeID: hostNoteID, BackendNodeID: cdp.BackendNodeID(hostNoteID), NodeType: 8, NodeName: "#comment", NodeValue: hostNote}}
		for _, fid := range h.order {
			if c := h.frames[fid].ctx; c != nil {
				if ns, ok := d.pages[c]; ok {
					out = append(out, h.ownerNode(c, ns))
				}
			}
		}
		return out
	}
	return []*cdp.Node{}
}

// pageOpenedDOMLocked inserts a new page generation into every window's
// document, after the owner of the page before it.
func (h *Hub) pageOpenedDOMLocked(c *clientContext) {
	for _, w := range h.sessionsLocked() {
		d := &w.client.dom
		if !d.doc || !w.client.sees(c.frame) {
			continue
		}
		if w.client.target != "" {
			h.targetDocumentUpdatedLocked(w) // pagetarget.go
			continue
		}
		ns, ok := h.newNamespaceLocked(w, c)
		if !ok {
			continue
		}
		prev := hostNoteID
		for _, fid := range h.order {
			o := h.frames[fid].ctx
			if o == c {
				break
			}
			if ons, ok := d.pages[o]; ok && o != nil {
				prev = nodeID(ons, pageOwner)
			}
		}
		h.domPushLocked(w, cdpproject.ChildNodeInserted(hostBodyID, prev, h.ownerNode(c, ns)))
	}
}

// pageClosedDOMLocked removes a page generation that ended from every
// window's document; its namespaces are gone with it.
func (h *Hub) pageClosedDOMLocked(c *clientContext) {
	for _, w := range h.sessionsLocked() {
		d := &w.client.dom
		ns, ok := d.pages[c]
		if !ok {
			continue
		}
		delete(d.pages, c)
		delete(d.byNS, ns)
		// Its mark too: a window kept one per load of a page it expanded
		// until its next DOM.getDocument (TestDOMPageGoneFreesNamespaces).
		delete(d.used, ns)
		if w.client.target == "" { // a page target's document goes with its load (pageOpenedDOMLocked)
			h.domPushLocked(w, cdpproject.ChildNodeRemoved(hostBodyID, nodeID(ns, pageOwner)))
		}
	}
}

// domEventsLocked projects a page's dom.event frame into the window it is
// for. Events of a document the window no longer holds are dropped (the
// page forgets it on its domDisable); a window that has fallen behind loses
// its document (domPushLocked).
func (h *Hub) domEventsLocked(ref sourceproto.SourceRef, ev *sourceproto.DOMEvents) {
	c := h.byRef[ref]
	if c == nil {
		return
	}
	var w *Window
	for _, s := range h.sessionsLocked() {
		if wireSession(s) == ev.Session {
			w = s
		}
	}
	if w == nil || w.client.dom.pages[c] != ev.Doc || !w.client.dom.doc {
		return
	}
	ids := idsOf(ev.Doc)
	for i := range ev.Events {
		e := &ev.Events[i]
		msg := cdpproject.DOMEvent(e, ids)
		switch e.Kind {
		case sourceproto.EventDocumentUpdated:
			// The page forgot the window's nodes (its mutations overflowed).
			msg = cdpproject.DocumentUpdated()
		case sourceproto.EventInspectNodeRequested:
			msg = inspectNodeRequested(ids(e.Node)) // overlay.go
		case sourceproto.EventNodeHighlightRequested:
			msg = nodeHighlightRequested(ids(e.Node)) // overlay.go
		}
		if msg != nil && !h.domPushLocked(w, msg) {
			return
		}
	}
}

// domPushLocked queues a DOM event to w. A window that has fallen behind
// loses it, and with it the tree it shows: it is told documentUpdated
// ahead of its backlog and its document is dropped (the pages forget its
// nodes), so it asks for the document again rather than silently diverge.
func (h *Hub) domPushLocked(w *Window, msg []byte) bool {
	if w.sink.PushLossy(msg) {
		return true
	}
	w.client.dropped++
	_ = w.sink.PushFront(cdpproject.DocumentUpdated())
	h.dropDocumentLocked(w)
	return false
}

// pageNode is a window's node id resolved to its page: the page generation,
// its namespace in the window and the page's id.
type pageNode struct {
	ctx   *clientContext
	ns    uint64
	local uint64
}

// resolveNodeLocked finds the page node a window's id names, or says why
// there is none. A host node (namespace 0) is host == true.
func (h *Hub) resolveNodeLocked(w *Window, id int64) (n pageNode, host bool, err error) {
	d := &w.client.dom
	if id <= 0 {
		return n, false, fmt.Errorf("node id %d is not a node id (ids come from DOM.getDocument and DOM.setChildNodes)", id)
	}
	ns, local := uint64(id)>>nsShift, uint64(id)&(1<<nsShift-1)
	if ns == 0 {
		if w.client.target != "" || cdp.NodeID(id) < hostDocumentID || cdp.NodeID(id) > hostNoteID {
			return n, false, fmt.Errorf("no node with id %d in this window", id)
		}
		return n, true, nil
	}
	c, ok := d.byNS[ns]
	switch {
	case ok && h.byRef[c.ref] == c:
		return pageNode{ctx: c, ns: ns, local: local}, false, nil
	case ns <= h.nextNS:
		return n, false, fmt.Errorf("node %d belongs to a document this window no longer holds (the page reloaded or closed, "+
			"the document was asked for again, or it is another window's): ask DOM.getDocument", id)
	}
	return n, false, fmt.Errorf("no node with id %d in this window", id)
}
