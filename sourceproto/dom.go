package sourceproto

import (
	"github.com/mailru/easyjson/jlexer"
	"github.com/mailru/easyjson/jwriter"
)

// DOM family: a page's DOM agent (client/js/dom.mjs). Its commands and
// results are members of the Runtime unions (MethodDOM…): they share the
// Runtime's correlation, flow control, deadlines, cancellation and acks.
// Mutation events travel on their own unsequenced frame, dom.event, in
// order with the results on the same connection.
//
// Node ids on this wire are the page's, per DevTools session and per
// document epoch (Doc): the worker gives each (window, page generation,
// document) an epoch and maps ids into its window's namespace
// (pagerealm/dom.go); a page never sees another page's ids.

// DOMParams are the params of every DOM command. Which members a method
// reads is checked by validate (a member the method does not read is
// refused); Doc is always required.
//
//easyjson:json
type DOMParams struct {
	// Doc is the worker's document epoch. A command with a Doc other than
	// the session's current one resets the session's node table first.
	Doc uint64 `json:"doc"`
	// Node is the page's node id; Handle a Runtime handle of the same
	// session naming a node (one of the two where a method takes a node).
	Node   uint64 `json:"node,omitempty"`
	Handle string `json:"handle,omitempty"`
	// Nodes are node ids (domPush: backend node ids to push; domPlace's
	// moveTo and copyTo: the target parent, then the node to insert
	// before, if any).
	Nodes []uint64 `json:"nodes,omitempty"`
	// Depth of the subtree to describe: 0 the node only, -1 all (the page
	// caps it at its own MAX_DEPTH and by the frame limits).
	Depth int64 `json:"depth,omitempty"`
	// Pierce describes shadow roots and template contents to Depth too
	// (CDP's pierce; without it they come unexpanded, as in Chrome);
	// domListeners goes into open shadow roots and same-origin frames'
	// documents below the node (with Depth).
	Pierce bool `json:"pierce,omitempty"`
	// Edit is the edit to make (domEdit; domPlace: setNodeName, moveTo,
	// copyTo).
	Edit DOMEdit `json:"edit,omitempty"`
	// Name, Value and Text are the edit's operands.
	Name        string `json:"name,omitempty"`
	Value       string `json:"value,omitempty"`
	Text        string `json:"text,omitempty"`
	ObjectGroup string `json:"objectGroup,omitempty"`
	// Search names a search (domSearch, domResults: the worker's id);
	// From and To are domResults' range of its nodes.
	Search string `json:"search,omitempty"`
	From   int64  `json:"from,omitempty"`
	To     int64  `json:"to,omitempty"`
	// Overlay is domOverlay's action (with Node or Handle for highlight
	// and inspect; none for hide).
	Overlay DOMOverlayAction `json:"overlay,omitempty"`
	// Rect is domOverlay rect's x, y, width, height in the page's CSS
	// pixels; Colors its fill and outline as CSS colors (the worker
	// writes them from CDP's RGBA).
	Rect   []float64 `json:"rect,omitempty"`
	Colors []string  `json:"colors,omitempty"`
	// CSS is domCSS's query; Sheet a style sheet's page id and Line the
	// line of a rule in the text the page gives for it (css.go).
	CSS   CSSQuery `json:"css,omitempty"`
	Sheet string   `json:"sheet,omitempty"`
	Line  int64    `json:"line,omitempty"`
	// X and Y: domLocate's point in the page's viewport, CSS pixels;
	// IgnorePointerEventsNone hit-tests elements with pointer-events:
	// none too (DOM.getNodeForLocation's flag).
	X                       float64 `json:"x,omitempty"`
	Y                       float64 `json:"y,omitempty"`
	IgnorePointerEventsNone bool    `json:"ignorePointerEventsNone,omitempty"`
}

// DOMOverlayAction names what a domOverlay command does.
type DOMOverlayAction string

const (
	// OverlayHighlight draws the node's boxes in the page (Overlay.highlightNode).
	OverlayHighlight DOMOverlayAction = "highlight"
	// OverlayHide removes the session's highlight (Overlay.hideHighlight).
	OverlayHide DOMOverlayAction = "hide"
	// OverlayInspect makes the node the session's $0 (DOM.setInspectedNode).
	OverlayInspect DOMOverlayAction = "inspect"
	// OverlayPick starts inspect mode (Overlay.setInspectMode): the page
	// highlights what the pointer is over, swallows the user's clicks and
	// sends the clicked element as an inspectNodeRequested event.
	OverlayPick DOMOverlayAction = "pick"
	// OverlayUnpick ends it (mode none).
	OverlayUnpick DOMOverlayAction = "unpick"
	// OverlayRect draws a rectangle (Overlay.highlightRect) in place of
	// the session's highlight.
	OverlayRect DOMOverlayAction = "rect"
)

