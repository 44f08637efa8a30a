package cdpproject

import (
	"strings"

	"github.com/chromedp/cdproto/cdp"
	cdpdom "github.com/chromedp/cdproto/dom"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The DOM projection: a page's nodes (sourceproto.DOMNode, the page's ids)
// as CDP's DOM.Node in a window, through the window's id mapping, and the
// DOM answers and events the worker sends.

// NodeIDs maps a page's node id to the window's (pagerealm/dom.go).
type NodeIDs func(local uint64) cdp.NodeID

// DOMNode is n and its subtree with the window's ids; the backend node id
// is the node id (one namespace per window, pagerealm/dom.go).
func DOMNode(n *sourceproto.DOMNode, id NodeIDs) *cdp.Node {
	if n == nil {
		return nil
	}
	nid := id(n.NodeID)
	out := &cdp.Node{
		NodeID: nid, BackendNodeID: cdp.BackendNodeID(nid), NodeType: n.NodeType, NodeName: n.NodeName,
		LocalName: n.LocalName, NodeValue: n.NodeValue, ChildNodeCount: n.ChildNodeCount, Attributes: n.Attributes,
		DocumentURL: n.DocumentURL, BaseURL: n.BaseURL, PublicID: n.PublicID, SystemID: n.SystemID,
	}
	if n.NodeType == 1 && strings.Contains(n.LocalName, "svg") {
		out.IsSVG = true
	}
	if len(n.Children) > 0 {
		out.Children = DOMNodes(n.Children, id)
	}
	if len(n.ShadowRoots) > 0 {
		out.ShadowRoots = DOMNodes(n.ShadowRoots, id)
	}
	out.ShadowRootType = cdp.ShadowRootType(n.ShadowRootType)
	out.TemplateContent = DOMNode(n.TemplateContent, id)
	out.ContentDocument = DOMNode(n.ContentDocument, id)
	return out
}

// DOMNodes is DOMNode for a list.
func DOMNodes(ns []sourceproto.DOMNode, id NodeIDs) []*cdp.Node {
	out := make([]*cdp.Node, len(ns))
	for i := range ns {
		out[i] = DOMNode(&ns[i], id)
	}
	return out
}

// SetChildNodes is DOM.setChildNodes.
func SetChildNodes(parent cdp.NodeID, nodes []*cdp.Node) []byte {
	if nodes == nil {
		nodes = []*cdp.Node{}
	}
	return Event("DOM.setChildNodes", &cdpdom.EventSetChildNodes{ParentID: parent, Nodes: nodes})
}

// ChildNodeInserted is DOM.childNodeInserted.
func ChildNodeInserted(parent, previous cdp.NodeID, n *cdp.Node) []byte {
	return Event("DOM.childNodeInserted", &cdpdom.EventChildNodeInserted{ParentNodeID: parent, PreviousNodeID: previous, Node: n})
}

// ChildNodeRemoved is DOM.childNodeRemoved.
func ChildNodeRemoved(parent, node cdp.NodeID) []byte {
	return Event("DOM.childNodeRemoved", &cdpdom.EventChildNodeRemoved{ParentNodeID: parent, NodeID: node})
}

// DocumentUpdated is DOM.documentUpdated: the window asks for the document
// again.
func DocumentUpdated() []byte { return Event("DOM.documentUpdated", struct{}{}) }

