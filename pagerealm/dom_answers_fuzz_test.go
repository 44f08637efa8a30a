package pagerealm

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/chromedp/cdproto/css"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// A page's DOM, CSS and Overlay answers and its dom.event frames are
// decoded by sourceproto (FuzzDOMFrames) and then projected here into the
// window's ids. FuzzPageDOMAnswers feeds whatever a page could send through
// both: a frame the decoder accepts never panics the projection (a panic
// ends the page's connection with the window's request unanswered), every
// projected message is JSON, and every style sheet id the window sees is
// in the page's namespace, or the answer is refused.
// Run: go test -run '^$' -fuzz FuzzPageDOMAnswers -parallel 1 ./pagerealm/

const fuzzNS = 7

var pageDOMSeeds = []string{
	`{"session":"w1","id":4,"method":"domChildren","domChildren":{"children":[{"parent":1,"nodes":[{"nodeId":2,"nodeType":10,"nodeName":"html","publicId":"","systemId":""},{"nodeId":3,"nodeType":1,"nodeName":"HTML","localName":"html","childNodeCount":2,"children":[{"nodeId":4,"nodeType":1,"nodeName":"HEAD","localName":"head"},{"nodeId":5,"nodeType":1,"nodeName":"BODY","localName":"body","attributes":["class","x"]}]}]}]}}`,
	`{"session":"w1","id":4,"method":"domPush","domPush":{"nodes":[7,0],"children":[{"parent":1,"nodes":[{"nodeId":7,"nodeType":1,"nodeName":"P","localName":"p"}]}]}}`,
	`{"session":"w1","id":4,"method":"domDescribe","domDescribe":{"node":{"nodeId":9,"nodeType":3,"nodeName":"#text","nodeValue":"hi"}}}`,
	`{"session":"w1","id":4,"method":"domOuterHTML","domOuterHTML":{"html":["<p>","</p>"]}}`,
	`{"session":"w1","id":4,"method":"domBox","domBox":{"box":{"content":[0,0,1,0,1,1,0,1],"padding":[0,0,1,0,1,1,0,1],"border":[0,0,1,0,1,1,0,1],"margin":[0,0,1,0,1,1,0,1],"width":1,"height":1}}}`,
	`{"session":"w1","id":4,"method":"domCSS","domCSS":{"css":{"computed":[{"name":"color","value":"red"}]}}}`,
	`{"session":"w1","id":4,"method":"domCSS","domCSS":{"css":{"sheets":[{"styleSheetId":"s1","frameId":"","sourceURL":"http://a/","origin":"regular","title":"","disabled":false,"isInline":true,"isMutable":true,"isConstructed":false,"startLine":0,"startColumn":0,"length":10,"endLine":1,"endColumn":0}],"matched":{"inlineStyle":{"styleSheetId":"i9","cssProperties":[{"name":"color","value":"red"}],"shorthandEntries":[]},"matchedCSSRules":[{"rule":{"styleSheetId":"s1","selectorList":{"selectors":[{"text":"h1"}],"text":"h1"},"origin":"regular","style":{"styleSheetId":"s1","cssProperties":[{"name":"color","value":"blue"}],"shorthandEntries":[]},"media":[{"text":"(min-width: 1px)","source":"mediaRule","styleSheetId":"s1"}],"supports":[{"text":"(display: grid)","active":true,"styleSheetId":"s1"}],"layers":[{"text":"base","styleSheetId":"s1"}],"containerQueries":[{"styleSheetId":"s1","queriesScrollState":false,"queriesAnchored":false,"conditionText":"(min-width: 1px)"}]},"matchingSelectors":[0]}],"pseudoElements":[{"pseudoType":"before","matches":[]}],"inherited":[{"inlineStyle":{"styleSheetId":"i3","cssProperties":[],"shorthandEntries":[]},"matchedCSSRules":[]}]}}}}`,
	`{"session":"w1","id":4,"method":"domCSS","domCSS":{"css":{"style":{"styleSheetId":"s2","cssProperties":[],"shorthandEntries":[]}}}}`,
	`{"session":"w1","id":4,"method":"domCSS","domCSS":{"css":{"sheet":"s3","rule":{"styleSheetId":"s3","selectorList":{"selectors":[{"text":"p"}],"text":"p"},"origin":"inspector","style":{"cssProperties":[],"shorthandEntries":[]}}}}}`,
	`{"session":"w1","id":4,"method":"domCSS","domCSS":{"css":{"text":["h1 { color: red; }"]}}}`,
}

