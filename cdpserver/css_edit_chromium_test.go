//go:build linux

package cdpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// Live edits: the Styles pane sends a CSS.setStyleTexts per keystroke.
// Keys typed while the page is slow to answer (here: busy for 1.5 s) are
// pipelined; each answer must be the style as the newest edit left it, not
// an older keystroke's (which the pane would put back into the editor: CI
// once committed "rgb(0, 0, 2" for a typed "rgb(0, 0, 255)"). Only the
// edit already on its way when the others arrived answers its own text.
func TestCSSLiveEditsNewestWins(t *testing.T) {
	_, a, ctx, h1 := cssTitle(t)
	media := ruleOf(matchedOf(t, a, h1).MatchedCSSRules, "#title")
	evalValue(t, a, ctx, `(() => { setTimeout(() => { const end = Date.now() + 1500; while (Date.now() < end); }, 0); return 1; })()`)
	time.Sleep(200 * time.Millisecond) // the page is busy from now for another 1.3 s
	texts := []string{"margin-left: 1px;", "margin-left: 12px;", "margin-left: 123px;", "margin-left: 1234px;"}
	ids := make([]int64, len(texts))
	for i, text := range texts {
		ids[i] = a.Send("CSS.setStyleTexts", map[string]any{"edits": []map[string]any{
			{"styleSheetId": media.StyleSheetID, "range": media.Style.Range, "text": text}}})
	}
	final := texts[len(texts)-1]
	got := make([]string, len(texts))
	for i, id := range ids {
		m := a.ExpectResponse(id)
		var ans struct {
			Styles []cssStyle `json:"styles"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &ans) != nil || len(ans.Styles) != 1 {
			t.Fatalf("setStyleTexts %d (%q): %s", i, texts[i], m.Raw)
		}
		got[i] = ans.Styles[0].CSSText
	}
	t.Logf("answers to %d pipelined edits: %q", len(texts), got)
	if got[0] != texts[0] {
		t.Errorf("the first edit (on its way when the others came) answered %q, want its own %q", got[0], texts[0])
	}
	for i := 1; i < len(got); i++ {
		if got[i] != final {
			t.Errorf("edit %d answered %q after edit %d was sent: an older state than the newest edit's %q", i, got[i], len(texts)-1, final)
		}
	}
	var v string
	_ = json.Unmarshal(evalValue(t, a, ctx, `getComputedStyle(document.getElementById('title')).marginLeft`), &v)
	if v != "1234px" {
		t.Errorf("the page's margin-left after the edits: %q, want 1234px", v)
	}
	// The style's edits run again one at a time once the page answers.
	m := a.MustCall("CSS.setStyleTexts", map[string]any{"edits": []map[string]any{
		{"styleSheetId": media.StyleSheetID, "range": media.Style.Range, "text": "margin-left: 5px;"}}})
	if want := fmt.Sprintf(`"cssText":%q`, "margin-left: 5px;"); !json.Valid(m.Result) || !strings.Contains(string(m.Result), want) {
		t.Errorf("an edit after the burst: %s", m.Raw)
	}
}

// cssProp is a CSSProperty with what toggling and typing show.
type cssProp struct {
	Name     string    `json:"name"`
	Value    string    `json:"value"`
	Text     string    `json:"text"`
	Disabled bool      `json:"disabled"`
	ParsedOk bool      `json:"parsedOk"`
	Range    *cssRange `json:"range"`
}

// setStyle makes one setStyleTexts edit and returns the style's properties.
func setStyle(t *testing.T, a interface {
	MustCall(string, any) cdptest.Msg
}, sheet string, r *cssRange, text string) (string, []cssProp) {
	t.Helper()
	m := a.MustCall("CSS.setStyleTexts", map[string]any{"edits": []map[string]any{{"styleSheetId": sheet, "range": r, "text": text}}})
	var ans struct {
		Styles []struct {
			CSSText       string    `json:"cssText"`
			CSSProperties []cssProp `json:"cssProperties"`
		} `json:"styles"`
	}
	if json.Unmarshal(m.Result, &ans) != nil || len(ans.Styles) != 1 {
		t.Fatalf("setStyleTexts %q: %s", text, m.Raw)
	}
	return ans.Styles[0].CSSText, ans.Styles[0].CSSProperties
}

// Toggling a property off in the Styles pane writes it as a comment: the
// page stops applying it, and the rule keeps showing it, disabled, in the
// answer, in matched styles and in the sheet's text, until it is toggled
// on again. A value the page's parser refuses (one being typed) stays as
// typed, not parsed, instead of vanishing from the rule.
func TestCSSToggledPropertyStaysDisabled(t *testing.T) {
	_, a, ctx, h1 := cssTitle(t)
	media := ruleOf(matchedOf(t, a, h1).MatchedCSSRules, "#title")
	margin := func() string {
		var v string
		_ = json.Unmarshal(evalValue(t, a, ctx, `getComputedStyle(document.getElementById('title')).marginLeft`), &v)
		return v
	}
	text, props := setStyle(t, a, media.StyleSheetID, media.Style.Range, "/* margin-left: 7px; */ padding-left: 1px;")
	if len(props) != 2 || !props[0].Disabled || props[0].Name != "margin-left" || props[0].Text != "/* margin-left: 7px; */" || props[1].Disabled {
		t.Fatalf("the answer to toggling margin-left off: %q %+v", text, props)
	}
	if got := margin(); got != "0px" {
		t.Errorf("the page's margin-left with the property toggled off: %q, want 0px", got)
	}
	var rule struct {
		Rule struct {
			Style struct {
				CSSProperties []cssProp `json:"cssProperties"`
				Range         *cssRange `json:"range"`
			} `json:"style"`
			SelectorList struct {
				Text string `json:"text"`
			} `json:"selectorList"`
		} `json:"rule"`
	}
	m := a.MustCall("CSS.getMatchedStylesForNode", map[string]any{"nodeId": h1})
	var all struct {
		MatchedCSSRules []json.RawMessage `json:"matchedCSSRules"`
	}
	_ = json.Unmarshal(m.Result, &all)
	found := false
	for _, raw := range all.MatchedCSSRules {
		_ = json.Unmarshal(raw, &rule)
		if rule.Rule.SelectorList.Text == "#title" {
			found = true
			ps := rule.Rule.Style.CSSProperties
			if len(ps) != 2 || !ps[0].Disabled || ps[0].Name != "margin-left" {
				t.Errorf("matched styles after the toggle: %+v, want margin-left shown disabled", ps)
			}
		}
	}
	if !found {
		t.Fatalf("the #title rule is gone from matched styles: %s", m.Raw)
	}
	st := a.MustCall("CSS.getStyleSheetText", map[string]any{"styleSheetId": media.StyleSheetID})
	if !strings.Contains(string(st.Result), "#title { /* margin-left: 7px; */ padding-left: 1px; }") {
		t.Errorf("the sheet's text after the toggle: %s", st.Raw)
	}
	if _, props = setStyle(t, a, media.StyleSheetID, rule.Rule.Style.Range, "margin-left: 7px; padding-left: 1px;"); len(props) != 2 || props[0].Disabled {
		t.Errorf("toggled on again: %+v", props)
	}
	if got := margin(); got != "7px" {
		t.Errorf("the page's margin-left toggled on again: %q, want 7px", got)
	}
	// A value being typed: "7p" does not parse yet.
	if text, props = setStyle(t, a, media.StyleSheetID, rule.Rule.Style.Range, "margin-left: 7p;"); text != "margin-left: 7p;" || len(props) != 1 || props[0].ParsedOk || props[0].Value != "7p" {
		t.Errorf("a value the parser refuses: %q %+v, want it kept as typed, parsedOk false", text, props)
	}
}

// A page that goes (here: its client stops, as on a reload or a closed
// tab) while a style's edits wait behind the one on its way answers every
// one of them at once, with the reason, not at the Runtime deadline (a
// minute here).
func TestCSSLiveEditsPageGoes(t *testing.T) {
	_, a, ctx, h1 := cssTitle(t)
	media := ruleOf(matchedOf(t, a, h1).MatchedCSSRules, "#title")
	evalValue(t, a, ctx, `(() => { setTimeout(() => { const end = Date.now() + 1500; while (Date.now() < end); window.__inspectorWorkerClient.stop(); }, 0); return 1; })()`)
	time.Sleep(200 * time.Millisecond) // the page is busy from now for another 1.3 s, then stops
	start := time.Now()
	ids := make([]int64, 3)
	for i := range ids {
		ids[i] = a.Send("CSS.setStyleTexts", map[string]any{"edits": []map[string]any{
			{"styleSheetId": media.StyleSheetID, "range": media.Style.Range, "text": fmt.Sprintf("margin-left: %dpx;", i+1)}}})
	}
	for i, id := range ids {
		m := a.ExpectResponse(id)
		if m.Error == nil {
			t.Errorf("edit %d answered %s after the page reloaded, want an error", i, m.Raw)
		} else if !strings.Contains(m.Error.Message, "closed") {
			t.Errorf("edit %d: %q, want it to say the page went", i, m.Error.Message)
		}
	}
	took := time.Since(start)
	t.Logf("3 edits answered %v after they were sent (the page stopped 1.3 s after)", took)
	if took > 30*time.Second {
		t.Errorf("the edits waiting behind the one in flight were answered after %v: at the deadline, not when the page went", took)
	}
}