// DOMEvent is one page DOM event as the CDP event it stands for; nil for
// documentUpdated, which the caller handles.
func DOMEvent(e *sourceproto.DOMEvent, id NodeIDs) []byte {
	switch e.Kind {
	case sourceproto.EventSetChildNodes:
		return SetChildNodes(id(e.Parent), DOMNodes(e.Nodes, id))
	case sourceproto.EventChildNodeInserted:
		prev := cdp.NodeID(0)
		if e.Previous != 0 {
			prev = id(e.Previous)
		}
		return ChildNodeInserted(id(e.Parent), prev, DOMNode(e.Inserted, id))
	case sourceproto.EventChildNodeRemoved:
		return ChildNodeRemoved(id(e.Parent), id(e.Node))
	case sourceproto.EventChildNodeCountUpdated:
		return Event("DOM.childNodeCountUpdated", &cdpdom.EventChildNodeCountUpdated{NodeID: id(e.Parent), ChildNodeCount: e.Count})
	case sourceproto.EventAttributeModified:
		return Event("DOM.attributeModified", &cdpdom.EventAttributeModified{NodeID: id(e.Node), Name: e.Name, Value: e.Value})
	case sourceproto.EventAttributeRemoved:
		return Event("DOM.attributeRemoved", &cdpdom.EventAttributeRemoved{NodeID: id(e.Node), Name: e.Name})
	case sourceproto.EventShadowRootPushed:
		return Event("DOM.shadowRootPushed", &cdpdom.EventShadowRootPushed{HostID: id(e.Parent), Root: DOMNode(e.Inserted, id)})
	case sourceproto.EventCharacterDataModified:
		return Event("DOM.characterDataModified", &cdpdom.EventCharacterDataModified{NodeID: id(e.Node), CharacterData: e.Value})
	}
	return nil
}

// The answers' shapes (cdproto has no return types for them).
type (
	rootAnswer struct {
		Root *cdp.Node `json:"root"`
	}
	nodeAnswer struct {
		Node *cdp.Node `json:"node"`
	}
	nodeIDAnswer struct {
		NodeID cdp.NodeID `json:"nodeId"`
	}
	nodeIDsAnswer struct {
		NodeIDs []cdp.NodeID `json:"nodeIds"`
	}
	outerHTMLAnswer struct {
		OuterHTML string `json:"outerHTML"`
	}
	frameOwnerAnswer struct {
		BackendNodeID cdp.BackendNodeID `json:"backendNodeId"`
		NodeID        cdp.NodeID        `json:"nodeId"`
	}
	objectAnswer struct {
		Object any `json:"object"`
	}
)

// DocumentAnswer is DOM.getDocument's answer.
func DocumentAnswer(root *cdp.Node) []byte { return mustMarshal(&rootAnswer{root}) }

// NodeAnswer is DOM.describeNode's answer.
func NodeAnswer(n *cdp.Node) []byte { return mustMarshal(&nodeAnswer{n}) }

// NodeIDAnswer is DOM.requestNode's answer.
func NodeIDAnswer(id cdp.NodeID) []byte { return mustMarshal(&nodeIDAnswer{id}) }

// NodeIDsAnswer is DOM.pushNodesByBackendIdsToFrontend's answer.
func NodeIDsAnswer(ids []cdp.NodeID) []byte {
	if ids == nil {
		ids = []cdp.NodeID{}
	}
	return mustMarshal(&nodeIDsAnswer{ids})
}

// OuterHTMLAnswer is DOM.getOuterHTML's answer.
func OuterHTMLAnswer(parts []string) []byte {
	return mustMarshal(&outerHTMLAnswer{strings.Join(parts, "")})
}

// FrameOwnerAnswer is DOM.getFrameOwner's answer.
func FrameOwnerAnswer(id cdp.NodeID) []byte {
	return mustMarshal(&frameOwnerAnswer{cdp.BackendNodeID(id), id})
}

// ResolveNodeAnswer is DOM.resolveNode's answer.
func ResolveNodeAnswer(o *sourceproto.RemoteObject, v *Values) []byte {
	return mustMarshal(&objectAnswer{v.RemoteObject(o)})
}

type nodeForLocationAnswer struct {
	BackendNodeID cdp.BackendNodeID `json:"backendNodeId"`
	FrameID       cdp.FrameID       `json:"frameId"`
	NodeID        cdp.NodeID        `json:"nodeId"`
}

// NodeForLocationAnswer is DOM.getNodeForLocation's answer (backend ids
// are the window's node ids).
func NodeForLocationAnswer(id cdp.NodeID, frame cdp.FrameID) []byte {
	return mustMarshal(&nodeForLocationAnswer{cdp.BackendNodeID(id), frame, id})
}

type classNamesAnswer struct {
	ClassNames []string `json:"classNames"`
}

// ClassNamesAnswer is DOM.collectClassNamesFromSubtree's answer.
func ClassNamesAnswer(names []string) []byte {
	if names == nil {
		names = []string{}
	}
	return mustMarshal(&classNamesAnswer{names})
}
