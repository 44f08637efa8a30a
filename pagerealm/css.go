package pagerealm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The CSS domain of pages (docs/agent-note.md "Styles of pages";
// client/js/css.mjs): every query and edit is a domCSS command to the page
// that owns the node or style sheet, on the DOM agent's session, so it
// shares the Runtime's flow, deadline and cancellation and costs nothing
// until a window asks.
//
// Style sheet ids are the window's, like node ids: the page's id ("s<n>"
// for a sheet, "i<node>" for a node's inline style, per DevTools session
// and document epoch) behind the page's namespace in the window,
// "<ns>.<page id>". So a window can name only its own pages' sheets, and an
// id of an earlier document, of a reloaded page or of another window is
// refused by name.

// cssEdit is one of CSS.setStyleTexts' edits.
type cssEdit struct {
	StyleSheetID string           `json:"styleSheetId"`
	Range        *css.SourceRange `json:"range"`
	Text         string           `json:"text"`
}

// sheetID is a page's style sheet id in the window.
func sheetID(ns uint64, local string) cdp.StyleSheetID {
	return cdp.StyleSheetID(strconv.FormatUint(ns, 10) + "." + local)
}

// resolveSheetLocked finds the page and the page's id a window's style
// sheet id names, or says why there is none.
func (h *Hub) resolveSheetLocked(w *Window, id string) (pageNode, string, error) {
	nsText, local, ok := strings.Cut(id, ".")
	ns, err := strconv.ParseUint(nsText, 10, 64)
	if !ok || err != nil || ns == 0 || ns > maxNamespaces || !sourceproto.ValidCSSSheet(local) {
		return pageNode{}, "", fmt.Errorf("no style sheet %q in this window (ids come from CSS.styleSheetAdded and CSS.getMatchedStylesForNode)", id)
	}
	n, _, err := h.resolveNodeLocked(w, int64(nodeID(ns, pageDocument)))
	if err != nil {
		return pageNode{}, "", fmt.Errorf("style sheet %s: %w", id, err)
	}
	return n, local, nil
}

// cssNodeLocked is the page element a CSS node query names; host is true
// for the worker's placeholders, whose styles are empty (the host has no
// CSS; the frontend selects the host <body> first).
func (h *Hub) cssNodeLocked(w *Window, p *cdpDOMParams) (n pageNode, host bool, err error) {
	n, host, err = h.resolveNodeLocked(w, p.NodeID)
	if err == nil && !host && n.local == pageOwner {
		host = true
	}
	return n, host, err
}

// cssIDs rewrites the page's style sheet ids in place into the window's,
// refusing an answer that names something else. The generated decoders
// take null for any pointer, so a null where an object belongs refuses
// the answer too (it panicked here, under Hub.mu, leaving the window's
// request unanswered: TestPageCSSAnswerNullsRefused).
type cssIDs struct {
	ns  uint64
	err error
}

// present refuses an answer with a null where an object belongs.
func (x *cssIDs) present(ok bool, what string) bool {
	if !ok {
		x.err = fmt.Errorf("the page answered a null %s", what)
	}
	return ok
}

func (x *cssIDs) id(p *cdp.StyleSheetID) {
	if *p == "" {
		return
	}
	if !sourceproto.ValidCSSSheet(string(*p)) {
		x.err = fmt.Errorf("the page answered a style sheet id %q that is not a page's", *p)
		return
	}
	*p = sheetID(x.ns, string(*p))
}

func (x *cssIDs) style(s *css.Style) {
	if s != nil {
		x.id(&s.StyleSheetID)
	}
}

func (x *cssIDs) matches(ms []*css.RuleMatch) {
	for _, m := range ms {
		if m == nil || m.Rule == nil {
			x.err = errors.New("the page answered a rule match without its rule")
			continue
		}
		r := m.Rule
		x.id(&r.StyleSheetID)
		x.style(r.Style)
		for _, v := range r.Media {
			if x.present(v != nil, "media query") {
				x.id(&v.StyleSheetID)
			}
		}
		for _, v := range r.Supports {
			if x.present(v != nil, "@supports") {
				x.id(&v.StyleSheetID)
			}
		}
		for _, v := range r.Layers {
			if x.present(v != nil, "@layer") {
				x.id(&v.StyleSheetID)
			}
		}
		for _, v := range r.ContainerQueries {
			if x.present(v != nil, "@container") {
				x.id(&v.StyleSheetID)
			}
		}
	}
}

func (x *cssIDs) matched(m *css.GetMatchedStylesForNodeResult) {
	x.style(m.InlineStyle)
	x.style(m.AttributesStyle)
	x.matches(m.MatchedCSSRules)
	for _, p := range m.PseudoElements {
		if x.present(p != nil, "pseudo-element entry") {
			x.matches(p.Matches)
		}
	}
	for _, e := range m.Inherited {
		if x.present(e != nil, "inherited entry") {
			x.style(e.InlineStyle)
			x.matches(e.MatchedCSSRules)
		}
	}
}

// sheetEvents are CSS.styleSheetAdded for the sheets a page answer names
// first, in the window's ids and the page's frame.
func sheetEvents(call *runtimeCall, r *sourceproto.CSSResult, x *cssIDs) [][]byte {
	out := make([][]byte, 0, len(r.Sheets))
	for _, s := range r.Sheets {
		if !x.present(s != nil, "style sheet header") {
			continue
		}
		x.id(&s.StyleSheetID)
		s.FrameID = cdp.FrameID(call.ctx.frame.id)
		out = append(out, cdpproject.Event("CSS.styleSheetAdded", &css.EventStyleSheetAdded{Header: s}))
	}
	return out
}

// cssCallLocked sends a domCSS command; render makes the answer from the
// page's result with the window's ids.
func (h *Hub) cssCallLocked(w *Window, req Request, n pageNode, p *sourceproto.DOMParams,
	render func(r *sourceproto.CSSResult, x *cssIDs) any) error {
	p.CSS = cssQueryOf[req.Method]
	return h.domCallLocked(w, req, n, sourceproto.MethodDOMCSS, p,
		func(call *runtimeCall, res *sourceproto.DOMResult, _ *objectMapper) ([][]byte, []byte, error) {
			return cssAnswer(call, res, render)
		})
}

// cssAnswer is a domCSS result's events (the sheets it names first) and
// answer, in the window's ids.
func cssAnswer(call *runtimeCall, res *sourceproto.DOMResult, render func(r *sourceproto.CSSResult, x *cssIDs) any) ([][]byte, []byte, error) {
	if res.CSS == nil {
		return nil, nil, errors.New("the page answered without styles")
	}
	x := &cssIDs{ns: call.domNS}
	events := sheetEvents(call, res.CSS, x)
	answer := render(res.CSS, x)
	if x.err != nil {
		return nil, nil, x.err
	}
	b, err := cdpproject.Marshal(answer)
	return events, b, err
}

// matchedAnswer is getMatchedStylesForNode's answer with its arrays always
// present, as Chrome sends them (cdproto tags them omitempty; a frontend
// reads them without a default).
type matchedAnswer struct {
	*css.GetMatchedStylesForNodeResult
	MatchedCSSRules []*css.RuleMatch            `json:"matchedCSSRules"`
	PseudoElements  []*css.PseudoElementMatches `json:"pseudoElements"`
	Inherited       []*css.InheritedStyleEntry  `json:"inherited"`
}

// cssQueryOf is the domCSS query of each CSS method served by the page.
var cssQueryOf = map[string]sourceproto.CSSQuery{
	"CSS.getMatchedStylesForNode": sourceproto.CSSMatched,
	"CSS.getComputedStyleForNode": sourceproto.CSSComputed,
	"CSS.getInlineStylesForNode":  sourceproto.CSSInline,
	"CSS.getStyleSheetText":       sourceproto.CSSSheetText,
	"CSS.setStyleTexts":           sourceproto.CSSSetStyle,
	"CSS.createStyleSheet":        sourceproto.CSSNewSheet,
	"CSS.addRule":                 sourceproto.CSSAddRule,
	"CSS.forcePseudoState":        sourceproto.CSSForce,
	"CSS.setRuleSelector":         sourceproto.CSSSelector,
	"CSS.setMediaText":            sourceproto.CSSMedia,
	"CSS.setSupportsText":         sourceproto.CSSSupports,
	"CSS.getBackgroundColors":     sourceproto.CSSBack,
	"CSS.getPlatformFontsForNode": sourceproto.CSSFonts,
}

// The CSS methods (the method table's CSS entries).
var (
	GetMatchedStylesForNode DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, host, err := h.cssNodeLocked(w, p)
		switch {
		case err != nil:
			return nil, err
		case host:
			return []byte(`{"matchedCSSRules":[],"pseudoElements":[],"inherited":[]}`), nil
		}
		return nil, h.cssCallLocked(w, req, n, &sourceproto.DOMParams{Node: n.local}, func(r *sourceproto.CSSResult, x *cssIDs) any {
			if r.Matched == nil {
				x.err = errors.New("the page answered without matched styles")
				return nil
			}
			x.matched(r.Matched)
			return &matchedAnswer{r.Matched, r.Matched.MatchedCSSRules, r.Matched.PseudoElements, r.Matched.Inherited}
		})
	}

	GetComputedStyleForNode DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, host, err := h.cssNodeLocked(w, p)
		switch {
		case err != nil:
			return nil, err
		case host:
			return []byte(`{"computedStyle":[]}`), nil
		}
		return nil, h.cssCallLocked(w, req, n, &sourceproto.DOMParams{Node: n.local}, func(r *sourceproto.CSSResult, _ *cssIDs) any {
			return &struct {
				ComputedStyle []*css.ComputedStyleProperty `json:"computedStyle"`
			}{r.Computed}
		})
	}

	GetInlineStylesForNode DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, host, err := h.cssNodeLocked(w, p)
		switch {
		case err != nil:
			return nil, err
		case host:
			return []byte(`{}`), nil
		}
		return nil, h.cssCallLocked(w, req, n, &sourceproto.DOMParams{Node: n.local}, func(r *sourceproto.CSSResult, x *cssIDs) any {
			x.style(r.Inline)
			return &css.GetInlineStylesForNodeResult{InlineStyle: r.Inline}
		})
	}

	GetStyleSheetText DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, local, err := h.resolveSheetLocked(w, p.StyleSheetID)
		if err != nil {
			return nil, err
		}
		return nil, h.cssCallLocked(w, req, n, &sourceproto.DOMParams{Sheet: local}, func(r *sourceproto.CSSResult, _ *cssIDs) any {
			return &css.GetStyleSheetTextResult{Text: strings.Join(r.Text, "")}
		})
	}

	// SetStyleTexts makes one edit: the Styles pane sends one per change
	// (several would have to be one page's, made at once, or none).
	SetStyleTexts DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		if len(p.Edits) != 1 || p.Edits[0].Range == nil {
			return nil, errors.New("give exactly one edit with styleSheetId, range and text (the Styles pane sends one at a time)")
		}
		e := p.Edits[0]
		n, local, err := h.resolveSheetLocked(w, e.StyleSheetID)
		if err != nil {
			return nil, err
		}
		if e.Range.StartLine < 0 || e.Range.StartLine > sourceproto.MaxSafeInteger {
			return nil, fmt.Errorf("range.startLine %d is not a line", e.Range.StartLine)
		}
		return nil, h.liveEditLocked(w, req, n, styleKey{ns: n.ns, sheet: local, line: e.Range.StartLine}, e.Text)
	}

	// CreateStyleSheet is the page's inspector sheet (the Styles pane's
	// "+" button adds its rules there): one per window and page load.
	CreateStyleSheet DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		if p.FrameID == h.targetID {
			return nil, errors.New("the host frame has no CSS (the Node.js host has no DOM): select an element inside a page")
		}
		for c, ns := range w.client.dom.pages {
			if c.frame.id == p.FrameID && h.byRef[c.ref] == c {
				return nil, h.cssCallLocked(w, req, pageNode{ctx: c, ns: ns}, &sourceproto.DOMParams{}, func(r *sourceproto.CSSResult, x *cssIDs) any {
					id := cdp.StyleSheetID(r.Sheet)
					x.id(&id)
					return &css.CreateStyleSheetResult{StyleSheetID: id}
				})
			}
		}
		return nil, fmt.Errorf("no frame %q in this window's document (ask DOM.getDocument first, or the page has gone)", p.FrameID)
	}

	AddRule DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		n, local, err := h.resolveSheetLocked(w, p.StyleSheetID)
		if err != nil {
			return nil, err
		}
		if p.Location == nil || p.Location.StartLine < 0 || p.Location.StartLine > sourceproto.MaxSafeInteger {
			return nil, errors.New("give location, a range in the style sheet's text")
		}
		return nil, h.cssCallLocked(w, req, n, &sourceproto.DOMParams{Sheet: local, Line: p.Location.StartLine, Text: p.RuleText},
			func(r *sourceproto.CSSResult, x *cssIDs) any {
				if r.Rule == nil {
					x.err = errors.New("the page answered without the added rule")
					return nil
				}
				x.matches([]*css.RuleMatch{{Rule: r.Rule}})
				return &css.AddRuleResult{Rule: r.Rule}
			})
	}
)

// forcible are the pseudo-classes CSS.forcePseudoState forces in a page
// (client/js/cssforce.mjs FORCIBLE).
var forcible = map[string]bool{"active": true, "focus": true, "focus-within": true, "focus-visible": true,
	"hover": true, "target": true, "visited": true}

// ForcePseudoState forces states on a page's element: the page mirrors the
// rules that use them onto that element (docs/agent-note.md "Styles of
// pages"); an empty list clears the element's.
var ForcePseudoState DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
	for _, s := range p.ForcedPseudoClasses {
		if !forcible[s] {
			return nil, fmt.Errorf("cannot force :%s in a page (it can force :active, :focus, :focus-within, :focus-visible, :hover, :target, :visited)", s)
		}
	}
	n, host, err := h.cssNodeLocked(w, p)
	switch {
	case err != nil:
		return nil, err
	case host:
		return []byte(`{}`), nil
	}
	return nil, h.cssCallLocked(w, req, n, &sourceproto.DOMParams{Node: n.local, Text: strings.Join(p.ForcedPseudoClasses, ",")},
		func(*sourceproto.CSSResult, *cssIDs) any { return struct{}{} })
}
