//go:build linux

package cdpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
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
