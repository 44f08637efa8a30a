package pagerealm

import (
	"errors"

	"github.com/chromedp/cdproto/css"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The CSS methods that edit a rule's selector or a grouping rule's
// condition, and the node queries for the contrast checker and the
// Computed pane's fonts (client/js/css.mjs, cssfont.mjs).

// ruleEditLocked sends a sheet edit named by a range's line (setSelector,
// setMedia, setSupports).
func (h *Hub) ruleEditLocked(w *Window, req Request, p *cdpDOMParams, text string, render func(r *sourceproto.CSSResult, x *cssIDs) any) error {
	n, local, err := h.resolveSheetLocked(w, p.StyleSheetID)
	if err != nil {
		return err
	}
	if p.Range == nil || p.Range.StartLine < 0 || p.Range.StartLine > sourceproto.MaxSafeInteger {
		return errors.New("give range, the rule's range in the style sheet's text")
	}
	return h.cssCallLocked(w, req, n, &sourceproto.DOMParams{Sheet: local, Line: p.Range.StartLine, Text: text}, render)
}

// nodeQueryLocked sends a node query; a host placeholder gets empty.
func (h *Hub) nodeQueryLocked(w *Window, req Request, p *cdpDOMParams, empty string, render func(r *sourceproto.CSSResult, x *cssIDs) any) ([]byte, error) {
	n, host, err := h.cssNodeLocked(w, p)
	switch {
	case err != nil:
		return nil, err
	case host:
		return []byte(empty), nil
	}
	return nil, h.cssCallLocked(w, req, n, &sourceproto.DOMParams{Node: n.local}, render)
}

var (
	SetRuleSelector DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		return nil, h.ruleEditLocked(w, req, p, p.Selector, func(r *sourceproto.CSSResult, x *cssIDs) any {
			if r.SelectorList == nil {
				x.err = errors.New("the page answered without the rule's selectors")
				return nil
			}
			return &css.SetRuleSelectorResult{SelectorList: r.SelectorList}
		})
	}

	SetMediaText DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		return nil, h.ruleEditLocked(w, req, p, p.Text, func(r *sourceproto.CSSResult, x *cssIDs) any {
			if r.Media == nil {
				x.err = errors.New("the page answered without the media rule")
				return nil
			}
			x.id(&r.Media.StyleSheetID)
			return &css.SetMediaTextResult{Media: r.Media}
		})
	}

	SetSupportsText DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		return nil, h.ruleEditLocked(w, req, p, p.Text, func(r *sourceproto.CSSResult, x *cssIDs) any {
			if r.Supports == nil {
				x.err = errors.New("the page answered without the supports rule")
				return nil
			}
			x.id(&r.Supports.StyleSheetID)
			return &css.SetSupportsTextResult{Supports: r.Supports}
		})
	}

	// GetBackgroundColors: what the page can tell of the colors behind a
	// node's text (the contrast checker's input).
	GetBackgroundColors DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		return h.nodeQueryLocked(w, req, p, `{}`, func(r *sourceproto.CSSResult, _ *cssIDs) any {
			if r.Background == nil {
				return &css.GetBackgroundColorsResult{}
			}
			return r.Background
		})
	}

	// GetPlatformFontsForNode: the font the page finds for a node's text.
	GetPlatformFontsForNode DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
		return h.nodeQueryLocked(w, req, p, `{"fonts":[]}`, func(r *sourceproto.CSSResult, _ *cssIDs) any {
			return &struct {
				Fonts []*css.PlatformFontUsage `json:"fonts"`
			}{append([]*css.PlatformFontUsage{}, r.Fonts...)}
		})
	}
)
