package sourceproto

import "math"

// DOM family rules (dom.go): which DOMParams members each DOM method
// reads, the results' shapes, and dom.event's events.

// domCommand returns the DOM member set in c (and its method), and how
// many are set.
func (c *RuntimeCommand) domCommand() (RuntimeMethod, *DOMParams, int) {
	ms := [...]struct {
		m RuntimeMethod
		p *DOMParams
	}{{MethodDOMChildren, c.DOMChildren}, {MethodDOMDescribe, c.DOMDescribe}, {MethodDOMPush, c.DOMPush},
		{MethodDOMResolve, c.DOMResolve}, {MethodDOMOuterHTML, c.DOMOuterHTML}, {MethodDOMEdit, c.DOMEdit},
		{MethodDOMDisable, c.DOMDisable}, {MethodDOMSearch, c.DOMSearch}, {MethodDOMResults, c.DOMResults},
		{MethodDOMBox, c.DOMBox}, {MethodDOMOverlay, c.DOMOverlay}, {MethodDOMCSS, c.DOMCSS},
		{MethodDOMListeners, c.DOMListeners}, {MethodDOMPlace, c.DOMPlace}, {MethodDOMLocate, c.DOMLocate}, {MethodDOMClasses, c.DOMClasses}}
	var m RuntimeMethod
	var p *DOMParams
	n := 0
	for _, x := range ms {
		if x.p != nil {
			if n == 0 {
				m, p = x.m, x.p
			}
			n++
		}
	}
	return m, p, n
}

// domResult is domCommand for results.
func (r *RuntimeResult) domResult() (RuntimeMethod, *DOMResult, int) {
	ms := [...]struct {
		m RuntimeMethod
		r *DOMResult
	}{{MethodDOMChildren, r.DOMChildren}, {MethodDOMDescribe, r.DOMDescribe}, {MethodDOMPush, r.DOMPush},
		{MethodDOMResolve, r.DOMResolve}, {MethodDOMOuterHTML, r.DOMOuterHTML}, {MethodDOMEdit, r.DOMEdit},
		{MethodDOMDisable, r.DOMDisable}, {MethodDOMSearch, r.DOMSearch}, {MethodDOMResults, r.DOMResults},
		{MethodDOMBox, r.DOMBox}, {MethodDOMOverlay, r.DOMOverlay}, {MethodDOMCSS, r.DOMCSS},
		{MethodDOMListeners, r.DOMListeners}, {MethodDOMPlace, r.DOMPlace}, {MethodDOMLocate, r.DOMLocate}, {MethodDOMClasses, r.DOMClasses}}
	var m RuntimeMethod
	var res *DOMResult
	n := 0
	for _, x := range ms {
		if x.r != nil {
			if n == 0 {
				m, res = x.m, x.r
			}
			n++
		}
	}
	return m, res, n
}

// DOMParamsOf is the DOM member of c, nil for other methods.
func (c *RuntimeCommand) DOMParamsOf() *DOMParams { _, p, _ := c.domCommand(); return p }

// DOMResultOf is the DOM member of r, nil for other methods.
func (r *RuntimeResult) DOMResultOf() *DOMResult { _, res, _ := r.domResult(); return res }

// SetDOM sets the member of method m to p (m must be a DOM method).
func (c *RuntimeCommand) SetDOM(m RuntimeMethod, p *DOMParams) {
	c.Method = m
	switch m {
	case MethodDOMChildren:
		c.DOMChildren = p
	case MethodDOMDescribe:
		c.DOMDescribe = p
	case MethodDOMPush:
		c.DOMPush = p
	case MethodDOMResolve:
		c.DOMResolve = p
	case MethodDOMOuterHTML:
		c.DOMOuterHTML = p
	case MethodDOMEdit:
		c.DOMEdit = p
	case MethodDOMDisable:
		c.DOMDisable = p
	case MethodDOMSearch:
		c.DOMSearch = p
	case MethodDOMResults:
		c.DOMResults = p
	case MethodDOMBox:
		c.DOMBox = p
	case MethodDOMOverlay:
		c.DOMOverlay = p
	case MethodDOMCSS:
		c.DOMCSS = p
	case MethodDOMListeners:
		c.DOMListeners = p
	case MethodDOMPlace:
		c.DOMPlace = p
	case MethodDOMLocate:
		c.DOMLocate = p
	case MethodDOMClasses:
		c.DOMClasses = p
	}
}