// DOMBox is an element's box model as CDP's DOM.BoxModel has it: each
// quad is 8 numbers (x, y of its 4 corners, clockwise from top left) in
// the page's CSS pixels relative to its viewport; Width and Height are the
// border box's.
//
//easyjson:json
type DOMBox struct {
	Content []float64 `json:"content"`
	Padding []float64 `json:"padding"`
	Border  []float64 `json:"border"`
	Margin  []float64 `json:"margin"`
	Width   int64     `json:"width"`
	Height  int64     `json:"height"`
}

// DOMNode is one page node as CDP's DOM.Node describes it, with the page's
// ids. Worker-only members (frameId, backendNodeId) are never on this
// wire: the worker adds them.
//
//easyjson:json
type DOMNode struct {
	NodeID         uint64    `json:"nodeId"`
	NodeType       int64     `json:"nodeType"`
	NodeName       string    `json:"nodeName"`
	LocalName      string    `json:"localName,omitempty"`
	NodeValue      string    `json:"nodeValue,omitempty"`
	ChildNodeCount int64     `json:"childNodeCount,omitempty"`
	Children       []DOMNode `json:"children,omitempty"`
	Attributes     []string  `json:"attributes,omitempty"`
	DocumentURL    string    `json:"documentURL,omitempty"`
	BaseURL        string    `json:"baseURL,omitempty"`
	PublicID       string    `json:"publicId,omitempty"`
	SystemID       string    `json:"systemId,omitempty"`
	// ShadowRoots: an element's shadow root (a node of type 11 with
	// ShadowRootType "open" or "closed"); TemplateContent: a <template>'s
	// content (a document fragment). Both as Chrome's DOM.Node has them.
	ShadowRoots     []DOMNode `json:"shadowRoots,omitempty"`
	ShadowRootType  string    `json:"shadowRootType,omitempty"`
	TemplateContent *DOMNode  `json:"templateContent,omitempty"`
	// ContentDocument: a same-origin <iframe>'s document (the page can
	// read no other).
	ContentDocument *DOMNode `json:"contentDocument,omitempty"`
}

// DOMChildren is a node's children as a setChildNodes event carries them.
//
//easyjson:json
type DOMChildren struct {
	Parent uint64    `json:"parent"`
	Nodes  []DOMNode `json:"nodes"`
}

// DOMResult is the result of every DOM command; which members are set
// depends on the method (validate).
//
//easyjson:json
type DOMResult struct {
	// Children: domChildren's answer, and the paths domPush made known
	// (one setChildNodes each, ancestors first).
	Children []DOMChildren `json:"children,omitempty"`
	// Node: domDescribe's answer.
	Node *DOMNode `json:"node,omitempty"`
	// Nodes: domPush's ids, one per asked node or handle (0: unknown).
	Nodes []uint64 `json:"nodes,omitempty"`
	// HTML: domOuterHTML's text in parts (a part is bounded by
	// MaxStringBytes; the frame bounds the whole).
	HTML []string `json:"html,omitempty"`
	// Object: domResolve's node as a Runtime object (its handle follows
	// the Runtime's ack rules).
	Object *RemoteObject `json:"object,omitempty"`
	// Count: domSearch's number of nodes found.
	Count int64 `json:"count,omitempty"`
	// Box: domBox's answer.
	Box *DOMBox `json:"box,omitempty"`
	// CSS: domCSS's answer (css.go).
	CSS *CSSResult `json:"css,omitempty"`
	// Listeners: domListeners' answer (at most MaxDOMListeners).
	Listeners []DOMListener `json:"listeners,omitempty"`
	// ClassNames: domClasses' answer, each once (at most MaxDOMClassNames).
	ClassNames []string `json:"classNames,omitempty"`
}

// DOMListener is one event listener as CDP's DOMDebugger.EventListener has
// it, with the handler's place as the page found it: URL, Line and Column
// (0-based) of the one place in the page's scripts whose text is the
// handler's source (client/js/listeners.mjs); URL is "" when the page
// could not find exactly one (the worker then sends V8's "no script").
//
//easyjson:json
type DOMListener struct {
	Type            string        `json:"type"`
	UseCapture      bool          `json:"useCapture,omitempty"`
	Passive         bool          `json:"passive,omitempty"`
	Once            bool          `json:"once,omitempty"`
	Handler         *RemoteObject `json:"handler,omitempty"`
	OriginalHandler *RemoteObject `json:"originalHandler,omitempty"`
	URL             string        `json:"url,omitempty"`
	Line            int64         `json:"line,omitempty"`
	Column          int64         `json:"column,omitempty"`
	// Node is the page's id of the node the listener is on when it is
	// below the object asked about (Depth > 1); 0 for that object.
	Node uint64 `json:"node,omitempty"`
}

// DOMEdit names the edit of a domEdit command.
type DOMEdit string

