//go:build linux

package cdpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// CSS.forcePseudoState: forcing :hover on the <h1> applies the page's
// :hover rules to it (its computed style changes, also for a rule inside
// @layer) and lists them among its matched rules, with nothing added to
// the page's DOM or its style sheet list; clearing the state, and closing
// the window that forced it, undo it.
func TestCSSForcePseudoStateHover(t *testing.T) {
	w, a, ctx, h1 := cssTitle(t)
	evalValue(t, a, ctx, `(() => { const s = document.createElement('style');
		s.textContent = '#title:hover { padding-bottom: 9px; }\n@layer base { h1:hover, p { padding-right: 4px; } }\ndiv:hover > h1 { padding-left: 2px; }';
		document.head.append(s); return 1; })()`)
	computed := func(prop string) string {
		var v string
		_ = json.Unmarshal(evalValue(t, a, ctx, `getComputedStyle(document.getElementById('title')).getPropertyValue('`+prop+`')`), &v)
		return v
	}
	var dom0 string
	_ = json.Unmarshal(evalValue(t, a, ctx, `document.documentElement.outerHTML + ' sheets ' + document.styleSheets.length`), &dom0)
	if got := computed("padding-bottom"); got != "0px" {
		t.Fatalf("padding-bottom before forcing: %q", got)
	}
	if ruleOf(matchedOf(t, a, h1).MatchedCSSRules, "#title:hover") != nil {
		t.Fatalf("#title:hover is listed before forcing")
	}

	a.MustCall("CSS.forcePseudoState", map[string]any{"nodeId": h1, "forcedPseudoClasses": []string{"hover"}})
	if got, want := computed("padding-bottom")+" "+computed("padding-right")+" "+computed("padding-left"), "9px 4px 0px"; got != want {
		t.Errorf("padding-bottom, -right, -left with :hover forced on the <h1>: %q, want %q (div:hover > h1 needs the <div> hovered)", got, want)
	}
	ms := matchedOf(t, a, h1)
	if r := ruleOf(ms.MatchedCSSRules, "#title:hover"); r == nil {
		t.Errorf("#title:hover is not among the matched rules with :hover forced: %+v", ms.MatchedCSSRules)
	}
	if r := ruleOf(ms.MatchedCSSRules, "h1:hover, p"); r == nil || len(r.Layers) != 1 {
		t.Errorf("h1:hover inside @layer base: %+v", r)
	}
	if ruleOf(ms.MatchedCSSRules, "div:hover > h1") != nil {
		t.Errorf("div:hover > h1 is listed, but only the <h1> is forced")
	}
	for _, m := range ms.MatchedCSSRules {
		if strings.Contains(m.Rule.SelectorList.Text, "nth-child") {
			t.Errorf("the mirror rule %q is listed", m.Rule.SelectorList.Text)
		}
	}
	var dom1 string
	_ = json.Unmarshal(evalValue(t, a, ctx, `document.documentElement.outerHTML + ' sheets ' + document.styleSheets.length`), &dom1)
	if dom1 != dom0 {
		t.Errorf("forcing changed the page's DOM or its sheets:\n%s\nvs\n%s", dom0, dom1)
	}
	if got := domError(t, a, "CSS.forcePseudoState", map[string]any{"nodeId": h1, "forcedPseudoClasses": []string{"checked"}}); !strings.Contains(got, "cannot force :checked") {
		t.Errorf("forcing :checked: %q", got)
	}

	a.MustCall("CSS.forcePseudoState", map[string]any{"nodeId": h1, "forcedPseudoClasses": []string{}})
	if got := computed("padding-bottom"); got != "0px" {
		t.Errorf("padding-bottom after clearing the forced state: %q, want 0px", got)
	}
	var adopted float64
	_ = json.Unmarshal(evalValue(t, a, ctx, `document.adoptedStyleSheets.length`), &adopted)
	if adopted != 0 {
		t.Errorf("%v sheets stay adopted after the last forced state went", adopted)
	}

	// Forced again, then the window goes: another window sees it undone.
	a.MustCall("CSS.forcePseudoState", map[string]any{"nodeId": h1, "forcedPseudoClasses": []string{"hover", "focus"}})
	if got := computed("padding-bottom"); got != "9px" {
		t.Fatalf("padding-bottom forced again: %q", got)
	}
	b, ctxs := domWindow(t, w, "B", "CSS page")
	_ = a.Conn().CloseNow()
	var got string
	for i := 0; i < 200; i++ { // up to 10 s
		_ = json.Unmarshal(evalValue(t, b, ctxs["CSS page"], `getComputedStyle(document.getElementById('title')).paddingBottom`), &got)
		if got == "0px" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got != "0px" {
		t.Errorf("padding-bottom after the window that forced :hover closed: %q, want 0px", got)
	}
}
