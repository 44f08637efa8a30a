package trace

import (
	"strings"
	"testing"
)

// Messages as Node 20 sends them (trimmed), with what the engine makes of them.
var cdpConversation = []struct {
	name string
	msg  string
	kind string // event kind, "" for none
	resp int64  // response id, 0 for none
	n    notice
}{
	{"context", `{"method":"Runtime.executionContextCreated","params":{"context":{"id":1,"origin":"","name":"/usr/bin/node[1]","uniqueId":"1.2","auxData":{"isDefault":true}}}}`, KindContext, 0, noticeNone},
	{"answer", `{"id":2,"result":{"debuggerId":"x"}}`, "", 2, noticeNone},
	{"error answer", `{"id":7,"error":{"code":-32601,"message":"'X' wasn't found"}}`, "", 7, noticeNone},
	{"internal script", `{"method":"Debugger.scriptParsed","params":{"scriptId":"65","url":"node:internal/modules/cjs/loader","sourceMapURL":""}}`, "", 0, noticeNone},
	{"user script", `{"method":"Debugger.scriptParsed","params":{"scriptId":"82","url":"file:///ws/app.js","sourceMapURL":""}}`, KindScript, 0, noticeNone},
	{"paused", `{"method":"Debugger.paused","params":{"callFrames":[],"reason":"Break on start"}}`, "", 0, noticePaused},
	{"console", `{"method":"Runtime.consoleAPICalled","params":{"type":"log","args":[{"type":"string","value":"one \ud800"},{"type":"number","value":1,"description":"1"}],"executionContextId":1,"timestamp":1,"stackTrace":{"callFrames":[{"functionName":"","scriptId":"82","url":"file:///ws/app.js","lineNumber":0,"columnNumber":8},{"functionName":"Module._compile","scriptId":"65","url":"node:internal/modules/cjs/loader","lineNumber":1517,"columnNumber":13}]}}}`, KindConsole, 0, noticeConsole},
	{"exception", `{"method":"Runtime.exceptionThrown","params":{"timestamp":1,"exceptionDetails":{"exceptionId":1,"text":"Uncaught","lineNumber":2,"columnNumber":18,"url":"/ws/app.js","stackTrace":{"callFrames":[{"functionName":"boom","scriptId":"82","url":"file:///ws/app.js","lineNumber":2,"columnNumber":25},{"functionName":"Module._compile","scriptId":"65","url":"node:internal/modules/cjs/loader","lineNumber":1517,"columnNumber":13}]},"exception":{"type":"object","subtype":"error","className":"Error","description":"Error: bad\n    at boom (/ws/app.js:3:26)\n    at Module._compile (node:internal/modules/cjs/loader:1518:14)","objectId":"1.1.1"}}}}`, KindException, 0, noticeNone},
	{"thrown primitive", `{"method":"Runtime.exceptionThrown","params":{"exceptionDetails":{"text":"Uncaught","lineNumber":0,"columnNumber":16,"url":"","scriptId":"99","exception":{"type":"number","value":42,"description":"42"}}}}`, KindException, 0, noticeNone},
	{"other context", `{"method":"Runtime.executionContextCreated","params":{"context":{"id":2,"name":"vm","auxData":{"isDefault":false}}}}`, KindContext, 0, noticeNone},
	{"other destroyed", `{"method":"Runtime.executionContextDestroyed","params":{"executionContextId":2}}`, KindContext, 0, noticeNone},
	{"destroyed", `{"method":"Runtime.executionContextDestroyed","params":{"executionContextId":1}}`, KindContext, 0, noticeMainGone},
	{"other", `{"method":"Debugger.resumed","params":{}}`, "", 0, noticeNone},
	{"garbage", `{"method":`, "", 0, noticeNone},
	{"bad params", `{"method":"Runtime.consoleAPICalled","params":{"args":"x"}}`, "", 0, noticeNone},
}

