//go:build linux

package cdpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

// CSS.setRuleSelector edits the rule at its selectors' range (each
// selector now carries one), setMediaText and setSupportsText the
// conditions of the grouping rules around it; the page's CSSOM follows
// (a media query that stops holding takes the rule out of the matched
// ones and out of the computed style), and what the page's parser refuses
// is refused by name. A rule inside @container is listed with its
// condition.
func TestCSSSetSelectorMediaSupports(t *testing.T) {
	_, a, ctx, h1 := cssTitle(t)
	evalValue(t, a, ctx, `(() => { const s = document.createElement('style');
		s.textContent = '@container (min-width: 1px) { h1 { outline-width: 1px; } }'; document.head.append(s); return 1; })()`)
	type sel struct {
		Text  string    `json:"text"`
		Range *cssRange `json:"range"`
	}
	type rule struct {
		StyleSheetID string `json:"styleSheetId"`
		SelectorList struct {
			Selectors []sel  `json:"selectors"`
			Text      string `json:"text"`
		} `json:"selectorList"`
		Media            []sel            `json:"media"`
		Supports         []sel            `json:"supports"`
		ContainerQueries []map[string]any `json:"containerQueries"`
	}
	matched := func() map[string]rule {
		m := a.MustCall("CSS.getMatchedStylesForNode", map[string]any{"nodeId": h1})
		var ans struct {
			MatchedCSSRules []struct {
				Rule rule `json:"rule"`
			} `json:"matchedCSSRules"`
		}
		if err := json.Unmarshal(m.Result, &ans); err != nil {
			t.Fatalf("CSS.getMatchedStylesForNode: %s", m.Raw)
		}
		out := map[string]rule{}
		for _, r := range ans.MatchedCSSRules {
			out[r.Rule.SelectorList.Text] = r.Rule
		}
		return out
	}
	computed := func(prop string) string {
		var v string
		_ = json.Unmarshal(evalValue(t, a, ctx, `getComputedStyle(document.getElementById('title')).getPropertyValue('`+prop+`')`), &v)
		return v
	}
	ms := matched()
	found := false
	for _, r := range ms {
		for _, q := range r.ContainerQueries {
			found = found || q["conditionText"] == "(min-width: 1px)"
		}
	}
	if !found {
		t.Errorf("no rule listed with its @container (min-width: 1px) condition: %+v", ms)
	}

	big := ms[".big"]
	if len(big.SelectorList.Selectors) != 1 || big.SelectorList.Selectors[0].Range == nil {
		t.Fatalf("the .big rule's selector has no range: %+v", big.SelectorList)
	}
	r := a.MustCall("CSS.setRuleSelector", map[string]any{"styleSheetId": big.StyleSheetID, "range": big.SelectorList.Selectors[0].Range, "selector": "h1.big, p"})
	if !strings.Contains(string(r.Result), `"text":"h1.big, p"`) {
		t.Fatalf("CSS.setRuleSelector answered %s", r.Raw)
	}
	if nb, ok := matched()["h1.big, p"]; !ok || len(nb.SelectorList.Selectors) != 2 || nb.SelectorList.Selectors[1].Range.StartColumn != 8 {
		t.Errorf("the rule after setRuleSelector: %+v (listed: %v)", nb, ok)
	}
	if got := domError(t, a, "CSS.setRuleSelector", map[string]any{"styleSheetId": big.StyleSheetID, "range": big.SelectorList.Selectors[0].Range, "selector": "h1["}); !strings.Contains(got, "refused the selector") {
		t.Errorf("an invalid selector: %q", got)
	}

	sup := matched()["h1.big, p"].Supports[0]
	r = a.MustCall("CSS.setSupportsText", map[string]any{"styleSheetId": big.StyleSheetID, "range": sup.Range, "text": "(display: flex)"})
	if !strings.Contains(string(r.Result), `"text":"(display: flex)"`) {
		t.Fatalf("CSS.setSupportsText answered %s", r.Raw)
	}
	if s := matched()["h1.big, p"].Supports; len(s) != 1 || s[0].Text != "(display: flex)" || computed("padding-top") != "3px" {
		t.Errorf("after setSupportsText: %+v, padding-top %s", s, computed("padding-top"))
	}

	media := matched()["#title"].Media[0]
	r = a.MustCall("CSS.setMediaText", map[string]any{"styleSheetId": big.StyleSheetID, "range": media.Range, "text": "(min-width: 2px)"})
	if !strings.Contains(string(r.Result), `"text":"(min-width: 2px)"`) {
		t.Fatalf("CSS.setMediaText answered %s", r.Raw)
	}
	if m := matched()["#title"].Media; len(m) != 1 || m[0].Text != "(min-width: 2px)" {
		t.Errorf("after setMediaText: %+v", m)
	}
	a.MustCall("CSS.setMediaText", map[string]any{"styleSheetId": big.StyleSheetID, "range": media.Range, "text": "(max-width: 1px)"})
	if _, ok := matched()["#title"]; ok || computed("margin-left") != "0px" {
		t.Errorf("under a media query that no longer holds, #title is listed: %v; margin-left %s", ok, computed("margin-left"))
	}
	if got := domError(t, a, "CSS.setMediaText", map[string]any{"styleSheetId": big.StyleSheetID, "range": map[string]int{"startLine": 0}, "text": "x"}); !strings.Contains(got, "no @media rule on line 0") {
		t.Errorf("setMediaText on a line without @media: %q", got)
	}
}