var pageEventSeeds = []string{
	`{"session":"w1","doc":3,"events":[{"kind":"childNodeInserted","parent":4,"previous":5,"inserted":{"nodeId":9,"nodeType":1,"nodeName":"DIV","localName":"div","attributes":["id","x"]}},{"kind":"attributeModified","node":9,"name":"class","value":"a"},{"kind":"childNodeRemoved","parent":4,"node":5},{"kind":"setChildNodes","parent":9,"nodes":[{"nodeId":10,"nodeType":3,"nodeName":"#text","nodeValue":"hi"}]},{"kind":"documentUpdated"}]}`,
	`{"session":"w1","doc":3,"events":[{"kind":"attributeRemoved","node":3,"name":"a"},{"kind":"characterDataModified","node":4,"value":"x"},{"kind":"childNodeCountUpdated","parent":4,"count":3},{"kind":"inspectNodeRequested","node":8}]}`,
}

func FuzzPageDOMAnswers(f *testing.F) {
	for _, s := range pageDOMSeeds {
		f.Add([]byte(`{"v":1,"type":"runtime.result","source":"c1","gen":3,"body":` + s + `}`))
	}
	for _, s := range pageEventSeeds {
		f.Add([]byte(`{"v":1,"type":"dom.event","source":"c1","gen":3,"body":` + s + `}`))
	}
	for _, c := range nullCSSAnswers {
		f.Add([]byte(`{"v":1,"type":"runtime.result","source":"c1","gen":3,"body":{"session":"w1","id":4,"method":"domCSS","domCSS":{"css":` + c + `}}}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := sourceproto.Decode(data)
		if err != nil {
			return
		}
		for _, msg := range projectPageFrame(t, fr.Body) {
			if !json.Valid(msg) {
				t.Fatalf("projected %s into invalid JSON: %s", data, msg)
			}
		}
	})
}

// foreignSheet finds a style sheet id outside the fuzz namespace.
var foreignSheet = regexp.MustCompile(`"styleSheetId":"(?:[^7"]|7[^.])`)

// projectPageFrame projects a decoded page frame as the hub does: a DOM
// result through each of the renders its members feed, a dom.event through
// cdpproject.DOMEvent.
func projectPageFrame(t *testing.T, b sourceproto.Body) [][]byte {
	ids := idsOf(fuzzNS)
	var out [][]byte
	switch v := b.(type) {
	case *sourceproto.DOMEvents:
		for i := range v.Events {
			if m := cdpproject.DOMEvent(&v.Events[i], ids); m != nil {
				out = append(out, m)
			}
		}
	case *sourceproto.RuntimeResult:
		r := v.DOMResultOf()
		if r == nil {
			return nil
		}
		call := &runtimeCall{ctx: &clientContext{frame: &clientFrame{id: "F1"}}, domNS: fuzzNS}
		out = append(out, childrenEvents(call, r)...)
		if r.Node != nil {
			out = append(out, cdpproject.NodeAnswer(cdpproject.DOMNode(r.Node, ids)))
		}
		if r.HTML != nil {
			out = append(out, cdpproject.OuterHTMLAnswer(r.HTML))
		}
		if r.Box != nil {
			b, err := json.Marshal(boxModelAnswer{r.Box})
			if err != nil {
				t.Fatalf("box model %+v: %v", r.Box, err)
			}
			out = append(out, b)
		}
		if r.CSS != nil {
			out = append(out, projectCSS(t, call, r.CSS)...)
		}
	}
	return out
}

// projectCSS is what cssCallLocked and the CSS renders do with a page's
// styles; an answer with no error names only the page's sheets.
func projectCSS(t *testing.T, call *runtimeCall, c *sourceproto.CSSResult) [][]byte {
	x := &cssIDs{ns: call.domNS}
	out := sheetEvents(call, c, x)
	var answers []any
	if m := c.Matched; m != nil {
		x.matched(m)
		answers = append(answers, &matchedAnswer{m, m.MatchedCSSRules, m.PseudoElements, m.Inherited})
	}
	x.style(c.Inline)
	x.style(c.Style)
	if c.Rule != nil {
		x.matches([]*css.RuleMatch{{Rule: c.Rule}})
		answers = append(answers, &css.AddRuleResult{Rule: c.Rule})
	}
	answers = append(answers, &css.GetInlineStylesForNodeResult{InlineStyle: c.Inline},
		&css.SetStyleTextsResult{Styles: []*css.Style{c.Style}}, c.Computed)
	if x.err != nil {
		return nil
	}
	for _, a := range answers {
		b, err := cdpproject.Marshal(a)
		if err != nil {
			continue // refused as the handler refuses it
		}
		out = append(out, b)
	}
	for _, m := range out {
		if foreignSheet.Match(m) {
			t.Fatalf("a style sheet id outside the page's namespace reached the window: %s", m)
		}
	}
	return out
}

// The seeds are frames the decoder accepts and that project to messages:
// a seed that stopped decoding would leave the fuzzer starting from noise.
func TestPageDOMAnswerSeedsDecode(t *testing.T) {
	for i, s := range append(append([]string{}, pageDOMSeeds...), pageEventSeeds...) {
		typ := "runtime.result"
		if i >= len(pageDOMSeeds) {
			typ = "dom.event"
		}
		fr, err := sourceproto.Decode([]byte(`{"v":1,"type":"` + typ + `","source":"c1","gen":3,"body":` + s + `}`))
		if err != nil {
			t.Fatalf("seed %d does not decode: %v\n%s", i, err, s)
		}
		if len(projectPageFrame(t, fr.Body)) == 0 {
			t.Fatalf("seed %d projects to nothing: %s", i, s)
		}
	}
}

// nullCSSAnswers are styles the decoder accepts (its generated decoders
// take null for any pointer) with a null where the projection reads an
// object.
var nullCSSAnswers = []string{
	`{"sheets":[null]}`,
	`{"matched":{"matchedCSSRules":[null]}}`,
	`{"matched":{"inherited":[null]}}`,
	`{"matched":{"pseudoElements":[null]}}`,
	`{"matched":{"matchedCSSRules":[{"rule":{"selectorList":{"selectors":[],"text":""},"origin":"regular","style":{"cssProperties":[],"shorthandEntries":[]},"media":[null]},"matchingSelectors":[]}]}}`,
	`{"matched":{"matchedCSSRules":[{"rule":{"selectorList":{"selectors":[],"text":""},"origin":"regular","style":{"cssProperties":[],"shorthandEntries":[]},"supports":[null],"layers":[null],"containerQueries":[null]},"matchingSelectors":[]}]}}`,
	`{"sheet":"s3","rule":{"selectorList":{"selectors":[],"text":""},"origin":"inspector","style":{"cssProperties":[],"shorthandEntries":[]},"media":[null]}}`,
}

// A page's styles with a null inside are refused by name, not a panic
// under Hub.mu: the panic ended the page's connection and left the
// window's CSS request unanswered.
func TestPageCSSAnswerNullsRefused(t *testing.T) {
	for _, c := range nullCSSAnswers {
		fr, err := sourceproto.Decode([]byte(`{"v":1,"type":"runtime.result","source":"c1","gen":3,"body":{"session":"w1","id":4,"method":"domCSS","domCSS":{"css":` + c + `}}}`))
		if err != nil {
			continue // refused by the decoder: as good
		}
		r := fr.Body.(*sourceproto.RuntimeResult).DOMResultOf().CSS
		call := &runtimeCall{ctx: &clientContext{frame: &clientFrame{id: "F1"}}, domNS: fuzzNS}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: the projection panicked: %v", c, p)
				}
			}()
			x := &cssIDs{ns: fuzzNS}
			sheetEvents(call, r, x)
			if r.Matched != nil {
				x.matched(r.Matched)
			}
			if r.Rule != nil {
				x.matches([]*css.RuleMatch{{Rule: r.Rule}})
			}
			if x.err == nil {
				t.Errorf("%s: accepted, want the answer refused", c)
			}
		}()
	}
}
