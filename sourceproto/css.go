package sourceproto

import (
	"regexp"

	"github.com/chromedp/cdproto/css"
	"github.com/mailru/easyjson/jlexer"
	"github.com/mailru/easyjson/jwriter"
)

// CSS of a page (client/js/css.mjs): one member of the Runtime unions,
// domCSS, whose params name the query (CSSQuery) and whose result carries
// CDP's own CSS types with the page's style sheet ids. A page's style
// sheet id is "s<n>" (a style sheet, numbered per session and document
// epoch) or "i<node>" (the inline style of the page's node <node>); the
// worker puts its window's namespace in front (pagerealm/css.go).

// CSSQuery is the discriminant of a domCSS command.
type CSSQuery string

const (
	CSSMatched   CSSQuery = "matched"     // CSS.getMatchedStylesForNode of node
	CSSComputed  CSSQuery = "computed"    // CSS.getComputedStyleForNode of node
	CSSInline    CSSQuery = "inline"      // CSS.getInlineStylesForNode of node
	CSSSheetText CSSQuery = "sheetText"   // CSS.getStyleSheetText of sheet
	CSSSetStyle  CSSQuery = "setStyle"    // one edit of CSS.setStyleTexts: sheet, line, text
	CSSNewSheet  CSSQuery = "newSheet"    // CSS.createStyleSheet: the session's inspector sheet
	CSSAddRule   CSSQuery = "addRule"     // CSS.addRule: sheet, line (where), text (the rule)
	CSSForce     CSSQuery = "force"       // CSS.forcePseudoState: node, text (the states, comma-separated; none: clear)
	CSSSelector  CSSQuery = "setSelector" // CSS.setRuleSelector: sheet, line (the rule's), text (the selector)
	CSSMedia     CSSQuery = "setMedia"    // CSS.setMediaText: sheet, line (the @media rule's), text
	CSSSupports  CSSQuery = "setSupports" // CSS.setSupportsText: sheet, line (the @supports rule's), text
	CSSBack      CSSQuery = "background"  // CSS.getBackgroundColors of node
	CSSFonts     CSSQuery = "fonts"       // CSS.getPlatformFontsForNode of node
)

var cssQueries = []CSSQuery{CSSMatched, CSSComputed, CSSInline, CSSSheetText, CSSSetStyle, CSSNewSheet, CSSAddRule, CSSForce,
	CSSSelector, CSSMedia, CSSSupports, CSSBack, CSSFonts}

func (v *CSSQuery) UnmarshalEasyJSON(l *jlexer.Lexer) { *v = readEnum(l, cssQueries) }
func (v CSSQuery) MarshalEasyJSON(w *jwriter.Writer)  { w.String(string(v)) }

// CSSResult is domCSS's answer; which members are set depends on the query.
//
//easyjson:json
type CSSResult struct {
	// Sheets are the style sheets this answer names that the session was
	// not told of yet (the worker sends CSS.styleSheetAdded for each,
	// before the answer: the frontend needs a rule's header).
	Sheets   []*css.StyleSheetHeader            `json:"sheets,omitempty"`
	Matched  *css.GetMatchedStylesForNodeResult `json:"matched,omitempty"`
	Computed []*css.ComputedStyleProperty       `json:"computed,omitempty"`
	Inline   *css.Style                         `json:"inline,omitempty"`
	// Text: a style sheet's text in parts (each bounded by MaxStringBytes).
	Text []string `json:"text,omitempty"`
	// Style: the edited style (setStyle).
	Style *css.Style `json:"style,omitempty"`
	// Sheet: the inspector sheet's id (newSheet; its header is in Sheets
	// the first time). Rule: the added rule (addRule).
	Sheet string    `json:"sheet,omitempty"`
	Rule  *css.Rule `json:"rule,omitempty"`
	// SelectorList: the edited rule's selectors (setSelector); Media and
	// Supports: the edited grouping rule's condition (setMedia, setSupports).
	SelectorList *css.SelectorList `json:"selectorList,omitempty"`
	Media        *css.Media        `json:"media,omitempty"`
	Supports     *css.Supports     `json:"supports,omitempty"`
	// Background: the node's background colors and font (background);
	// Fonts: the fonts its text uses, as far as the page can tell (fonts).
	Background *css.GetBackgroundColorsResult `json:"background,omitempty"`
	Fonts      []*css.PlatformFontUsage       `json:"fonts,omitempty"`
}

// cssSheetID is a page's style sheet id.
var cssSheetID = regexp.MustCompile(`^[si][1-9][0-9]{0,14}$`)

// ValidCSSSheet reports whether id is a page's style sheet id.
func ValidCSSSheet(id string) bool { return cssSheetID.MatchString(id) }

// validateCSS checks a domCSS command: a node for the node queries, a
// sheet for the others, and nothing else.
func (p *DOMParams) validateCSS() *RejectError {
	if p.Handle != "" || len(p.Nodes) > 0 || p.Depth != 0 || p.Edit != "" || p.Name != "" || p.Value != "" ||
		p.ObjectGroup != "" || p.Search != "" || p.From != 0 || p.To != 0 {
		return malformed("domCSS takes doc, css and node or sheet, line and text")
	}
	if p.Line < 0 || p.Line > MaxSafeInteger {
		return malformed("line must be in 0..2^53-1")
	}
	switch p.CSS {
	case CSSMatched, CSSComputed, CSSInline, CSSBack, CSSFonts:
		if p.Node == 0 || p.Sheet != "" || p.Line != 0 || p.Text != "" {
			return malformed("domCSS " + string(p.CSS) + " takes node only")
		}
	case CSSForce:
		if p.Node == 0 || p.Sheet != "" || p.Line != 0 {
			return malformed("domCSS force takes node and text")
		}
	case CSSSheetText:
		if p.Node != 0 || !ValidCSSSheet(p.Sheet) || p.Line != 0 || p.Text != "" {
			return malformed("domCSS sheetText takes sheet only")
		}
	case CSSSetStyle, CSSAddRule, CSSSelector, CSSMedia, CSSSupports:
		if p.Node != 0 || !ValidCSSSheet(p.Sheet) {
			return malformed("domCSS " + string(p.CSS) + " takes sheet, line and text")
		}
	case CSSNewSheet:
		if p.Node != 0 || p.Sheet != "" || p.Line != 0 || p.Text != "" {
			return malformed("domCSS newSheet takes doc only")
		}
	default:
		return malformed("domCSS needs css")
	}
	return nil
}