// CSS.getBackgroundColors: the <h1>'s half-transparent red over its
// <div>'s blue, blended as the page paints it, with its computed font size
// and weight; CSS.getPlatformFontsForNode: the first family of its
// font-family the platform has (an unknown one skipped), then a loaded
// @font-face family as a custom font, with the <h1>'s text's characters as
// glyphs.
func TestCSSBackgroundColorsAndFonts(t *testing.T) {
	_, a, ctx, h1 := cssTitle(t)
	evalValue(t, a, ctx, `(() => { const s = document.createElement('style');
		s.textContent = 'div { background-color: rgb(0, 0, 255); } #title { background-color: rgba(255, 0, 0, 0.5); font-weight: 700; font-family: "NoSuchFamilyXyz", "DejaVu Serif", serif; }';
		document.head.append(s); return 1; })()`)
	m := a.MustCall("CSS.getBackgroundColors", map[string]any{"nodeId": h1})
	var bg struct {
		BackgroundColors   []string `json:"backgroundColors"`
		ComputedFontSize   string   `json:"computedFontSize"`
		ComputedFontWeight string   `json:"computedFontWeight"`
	}
	_ = json.Unmarshal(m.Result, &bg)
	if len(bg.BackgroundColors) != 1 || bg.BackgroundColors[0] != "rgb(128, 0, 128)" || bg.ComputedFontSize != "20px" || bg.ComputedFontWeight != "700" {
		t.Errorf("CSS.getBackgroundColors of the <h1>: %s, want rgb(128, 0, 128), 20px, 700", m.Raw)
	}
	type font struct {
		FamilyName   string  `json:"familyName"`
		IsCustomFont bool    `json:"isCustomFont"`
		GlyphCount   float64 `json:"glyphCount"`
	}
	fonts := func() []font {
		m := a.MustCall("CSS.getPlatformFontsForNode", map[string]any{"nodeId": h1})
		var ans struct {
			Fonts []font `json:"fonts"`
		}
		if err := json.Unmarshal(m.Result, &ans); err != nil {
			t.Fatalf("CSS.getPlatformFontsForNode: %s", m.Raw)
		}
		return ans.Fonts
	}
	if f := fonts(); len(f) != 1 || f[0].FamilyName != "DejaVu Serif" || f[0].IsCustomFont || f[0].GlyphCount != float64(len("CSS page")) {
		t.Errorf("the <h1>'s fonts: %+v, want DejaVu Serif (installed), not custom, 8 glyphs", f)
	}
	evalValue(t, a, ctx, `(async () => { const f = new FontFace('IWFace', 'local("DejaVu Sans")'); await f.load(); document.fonts.add(f);
		document.getElementById('title').style.fontFamily = 'IWFace, serif'; return 1; })()`)
	if f := fonts(); len(f) != 1 || f[0].FamilyName != "IWFace" || !f[0].IsCustomFont {
		t.Errorf("the <h1>'s fonts with a loaded @font-face family: %+v, want IWFace, custom", f)
	}
	// A host placeholder has none.
	if m := a.MustCall("CSS.getPlatformFontsForNode", map[string]any{"nodeId": 4}); compact(t, m.Result) != `{"fonts":[]}` {
		t.Errorf("the host <body>'s fonts: %s", m.Raw)
	}
}