func TestDecodeConversation(t *testing.T) {
	m := newMapper("/ws", "")
	var events []*Event
	for _, step := range cdpConversation {
		ev, resp, n := decodeMessage(m, []byte(step.msg))
		gotKind := ""
		if ev != nil {
			gotKind = ev.Kind
			events = append(events, ev)
		}
		var gotResp int64
		if resp != nil {
			gotResp = resp.id
		}
		if gotKind != step.kind || gotResp != step.resp || n != step.n {
			t.Errorf("%s: kind %q, resp %d, notice %d; want %q, %d, %d", step.name, gotKind, gotResp, n, step.kind, step.resp, step.n)
		}
	}
	console, exc, thrown := events[2], events[3], events[4]
	if console.Detail != "one \uFFFD 1" || console.Location.Line != 1 || console.Location.Column != 9 || len(console.CallStack) != 1 {
		t.Errorf("console = %+v", console)
	}
	if exc.Location.Line != 3 || exc.Location.Column != 26 || exc.ErrorMessage != "Error: bad" ||
		exc.Detail != "Uncaught Error: bad" || strings.Contains(exc.Stack, "node:internal") || len(exc.CallStack) != 1 {
		t.Errorf("exception = %+v", exc)
	}
	if thrown.Location != nil || thrown.ErrorMessage != "42" || thrown.Values[0].Text != "42" {
		t.Errorf("thrown primitive from an unknown script = %+v", thrown)
	}
	syntax, _, _ := decodeMessage(m, []byte(`{"method":"Runtime.exceptionThrown","params":{"exceptionDetails":{"text":"Uncaught SyntaxError: Unexpected token ')'","lineNumber":4,"columnNumber":7,"url":"/ws/app.js","exception":{"type":"object","subtype":"error","description":"SyntaxError: x"}}}}`))
	if syntax.Location == nil || *syntax.Location != (Location{File: "/ws/app.js", Line: 5}) {
		t.Errorf("syntax error location = %+v, want line 5 without a column", syntax.Location)
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, step := range cdpConversation {
		f.Add([]byte(step.msg))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		m := newMapper("/nonexistent-workspace", "")
		ev, _, _ := decodeMessage(m, msg)
		if ev == nil {
			return
		}
		for _, v := range ev.Values {
			if len([]rune(v.Text)) > maxValueChars {
				t.Fatalf("value of %d chars", len([]rune(v.Text)))
			}
		}
		if len([]rune(ev.Detail)) > maxValueChars || len(ev.CallStack) > maxFrames || len(ev.Values) > maxValues {
			t.Fatalf("event exceeds its caps: %+v", ev)
		}
		for _, fr := range ev.CallStack {
			if fr.Location.File == "" || fr.Location.File[0] != '/' {
				t.Fatalf("non-file frame %+v", fr)
			}
		}
	})
}

func TestParseSyntaxArrow(t *testing.T) {
	cases := []struct {
		name, desc, class string
		ok                bool
		want              syntaxArrow
	}{
		{"cjs", "/ws/a.js:3\nlet b = = 2;\n        ^\n\nSyntaxError: Unexpected token '='\n    at wrapSafe (node:internal/x:1:1)", "SyntaxError", true,
			syntaxArrow{Location{"/ws/a.js", 3, 9}, "let b = = 2;", "SyntaxError: Unexpected token '='"}},
		{"tabs and many carets", "file:///ws/b.js:10\n\tfoo bar\n\t    ^^^\n\nSyntaxError: Unexpected identifier 'bar'", "SyntaxError", true,
			syntaxArrow{Location{"/ws/b.js", 10, 6}, "\tfoo bar", "SyntaxError: Unexpected identifier 'bar'"}},
		{"no caret", "/ws/c.js:1\nx\n\nSyntaxError: y", "SyntaxError", true, syntaxArrow{Location{"/ws/c.js", 1, 0}, "x", "SyntaxError: y"}},
		{"not a file", "node:internal/x:3\na\n^\n\nSyntaxError: y", "SyntaxError", false, syntaxArrow{}},
		{"ordinary error", "Error: a:1\n    at f (/ws/a.js:1:1)\n\n\n", "Error", false, syntaxArrow{}},
		{"class mismatch", "/ws/a.js:3\nx\n^\n\nError: forged", "SyntaxError", false, syntaxArrow{}},
		{"bad line", "/ws/a.js:x\nx\n^\n\nSyntaxError: y", "SyntaxError", false, syntaxArrow{}},
	}
	for _, tc := range cases {
		got, ok := parseSyntaxArrow(tc.desc, tc.class)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
