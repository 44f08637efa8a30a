//go:build linux

package cdpserver

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	clientjs "github.com/inspector-worker/inspector-worker/client/js"
	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
)

// The pages' styles in the one window, with a real page: headless Chromium
// loads a page with the shipped client.js, a style sheet with rules inside
// @media, @supports and @layer, and a cross-origin sheet; a DevTools
// client reads and edits its styles through the worker, and what it is
// told is compared with the page's own getComputedStyle.

// cssPageBody is the page's style and elements ({{x}}: the cross-origin
// sheet's URL).
const cssPageBody = `<style>
body { color: rgb(1, 2, 3); }
@media (min-width: 1px) { #title { margin-left: 7px; } }
@media (max-width: 1px) { #title { margin-left: 99px; } }
@supports (display: grid) { .big { padding-top: 3px; } }
@layer base { h1 { border-top-width: 2px; } }
h1::before { content: "x"; }
</style><link rel="stylesheet" href="{{x}}">
</head><body><div><h1 id="title" class="big" style="font-size: 20px">CSS page</h1></div></body></html>`

// cssPage serves the page and a style sheet of another origin (localhost
// vs 127.0.0.1, no CORS), and opens the page in headless Chromium.
func cssPage(t *testing.T, reg *sourceproto.Registry, token sourceproto.Token) {
	t.Helper()
	h, err := carrier.NewClientHandler(carrier.ClientOptions{Registry: reg, Token: token, ClientJS: clientjs.ClientJS(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	cross := fmt.Sprintf("http://localhost:%d/cross.css", port)
	page := `<!doctype html><html><head><title>CSS page</title>` +
		`<script src="/client.js" data-endpoint="ws://` + ln.Addr().String() + `/client" data-token="` + token.Reveal() + `"></script>` +
		strings.ReplaceAll(cssPageBody, "{{x}}", cross)
	mux := http.NewServeMux()
	mux.Handle("/client", h)
	mux.Handle("/client.js", h)
	mux.HandleFunc("/cross.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		_, _ = w.Write([]byte("p { color: red; }\n"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	cmd := exec.Command(chromiumBinary(t), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(), "http://"+ln.Addr().String()+"/")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		proctest.AssertGone(t, cmd.Process.Pid)
	})
}

// cssRange is CDP's SourceRange.
type cssRange struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
	EndLine     int `json:"endLine"`
	EndColumn   int `json:"endColumn"`
}

type cssStyle struct {
	StyleSheetID  string `json:"styleSheetId"`
	CSSText       string `json:"cssText"`
	Range         *cssRange
	CSSProperties []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"cssProperties"`
}

type cssRule struct {
	StyleSheetID string `json:"styleSheetId"`
	SelectorList struct {
		Text string `json:"text"`
	} `json:"selectorList"`
	Style    cssStyle         `json:"style"`
	Media    []map[string]any `json:"media"`
	Supports []map[string]any `json:"supports"`
	Layers   []map[string]any `json:"layers"`
}

type cssMatch struct {
	Rule              cssRule `json:"rule"`
	MatchingSelectors []int   `json:"matchingSelectors"`
}

type cssMatched struct {
	InlineStyle     *cssStyle  `json:"inlineStyle"`
	MatchedCSSRules []cssMatch `json:"matchedCSSRules"`
	PseudoElements  []struct {
		PseudoType string     `json:"pseudoType"`
		Matches    []cssMatch `json:"matches"`
	} `json:"pseudoElements"`
	Inherited []struct {
		MatchedCSSRules []cssMatch `json:"matchedCSSRules"`
	} `json:"inherited"`
}

// ruleOf is the matched rule with selector sel, or nil.
func ruleOf(ms []cssMatch, sel string) *cssRule {
	for i := range ms {
		if ms[i].Rule.SelectorList.Text == sel {
			return &ms[i].Rule
		}
	}
	return nil
}

// cssTitle opens a window on the CSS page and returns it, the page's
// context and the window's node id of its <h1>.
func cssTitle(t *testing.T) (*worker, *cdptest.Client, ctxEvent, int64) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	cssPage(t, reg, token)
	a, ctxs := domWindow(t, w, "A", "CSS page")
	ctx := ctxs["CSS page"]
	newDOMTree(t, a)
	obj := evalIn(t, a, ctx, `document.getElementById('title')`, "console")
	m := a.MustCall("DOM.requestNode", map[string]any{"objectId": obj.Result.ObjectID})
	var rn struct {
		NodeID int64 `json:"nodeId"`
	}
	if err := json.Unmarshal(m.Result, &rn); err != nil || rn.NodeID == 0 {
		t.Fatalf("DOM.requestNode of the <h1>: %s", m.Raw)
	}
	a.MustCall("CSS.enable", nil)
	return w, a, ctx, rn.NodeID
}

func matchedOf(t *testing.T, a *cdptest.Client, node int64) cssMatched {
	t.Helper()
	m := a.MustCall("CSS.getMatchedStylesForNode", map[string]any{"nodeId": node})
	var ms cssMatched
	if err := json.Unmarshal(m.Result, &ms); err != nil {
		t.Fatalf("CSS.getMatchedStylesForNode: %s", m.Raw)
	}
	return ms
}

// getMatchedStylesForNode lists the rules that apply with their @media,
// @supports and @layer, not the one under a media query that does not
// hold; inherited rules, ::before and the inline style; every style sheet
// is announced (styleSheetAdded) before the answer that names it, the
// cross-origin one by URL, whose text is refused with the reason.
func TestCSSMatchedStyles(t *testing.T) {
	_, a, ctx, h1 := cssTitle(t)
	before := len(a.All())
	ms := matchedOf(t, a, h1)

	media := ruleOf(ms.MatchedCSSRules, "#title")
	if media == nil || len(media.Media) != 1 || media.Media[0]["text"] != "(min-width: 1px)" {
		t.Fatalf("the #title rule inside @media (min-width: 1px): %+v (all: %+v)", media, ms.MatchedCSSRules)
	}
	if len(media.Style.CSSProperties) != 1 || media.Style.CSSProperties[0].Value != "7px" {
		t.Fatalf("the @media rule's properties: %+v", media.Style)
	}
	if n := strings.Count(fmt.Sprint(ms.MatchedCSSRules), "99px"); n != 0 {
		t.Errorf("the rule under @media (max-width: 1px), which does not hold, is listed: %+v", ms.MatchedCSSRules)
	}
	if r := ruleOf(ms.MatchedCSSRules, ".big"); r == nil || len(r.Supports) != 1 || r.Supports[0]["text"] != "(display: grid)" || r.Supports[0]["active"] != true {
		t.Errorf("the .big rule inside @supports: %+v", r)
	}
	if r := ruleOf(ms.MatchedCSSRules, "h1"); r == nil || len(r.Layers) != 1 || r.Layers[0]["text"] != "base" {
		t.Errorf("the h1 rule inside @layer base: %+v", r)
	}
	if ms.InlineStyle == nil || ms.InlineStyle.CSSText != "font-size: 20px;" || ms.InlineStyle.StyleSheetID == "" {
		t.Errorf("the inline style: %+v", ms.InlineStyle)
	}
	if len(ms.PseudoElements) != 1 || ms.PseudoElements[0].PseudoType != "before" || ruleOf(ms.PseudoElements[0].Matches, "h1::before") == nil {
		t.Errorf("::before: %+v", ms.PseudoElements)
	}
	if len(ms.Inherited) != 3 || ruleOf(ms.Inherited[1].MatchedCSSRules, "body") == nil {
		t.Errorf("inherited (div, body with its color rule, html): %+v", ms.Inherited)
	}

	var sheets []struct {
		Header struct {
			StyleSheetID string `json:"styleSheetId"`
			SourceURL    string `json:"sourceURL"`
			FrameID      string `json:"frameId"`
			IsInline     bool   `json:"isInline"`
		} `json:"header"`
	}
	for _, m := range a.All()[before:] {
		if m.Method == "CSS.styleSheetAdded" {
			var s struct {
				Header struct {
					StyleSheetID string `json:"styleSheetId"`
					SourceURL    string `json:"sourceURL"`
					FrameID      string `json:"frameId"`
					IsInline     bool   `json:"isInline"`
				} `json:"header"`
			}
			_ = json.Unmarshal(m.Params, &s)
			sheets = append(sheets, s)
		}
	}
	if len(sheets) != 2 || sheets[0].Header.StyleSheetID != media.StyleSheetID || !sheets[0].Header.IsInline ||
		sheets[0].Header.FrameID != ctx.Context.AuxData.FrameID || !strings.HasSuffix(sheets[1].Header.SourceURL, "/cross.css") {
		t.Fatalf("styleSheetAdded before the answer: %+v (the @media rule's sheet %s, the page's frame %s)", sheets, media.StyleSheetID, ctx.Context.AuxData.FrameID)
	}
	// Asked again: nothing new to announce.
	n := len(a.All())
	matchedOf(t, a, h1)
	for _, m := range a.All()[n:] {
		if m.Method == "CSS.styleSheetAdded" {
			t.Errorf("a sheet announced twice: %s", m.Raw)
		}
	}

	text := a.MustCall("CSS.getStyleSheetText", map[string]any{"styleSheetId": media.StyleSheetID})
	var st struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(text.Result, &st)
	lines := strings.Split(st.Text, "\n")
	r := media.Style.Range
	if r == nil || r.StartLine >= len(lines) || lines[r.StartLine][r.StartColumn:r.EndColumn] != media.Style.CSSText ||
		!strings.Contains(st.Text, "@media (min-width: 1px) {") {
		t.Fatalf("the sheet's text %q does not hold the rule's style %+v at its range", st.Text, media.Style)
	}
	if got := domError(t, a, "CSS.getStyleSheetText", map[string]any{"styleSheetId": sheets[1].Header.StyleSheetID}); !strings.Contains(got, "cross-origin") ||
		!strings.Contains(got, "/cross.css") {
		t.Errorf("the cross-origin sheet's text: %q, want the reason naming it", got)
	}
}

// The computed style is the page's getComputedStyle; editing the @media
// rule's property (setStyleTexts at the rule's range) and the inline style
// changes the page's computed style.
func TestCSSComputedAndEdit(t *testing.T) {
	_, a, ctx, h1 := cssTitle(t)
	m := a.MustCall("CSS.getComputedStyleForNode", map[string]any{"nodeId": h1})
	var cs struct {
		ComputedStyle []struct{ Name, Value string } `json:"computedStyle"`
	}
	_ = json.Unmarshal(m.Result, &cs)
	computed := map[string]string{}
	for _, p := range cs.ComputedStyle {
		computed[p.Name] = p.Value
	}
	page := func(prop string) string {
		var v string
		_ = json.Unmarshal(evalValue(t, a, ctx, `getComputedStyle(document.getElementById('title')).getPropertyValue('`+prop+`')`), &v)
		return v
	}
	for _, p := range []string{"margin-left", "padding-top", "font-size", "color", "border-top-width"} {
		if computed[p] == "" || computed[p] != page(p) {
			t.Errorf("computed %s: the window got %q, the page has %q", p, computed[p], page(p))
		}
	}
	if len(cs.ComputedStyle) < 200 {
		t.Errorf("computed style has %d properties", len(cs.ComputedStyle))
	}

	media := ruleOf(matchedOf(t, a, h1).MatchedCSSRules, "#title")
	e := a.MustCall("CSS.setStyleTexts", map[string]any{"edits": []map[string]any{
		{"styleSheetId": media.StyleSheetID, "range": media.Style.Range, "text": "margin-left: 11px; "}}})
	if !strings.Contains(string(e.Result), `"cssText":"margin-left: 11px;"`) {
		t.Fatalf("setStyleTexts answered %s", e.Raw)
	}
	if got := page("margin-left"); got != "11px" {
		t.Fatalf("the page's margin-left after editing the @media rule: %q, want 11px", got)
	}
	ms := matchedOf(t, a, h1)
	a.MustCall("CSS.setStyleTexts", map[string]any{"edits": []map[string]any{
		{"styleSheetId": ms.InlineStyle.StyleSheetID, "range": ms.InlineStyle.Range, "text": "font-size: 30px;"}}})
	if got := page("font-size"); got != "30px" {
		t.Fatalf("the page's font-size after editing the inline style: %q, want 30px", got)
	}
	in := a.MustCall("CSS.getInlineStylesForNode", map[string]any{"nodeId": h1})
	if !strings.Contains(string(in.Result), `"cssText":"font-size: 30px;"`) {
		t.Fatalf("CSS.getInlineStylesForNode after the edit: %s", in.Raw)
	}
}

// Style sheet ids are the window's: a forged one, one of an unknown
// namespace, another window's, and a sheet the page never announced are
// refused by name; the host's placeholders have empty styles.
func TestCSSStyleSheetIDsRefused(t *testing.T) {
	w, a, _, h1 := cssTitle(t)
	media := ruleOf(matchedOf(t, a, h1).MatchedCSSRules, "#title")
	ns, _, _ := strings.Cut(media.StyleSheetID, ".")
	for _, tc := range []struct{ id, want string }{
		{"abc", "no style sheet \"abc\" in this window"},
		{ns + ".x1", "no style sheet"},
		{"999999.s1", "no node with id"},
		{ns + ".s77", "no style sheet s77 in this page"},
		{ns + ".i999999", "no node with id 999999 in this page"},
	} {
		if got := domError(t, a, "CSS.getStyleSheetText", map[string]any{"styleSheetId": tc.id}); !strings.Contains(got, tc.want) {
			t.Errorf("getStyleSheetText %q: %q, want it to say %q", tc.id, got, tc.want)
		}
	}
	if got := domError(t, a, "CSS.setStyleTexts", map[string]any{"edits": []map[string]any{
		{"styleSheetId": "7.s1", "range": map[string]int{}, "text": "x: y"}, {"styleSheetId": "7.s1", "range": map[string]int{}, "text": "x: y"}}}); !strings.Contains(got, "exactly one edit") {
		t.Errorf("two edits: %q", got)
	}
	b, _ := domWindow(t, w, "B", "CSS page")
	newDOMTree(t, b)
	if got := domError(t, b, "CSS.getStyleSheetText", map[string]any{"styleSheetId": media.StyleSheetID}); !strings.Contains(got, "another window's") {
		t.Errorf("window B using A's style sheet: %q", got)
	}
	m := a.MustCall("CSS.getMatchedStylesForNode", map[string]any{"nodeId": 4})
	if compact(t, m.Result) != `{"matchedCSSRules":[],"pseudoElements":[],"inherited":[]}` {
		t.Errorf("the host <body>'s styles: %s", m.Raw)
	}
}

// An element no rule matches still gets every array (the frontend reads
// them without a default).
func TestCSSMatchedStylesEmptyArrays(t *testing.T) {
	_, a, ctx, _ := cssTitle(t)
	obj := evalIn(t, a, ctx, `(() => { const s = document.createElement('span'); document.body.append(s); document.documentElement.append(document.createElement('i')); return document.querySelector('html > i'); })()`, "console")
	m := a.MustCall("DOM.requestNode", map[string]any{"objectId": obj.Result.ObjectID})
	var rn struct {
		NodeID int64 `json:"nodeId"`
	}
	_ = json.Unmarshal(m.Result, &rn)
	got := a.MustCall("CSS.getMatchedStylesForNode", map[string]any{"nodeId": rn.NodeID})
	for _, k := range []string{`"matchedCSSRules":[]`, `"pseudoElements":[]`, `"inherited":[{"matchedCSSRules":[]}]`} {
		if !strings.Contains(compact(t, got.Result), k) {
			t.Errorf("the answer for an element no rule matches lacks %s: %s", k, got.Raw)
		}
	}
}

// The Styles pane's "+": CSS.createStyleSheet makes the page's inspector
// sheet (announced first, origin inspector, once per window and page load);
// CSS.addRule puts a rule in it that applies to the page at once and shows
// among the matched rules.
func TestCSSAddRuleInInspectorSheet(t *testing.T) {
	_, a, ctx, h1 := cssTitle(t)
	before := len(a.All())
	m := a.MustCall("CSS.createStyleSheet", map[string]any{"frameId": ctx.Context.AuxData.FrameID})
	var cs struct {
		StyleSheetID string `json:"styleSheetId"`
	}
	_ = json.Unmarshal(m.Result, &cs)
	added := 0
	for _, e := range a.All()[before:] {
		if e.Method == "CSS.styleSheetAdded" {
			added++
			if !strings.Contains(string(e.Params), `"origin":"inspector"`) || !strings.Contains(string(e.Params), `"styleSheetId":"`+cs.StyleSheetID+`"`) {
				t.Errorf("the inspector sheet's header: %s", e.Params)
			}
		}
	}
	if cs.StyleSheetID == "" || added != 1 {
		t.Fatalf("CSS.createStyleSheet answered %s after %d styleSheetAdded, want its id announced once before", m.Raw, added)
	}
	if again := a.MustCall("CSS.createStyleSheet", map[string]any{"frameId": ctx.Context.AuxData.FrameID}); !strings.Contains(string(again.Result), cs.StyleSheetID) {
		t.Errorf("a second CSS.createStyleSheet: %s, want the same sheet %s", again.Raw, cs.StyleSheetID)
	}
	r := a.MustCall("CSS.addRule", map[string]any{"styleSheetId": cs.StyleSheetID, "ruleText": "#title { padding-left: 13px; }",
		"location": map[string]int{"startLine": 0, "startColumn": 0, "endLine": 0, "endColumn": 0}})
	if !strings.Contains(string(r.Result), `"text":"#title"`) || !strings.Contains(string(r.Result), `"origin":"inspector"`) {
		t.Fatalf("CSS.addRule answered %s", r.Raw)
	}
	var v string
	_ = json.Unmarshal(evalValue(t, a, ctx, `getComputedStyle(document.getElementById('title')).paddingLeft`), &v)
	if v != "13px" {
		t.Fatalf("the page's padding-left after CSS.addRule: %q, want 13px", v)
	}
	if rule := ruleOf(matchedOf(t, a, h1).MatchedCSSRules, "#title"); rule == nil {
		t.Errorf("the added rule is not among the matched rules")
	}
	for text, want := range map[string]string{"not a rule": "could not add the rule", "@media x {": "adds a style rule"} {
		if got := domError(t, a, "CSS.addRule", map[string]any{"styleSheetId": cs.StyleSheetID, "ruleText": text,
			"location": map[string]int{}}); !strings.Contains(got, want) {
			t.Errorf("CSS.addRule %q: %q, want it to say %q", text, got, want)
		}
	}
	if got := domError(t, a, "CSS.createStyleSheet", map[string]any{"frameId": "nope"}); !strings.Contains(got, `no frame "nope"`) {
		t.Errorf("an unknown frame: %q", got)
	}
}

// A matched answer over its frame budget (4,000 rules match the <div>)
// leaves out the farthest inherited rules first, so the <h1> inside still
// gets its own; the <div>'s own rules past the budget are refused by name.
func TestCSSMatchedOverBudget(t *testing.T) {
	_, a, ctx, h1 := cssTitle(t)
	evalValue(t, a, ctx, `(() => { const s = document.createElement('style'); const r = [];
		for (let i = 0; i < 4000; i++) r.push('div { --v' + i + ': ' + i + 'px; }');
		s.textContent = r.join('\n'); document.head.append(s); return 1; })()`)
	ms := matchedOf(t, a, h1)
	if ruleOf(ms.MatchedCSSRules, "#title") == nil || len(ms.Inherited) != 0 {
		t.Fatalf("the <h1> under a <div> 4,000 rules match: %d own rules, %d inherited entries; want its own and no inherited", len(ms.MatchedCSSRules), len(ms.Inherited))
	}
	t.Logf("own rules %d, inherited entries %d", len(ms.MatchedCSSRules), len(ms.Inherited))
	obj := evalIn(t, a, ctx, `document.querySelector('div')`, "console")
	m := a.MustCall("DOM.requestNode", map[string]any{"objectId": obj.Result.ObjectID})
	var rn struct {
		NodeID int64 `json:"nodeId"`
	}
	_ = json.Unmarshal(m.Result, &rn)
	if got := domError(t, a, "CSS.getMatchedStylesForNode", map[string]any{"nodeId": rn.NodeID}); !strings.Contains(got, "over the frame limits") {
		t.Errorf("the <div>'s 4,000 rules: %q", got)
	}
}