const (
	EditSetAttributeValue   DOMEdit = "setAttributeValue"
	EditSetAttributesAsText DOMEdit = "setAttributesAsText"
	EditRemoveAttribute     DOMEdit = "removeAttribute"
	EditSetNodeValue        DOMEdit = "setNodeValue"
	EditRemoveNode          DOMEdit = "removeNode"
	EditSetOuterHTML        DOMEdit = "setOuterHTML"
	// EditSetNodeName replaces the element by one named Name with its
	// attributes and children; EditMoveTo and EditCopyTo put the node (a
	// deep copy) into Nodes[0] before Nodes[1] (none: last). These three
	// are domPlace's, which answers the node's new id with its path
	// (Nodes, Children); domEdit takes the others.
	EditSetNodeName DOMEdit = "setNodeName"
	EditMoveTo      DOMEdit = "moveTo"
	EditCopyTo      DOMEdit = "copyTo"
)

var domEdits = []DOMEdit{EditSetAttributeValue, EditSetAttributesAsText, EditRemoveAttribute,
	EditSetNodeValue, EditRemoveNode, EditSetOuterHTML, EditSetNodeName, EditMoveTo, EditCopyTo}

// DOMEventKind is the discriminant of a DOMEvent: the CDP DOM event it
// becomes.
type DOMEventKind string

const (
	EventSetChildNodes         DOMEventKind = "setChildNodes"
	EventChildNodeInserted     DOMEventKind = "childNodeInserted"
	EventChildNodeRemoved      DOMEventKind = "childNodeRemoved"
	EventChildNodeCountUpdated DOMEventKind = "childNodeCountUpdated"
	EventAttributeModified     DOMEventKind = "attributeModified"
	EventAttributeRemoved      DOMEventKind = "attributeRemoved"
	EventCharacterDataModified DOMEventKind = "characterDataModified"
	// EventInspectNodeRequested: the user clicked Node in inspect mode
	// (Overlay.inspectNodeRequested; the node has an id, not yet its path).
	EventInspectNodeRequested DOMEventKind = "inspectNodeRequested"
	// EventNodeHighlightRequested: inspect mode highlights Node under the
	// pointer (Overlay.nodeHighlightRequested; the page sent its path
	// first, as setChildNodes events).
	EventNodeHighlightRequested DOMEventKind = "nodeHighlightRequested"
	// EventShadowRootPushed: Parent (a host the window has) got a shadow
	// root, Inserted, after the host was sent (DOM.shadowRootPushed).
	EventShadowRootPushed DOMEventKind = "shadowRootPushed"
	// EventDocumentUpdated: the page dropped the session's node table
	// (its mutations overflowed MAX_EVENTS_PER_FLUSH): the window must
	// ask for the document again.
	EventDocumentUpdated DOMEventKind = "documentUpdated"
)

var domEventKinds = []DOMEventKind{EventSetChildNodes, EventChildNodeInserted, EventChildNodeRemoved,
	EventChildNodeCountUpdated, EventAttributeModified, EventAttributeRemoved, EventCharacterDataModified,
	EventDocumentUpdated, EventInspectNodeRequested, EventNodeHighlightRequested, EventShadowRootPushed}

// DOMEvent is one DOM event of a dom.event frame. Which members are set
// depends on Kind (validate).
//
//easyjson:json
type DOMEvent struct {
	Kind DOMEventKind `json:"kind"`
	// Parent: setChildNodes, childNodeInserted/Removed,
	// childNodeCountUpdated (the node whose count changed).
	Parent uint64 `json:"parent,omitempty"`
	// Previous: childNodeInserted's previous sibling (0: first).
	Previous uint64 `json:"previous,omitempty"`
	// Node: childNodeRemoved's node, or the node an attribute or text
	// event is about.
	Node uint64 `json:"node,omitempty"`
	// Inserted: childNodeInserted's node; Nodes: setChildNodes' nodes.
	Inserted *DOMNode  `json:"inserted,omitempty"`
	Nodes    []DOMNode `json:"nodes,omitempty"`
	Count    int64     `json:"count,omitempty"`
	Name     string    `json:"name,omitempty"`
	Value    string    `json:"value,omitempty"`
}

// DOMEvents is a dom.event frame: one session's events of one document
// epoch, in the order they happened.
//
//easyjson:json
type DOMEvents struct {
	Session string     `json:"session"`
	Doc     uint64     `json:"doc"`
	Events  []DOMEvent `json:"events"`
}

func (v *DOMEdit) UnmarshalEasyJSON(l *jlexer.Lexer)      { *v = readEnum(l, domEdits) }
func (v DOMEdit) MarshalEasyJSON(w *jwriter.Writer)       { w.String(string(v)) }
func (v *DOMEventKind) UnmarshalEasyJSON(l *jlexer.Lexer) { *v = readEnum(l, domEventKinds) }
func (v DOMEventKind) MarshalEasyJSON(w *jwriter.Writer)  { w.String(string(v)) }