// validateDOM checks a DOM command's params for its method: a node by id
// or handle where the method takes one, and no member it does not read.
func (p *DOMParams) validateDOM(m RuntimeMethod) *RejectError {
	if p.Doc == 0 {
		return malformed("a DOM command needs doc")
	}
	if err := first(checkSafe(p.Doc, "doc"), checkSafe(p.Node, "node"), checkOptID(p.Handle, "handle"),
		checkOptID(p.ObjectGroup, "objectGroup"), checkCount(len(p.Nodes), MaxDOMPush, "MaxDOMPush")); err != nil {
		return err
	}
	if p.Depth < -1 || p.Depth > MaxSafeInteger {
		return malformed("depth must be -1 or in 0..2^53-1")
	}
	if err := first(checkOptID(p.Search, "search"), checkNonNeg(p.From, "from"), checkNonNeg(p.To, "to")); err != nil {
		return err
	}
	if (p.CSS != "" || p.Sheet != "" || p.Line != 0) != (m == MethodDOMCSS) {
		return malformed("css, sheet and line are domCSS's members, and domCSS needs css")
	}
	if m == MethodDOMCSS {
		return p.validateCSS()
	}
	search := p.Search != "" || p.From != 0 || p.To != 0
	if search && m != MethodDOMSearch && m != MethodDOMResults {
		return malformed(string(m) + " takes no search members")
	}
	for _, n := range p.Nodes {
		if n == 0 || n > MaxSafeInteger {
			return malformed("nodes must be in 1..2^53-1")
		}
	}
	if p.Pierce && m != MethodDOMChildren && m != MethodDOMDescribe && m != MethodDOMListeners {
		return malformed(string(m) + " takes no pierce")
	}
	if (len(p.Rect) > 0 || len(p.Colors) > 0) != (p.Overlay == OverlayRect) {
		return malformed("rect and colors are domOverlay rect's members, and it needs them")
	}
	if err := p.validateRect(); err != nil {
		return err
	}
	one := (p.Node != 0) != (p.Handle != "")
	edit := p.Edit != "" || p.Name != "" || p.Value != "" || p.Text != ""
	if p.Overlay != "" && m != MethodDOMOverlay {
		return malformed(string(m) + " takes no overlay")
	}
	if (p.X != 0 || p.Y != 0 || p.IgnorePointerEventsNone) && m != MethodDOMLocate {
		return malformed(string(m) + " takes no x, y or ignorePointerEventsNone")
	}
	switch m {
	case MethodDOMChildren, MethodDOMResolve:
		if p.Node == 0 || p.Handle != "" || len(p.Nodes) > 0 || edit {
			return malformed(string(m) + " takes doc, node and depth/objectGroup only")
		}
	case MethodDOMDescribe, MethodDOMOuterHTML:
		if !one || len(p.Nodes) > 0 || edit {
			return malformed(string(m) + " takes doc and one of node, handle")
		}
	case MethodDOMPush:
		if (p.Handle != "") == (len(p.Nodes) > 0) || p.Node != 0 || edit {
			return malformed("domPush takes doc and one of nodes, handle")
		}
	case MethodDOMEdit, MethodDOMPlace:
		if p.Node == 0 || p.Handle != "" || p.Edit == "" {
			return malformed(string(m) + " takes doc, node and edit")
		}
		if place := p.Edit == EditSetNodeName || p.Edit == EditMoveTo || p.Edit == EditCopyTo; place != (m == MethodDOMPlace) {
			return malformed("setNodeName, moveTo and copyTo are domPlace's edits, the others domEdit's")
		}
		if (p.Edit == EditSetAttributeValue || p.Edit == EditRemoveAttribute || p.Edit == EditSetNodeName) && p.Name == "" {
			return malformed("an attribute edit and setNodeName need name")
		}
		if move := p.Edit == EditMoveTo || p.Edit == EditCopyTo; move != (len(p.Nodes) > 0) || len(p.Nodes) > 2 {
			return malformed("moveTo and copyTo take nodes: the target, then the node to insert before (if any); other edits none")
		}
	case MethodDOMLocate:
		if p.Node != 0 || p.Handle != "" || len(p.Nodes) > 0 || edit || math.IsNaN(p.X) || math.IsInf(p.X, 0) ||
			math.IsNaN(p.Y) || math.IsInf(p.Y, 0) {
			return malformed("domLocate takes doc, finite x and y, and ignorePointerEventsNone")
		}
	case MethodDOMClasses:
		if p.Node == 0 || p.Handle != "" || len(p.Nodes) > 0 || edit {
			return malformed("domClasses takes doc and node")
		}
	case MethodDOMDisable:
		if p.Node != 0 || p.Handle != "" || len(p.Nodes) > 0 || edit {
			return malformed("domDisable takes doc only")
		}
	case MethodDOMSearch:
		if p.Search == "" || p.Text == "" || p.Node != 0 || p.Handle != "" || len(p.Nodes) > 0 || p.From != 0 || p.To != 0 ||
			p.Edit != "" || p.Name != "" || p.Value != "" {
			return malformed("domSearch takes doc, search and text")
		}
	case MethodDOMBox:
		if !one || len(p.Nodes) > 0 || edit {
			return malformed("domBox takes doc and one of node, handle")
		}
	case MethodDOMOverlay:
		switch {
		case p.Overlay != OverlayHighlight && p.Overlay != OverlayHide && p.Overlay != OverlayInspect &&
			p.Overlay != OverlayPick && p.Overlay != OverlayUnpick && p.Overlay != OverlayRect:
			return malformed("domOverlay's overlay must be highlight, hide, inspect, pick, unpick or rect")
		case len(p.Nodes) > 0 || edit || (p.Overlay == OverlayHighlight || p.Overlay == OverlayInspect) != one:
			return malformed("domOverlay takes doc, overlay and one of node, handle (none for hide, pick, unpick, rect)")
		}
	case MethodDOMListeners:
		if p.Handle == "" || p.Node != 0 || len(p.Nodes) > 0 || edit {
			return malformed("domListeners takes doc, handle, depth, pierce and objectGroup")
		}
	case MethodDOMResults:
		if p.Search == "" || p.To <= p.From || p.To-p.From > MaxDOMPush || p.Node != 0 || p.Handle != "" || len(p.Nodes) > 0 || edit {
			return malformed("domResults takes doc, search and from < to (at most MaxDOMPush)")
		}
	}
	return nil
}

