package pagerealm

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	cdpdebugger "github.com/chromedp/cdproto/debugger"

	"github.com/inspector-worker/inspector-worker/cdpproject"
)

// SearchInContent answers Debugger.searchInContent for a client script:
// the script is read from the page, then searched line by line as V8
// searches its own (search-util.cc): the query is a literal unless isRegex,
// case-insensitive unless caseSensitive; a line's trailing "\r" is not
// part of it; an invalid regular expression matches nothing. Go's RE2
// stands in for JavaScript's syntax: look-arounds and back-references are
// invalid there, so such a query finds nothing.
var SearchInContent = &Script{answer: func(params, source []byte) ([]byte, error) {
	var p struct {
		Query         string `json:"query"`
		CaseSensitive bool   `json:"caseSensitive"`
		IsRegex       bool   `json:"isRegex"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("invalid params: %v", err)
		}
	}
	expr := p.Query
	if !p.IsRegex {
		expr = regexp.QuoteMeta(expr)
	}
	if !p.CaseSensitive {
		expr = "(?i)" + expr
	}
	// The frontend reads "result" without checking: it is always there.
	answer := struct {
		Result []*cdpdebugger.SearchMatch `json:"result"`
	}{Result: []*cdpdebugger.SearchMatch{}}
	if re, err := regexp.Compile(expr); err == nil {
		for i, line := range strings.Split(string(source), "\n") {
			line = strings.TrimSuffix(line, "\r")
			if re.MatchString(line) {
				answer.Result = append(answer.Result, &cdpdebugger.SearchMatch{LineNumber: float64(i), LineContent: line})
			}
		}
	}
	return cdpproject.Marshal(&answer)
}}