// validateDOM checks a DOM result's shape for its method.
func (r *DOMResult) validateDOM(m RuntimeMethod) *RejectError {
	set := count(len(r.Children) > 0, r.Node != nil, len(r.Nodes) > 0, len(r.HTML) > 0, r.Object != nil, r.Count != 0, r.Box != nil, r.CSS != nil,
		len(r.Listeners) > 0, len(r.ClassNames) > 0)
	if len(r.ClassNames) > 0 && m != MethodDOMClasses {
		return malformed(string(m) + " answers no classNames")
	}
	if (r.CSS != nil) != (m == MethodDOMCSS) || m == MethodDOMCSS && set != 1 {
		return malformed("css is domCSS's one answer member")
	}
	if r.Box != nil && m != MethodDOMBox {
		return malformed(string(m) + " answers no box")
	}
	if len(r.Listeners) > 0 && m != MethodDOMListeners {
		return malformed(string(m) + " answers no listeners")
	}
	if err := checkNonNeg(r.Count, "count"); err != nil {
		return err
	}
	if r.Count != 0 && m != MethodDOMSearch {
		return malformed(string(m) + " answers no count")
	}
	switch m {
	case MethodDOMChildren:
		if set > 1 || len(r.Children) > 1 {
			return malformed("domChildren answers one children list")
		}
	case MethodDOMDescribe:
		if r.Node == nil || set != 1 {
			return malformed("domDescribe answers node")
		}
	case MethodDOMSearch:
		if set > 1 || r.Count == 0 && set != 0 {
			return malformed("domSearch answers count")
		}
	case MethodDOMPush, MethodDOMResults:
		if len(r.Nodes) == 0 || r.Node != nil || len(r.HTML) > 0 || r.Object != nil {
			return malformed("domPush answers nodes and their paths")
		}
	case MethodDOMPlace, MethodDOMLocate:
		// The node's id with its path (domLocate: nothing when no element
		// is at the point).
		if len(r.Nodes) > 1 || r.Node != nil || len(r.HTML) > 0 || r.Object != nil || len(r.Children) > 0 && len(r.Nodes) == 0 {
			return malformed(string(m) + " answers nothing, or one node and its path")
		}
	case MethodDOMClasses:
		if set > 1 {
			return malformed("domClasses answers classNames")
		}
		if err := checkCount(len(r.ClassNames), MaxDOMClassNames, "MaxDOMClassNames"); err != nil {
			return err
		}
	case MethodDOMResolve:
		if r.Object == nil || set != 1 {
			return malformed("domResolve answers object")
		}
		return r.Object.validate()
	case MethodDOMOuterHTML:
		if set > 1 || len(r.Children) > 0 || r.Node != nil {
			return malformed("domOuterHTML answers html")
		}
	case MethodDOMBox:
		if r.Box == nil || set != 1 {
			return malformed("domBox answers box")
		}
		return r.Box.validate()
	case MethodDOMEdit, MethodDOMDisable, MethodDOMOverlay:
		if set != 0 {
			return malformed(string(m) + " answers nothing")
		}
	case MethodDOMListeners:
		if set > 1 {
			return malformed("domListeners answers listeners")
		}
		return validateListeners(r.Listeners)
	}
	if err := checkCount(len(r.Nodes), MaxDOMPush, "MaxDOMPush"); err != nil {
		return err
	}
	for i := range r.Children {
		if err := r.Children[i].validate(); err != nil {
			return err
		}
	}
	return r.Node.validate()
}

func (c *DOMChildren) validate() *RejectError {
	if c.Parent == 0 {
		return malformed("children need parent")
	}
	return first(checkSafe(c.Parent, "parent"), validateNodes(c.Nodes))
}

func validateNodes(ns []DOMNode) *RejectError {
	for i := range ns {
		if err := ns[i].validate(); err != nil {
			return err
		}
	}
	return nil
}

// validate checks a node and its subtree (the scanner bounds the depth).
func (n *DOMNode) validate() *RejectError {
	if n == nil {
		return nil
	}
	switch {
	case n.NodeID == 0 || n.NodeID > MaxSafeInteger:
		return malformed("nodeId must be in 1..2^53-1")
	case n.NodeType < 1 || n.NodeType > 12:
		return malformed("nodeType must be in 1..12")
	case len(n.Attributes)%2 != 0:
		return malformed("attributes are name, value pairs")
	case n.ChildNodeCount < 0 || n.ChildNodeCount > MaxSafeInteger:
		return malformed("childNodeCount must be in 0..2^53-1")
	}
	if len(n.ShadowRoots) > 1 || (len(n.ShadowRoots) > 0 || n.TemplateContent != nil) && n.NodeType != 1 {
		return malformed("an element has at most one shadow root; only elements have shadowRoots and templateContent")
	}
	if n.ShadowRootType != "" && (n.NodeType != 11 || n.ShadowRootType != "open" && n.ShadowRootType != "closed") {
		return malformed("shadowRootType is open or closed, on a node of type 11")
	}
	for i := range n.ShadowRoots {
		if n.ShadowRoots[i].ShadowRootType == "" {
			return malformed("a shadow root needs shadowRootType")
		}
	}
	if n.TemplateContent != nil && (n.TemplateContent.NodeType != 11 || n.TemplateContent.ShadowRootType != "") {
		return malformed("templateContent is a document fragment")
	}
	if n.ContentDocument != nil && (n.NodeType != 1 || n.ContentDocument.NodeType != 9) {
		return malformed("contentDocument is a document, on an element")
	}
	return first(validateNodes(n.Children), validateNodes(n.ShadowRoots), n.TemplateContent.validate(), n.ContentDocument.validate())
}

// maxColorBytes bounds a domOverlay rect color: CSS rgba() of four numbers
// is under 40 bytes; the bound only keeps a forged one small.
const maxColorBytes = 64

// validateRect checks domOverlay rect's rectangle and colors.
func (p *DOMParams) validateRect() *RejectError {
	if p.Overlay != OverlayRect {
		return nil
	}
	if len(p.Rect) != 4 || len(p.Colors) != 2 {
		return malformed("domOverlay rect takes rect (x, y, width, height) and colors (fill, outline)")
	}
	for _, v := range p.Rect {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return malformed("a rect's numbers must be finite")
		}
	}
	for _, c := range p.Colors {
		if len(c) > maxColorBytes {
			return malformed("a rect color is at most 64 bytes")
		}
	}
	return nil
}

func (e *DOMEvents) validate() *RejectError {
	if e.Doc == 0 {
		return malformed("dom.event needs doc")
	}
	if err := first(checkID(e.Session, "session"), checkSafe(e.Doc, "doc"),
		checkCount(len(e.Events), MaxDOMEvents, "MaxDOMEvents")); err != nil {
		return err
	}
	if len(e.Events) == 0 {
		return malformed("dom.event without events")
	}
	for i := range e.Events {
		if err := e.Events[i].validate(); err != nil {
			return err
		}
	}
	return nil
}

func (e *DOMEvent) validate() *RejectError {
	if err := first(checkSafe(e.Parent, "parent"), checkSafe(e.Previous, "previous"), checkSafe(e.Node, "node"),
		checkNonNeg(e.Count, "count")); err != nil {
		return err
	}
	nodeEvent := e.Node != 0 && e.Parent == 0 && e.Previous == 0 && e.Inserted == nil && len(e.Nodes) == 0 && e.Count == 0
	ok := false
	switch e.Kind {
	case EventSetChildNodes:
		ok = e.Parent != 0 && e.Node == 0 && e.Previous == 0 && e.Inserted == nil && e.Count == 0 && e.Name == "" && e.Value == ""
	case EventChildNodeInserted:
		ok = e.Parent != 0 && e.Inserted != nil && e.Node == 0 && len(e.Nodes) == 0 && e.Count == 0 && e.Name == "" && e.Value == ""
	case EventChildNodeRemoved:
		ok = e.Parent != 0 && e.Node != 0 && e.Previous == 0 && e.Inserted == nil && len(e.Nodes) == 0 && e.Count == 0 && e.Name == "" && e.Value == ""
	case EventChildNodeCountUpdated:
		ok = e.Parent != 0 && e.Node == 0 && e.Previous == 0 && e.Inserted == nil && len(e.Nodes) == 0 && e.Name == "" && e.Value == ""
	case EventAttributeModified:
		ok = nodeEvent && e.Name != ""
	case EventAttributeRemoved:
		ok = nodeEvent && e.Name != "" && e.Value == ""
	case EventCharacterDataModified:
		ok = nodeEvent && e.Name == ""
	case EventInspectNodeRequested, EventNodeHighlightRequested:
		ok = nodeEvent && e.Name == "" && e.Value == ""
	case EventShadowRootPushed:
		ok = e.Parent != 0 && e.Inserted != nil && e.Inserted.ShadowRootType != "" && e.Node == 0 && e.Previous == 0 &&
			len(e.Nodes) == 0 && e.Count == 0 && e.Name == "" && e.Value == ""
	case EventDocumentUpdated:
		ok = e.Node == 0 && e.Parent == 0 && e.Previous == 0 && e.Inserted == nil && len(e.Nodes) == 0 && e.Count == 0 && e.Name == "" && e.Value == ""
	}
	if !ok {
		return malformed("dom event members do not fit its kind")
	}
	return first(e.Inserted.validate(), validateNodes(e.Nodes))
}

// validate checks a box model: four quads of 8 finite numbers.
func (b *DOMBox) validate() *RejectError {
	for _, q := range [...][]float64{b.Content, b.Padding, b.Border, b.Margin} {
		if len(q) != 8 {
			return malformed("a box quad is 8 numbers")
		}
		for _, v := range q {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return malformed("a box quad's numbers must be finite")
			}
		}
	}
	if b.Width < 0 || b.Height < 0 || b.Width > MaxSafeInteger || b.Height > MaxSafeInteger {
		return malformed("box width and height must be in 0..2^53-1")
	}
	return nil
}

func validateListeners(ls []DOMListener) *RejectError {
	if err := checkCount(len(ls), MaxDOMListeners, "MaxDOMListeners"); err != nil {
		return err
	}
	for i := range ls {
		l := &ls[i]
		if l.Type == "" {
			return malformed("a listener needs type")
		}
		if err := first(checkNonNeg(l.Line, "line"), checkNonNeg(l.Column, "column"), checkSafe(l.Node, "node"),
			optObject(l.Handler), optObject(l.OriginalHandler)); err != nil {
			return err
		}
		if l.URL == "" && (l.Line != 0 || l.Column != 0) {
			return malformed("a listener's line and column need its url")
		}
	}
	return nil
}
