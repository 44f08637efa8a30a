package cdpproject

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// nasty are strings a page or host can put in a name, URL, title or text:
// each must reach the frontend as valid JSON that decodes to the string
// (invalid bytes as U+FFFD).
var nasty = []string{
	"plain",
	`quote " and backslash \ and slash /`,
	"non-ASCII: é 日本 🙂",
	"control: \x00 \a \b \t \n \r \x1b",
	"DEL: \x7f",
	"line separators: \u2028 \u2029",
	"invalid: \xff\xfe a\xc3",
	"<script>&amp;</script>",
}

// wantDecoded is what the frontend must read back for s.
func wantDecoded(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // RuneError for each invalid byte
		i += n
	}
	return b.String()
}

// decode checks msg is valid JSON (strict: valid UTF-8, no duplicate
// names) and decodes it.
func decode(t *testing.T, what string, msg []byte) map[string]any {
	t.Helper()
	if !jsontext.Value(msg).IsValid() {
		t.Fatalf("%s: invalid JSON: %q", what, msg)
	}
	var v map[string]any
	if err := json.Unmarshal(msg, &v); err != nil {
		t.Fatalf("%s: %v: %q", what, err, msg)
	}
	return v
}

// at walks a decoded message by member names and array indexes.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: not an object: %v", path, v)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at %v: not an array of %d: %v", path, k+1, v)
			}
			v = a[k]
		}
	}
	return v
}

func TestProjectionsKeepStrings(t *testing.T) {
	for _, s := range nasty {
		want := wantDecoded(s)
		f := Frame{ID: "F", LoaderID: "L", Name: s, URL: s, SecurityOrigin: s, MimeType: "text/html"}
		cases := []struct {
			name string
			msg  []byte
			path []any
		}{
			{"frameAttached", FrameAttached(s, "T"), []any{"params", "frameId"}},
			{"frameDetached", FrameDetached(s), []any{"params", "frameId"}},
			{"frameNavigated name", FrameNavigated(f), []any{"params", "frame", "name"}},
			{"frameNavigated url", FrameNavigated(f), []any{"params", "frame", "url"}},
			{"documentOpened", DocumentOpened(f), []any{"params", "frame", "url"}},
			{"resourceTree", ResourceTree(FrameTree{Frame: f, ChildFrames: []FrameTree{{Frame: f}}}), []any{"frameTree", "childFrames", 0, "frame", "name"}},
			{"frameTree", FrameTreeAnswer(f), []any{"frameTree", "frame", "url"}},
			{"contextCreated", ExecutionContextCreated(Context{ID: -1, UniqueID: s, Origin: s, Name: s, FrameID: s}), []any{"params", "context", "name"}},
			{"contextCreated auxData", ExecutionContextCreated(Context{ID: -1, FrameID: s}), []any{"params", "context", "auxData", "frameId"}},
			{"contextDestroyed", ExecutionContextDestroyed(-1, s), []any{"params", "executionContextUniqueId"}},
			{"scriptParsed", ScriptParsed("1", s, Context{ID: -1, FrameID: "F"}), []any{"params", "url"}},
			{"logEntry", LogEntry(SourceOther, "info", s, 1), []any{"params", "entry", "text"}},
			{"scriptSource", ScriptSource([]byte(s)), []any{"scriptSource"}},
			{"resourceContent", ResourceContent([]byte(s)), []any{"content"}},
			{"breakpointResolved", BreakpointResolved(s, []byte(`{"scriptId":"1","lineNumber":0}`)), []any{"params", "breakpointId"}},
		}
		for _, c := range cases {
			v := decode(t, c.name, c.msg)
			if got := at(t, v, c.path...); got != want {
				t.Errorf("%s(%q) decodes to %q, want %q\n%s", c.name, s, got, want, c.msg)
			}
		}
	}
}

// TestPercentQIsNotJSON is why no message is built with fmt's %q any more:
// Go quoting writes \a, \x7f and \xff, which JSON refuses (or, in the
// Console's JavaScript, reads as another character: "\xff" is "ÿ").
func TestPercentQIsNotJSON(t *testing.T) {
	for _, s := range []string{"bell \a", "DEL \x7f", "invalid \xff"} {
		old := fmt.Appendf(nil, `{"method":"Page.frameDetached","params":{"frameId":%q,"reason":"remove"}}`, s)
		if jsontext.Value(old).IsValid() {
			t.Errorf("%%q of %q made valid JSON %s: the reason for this projector is gone", s, old)
		}
		decode(t, "FrameDetached", FrameDetached(s))
	}
}

func TestAppObservation(t *testing.T) {
	for _, s := range nasty {
		msg := AppObservation(&sourceproto.AppEvent{Name: s, Data: sourceproto.RawJSON(`{"i":1}`), Timestamp: 1.5}, time.Time{})
		v := decode(t, "AppObservation", msg)
		text, _ := at(t, v, "params", "entry", "text").(string)
		quoted, ok := strings.CutPrefix(text, "observe(")
		quoted, ok2 := strings.CutSuffix(quoted, `) {"i":1}`)
		if !ok || !ok2 {
			t.Fatalf("text %q, want observe(<name>) {\"i\":1}", text)
		}
		var name string
		if err := json.Unmarshal([]byte(quoted), &name); err != nil || name != wantDecoded(s) {
			t.Errorf("name %q shows as %s (%v), want JSON for %q", s, quoted, err, wantDecoded(s))
		}
		if ts := at(t, v, "params", "entry", "timestamp"); ts != 1.5 {
			t.Errorf("timestamp %v, want the producer's 1.5", ts)
		}
	}
	now := time.UnixMilli(1_700_000_000_123)
	v := decode(t, "AppObservation", AppObservation(&sourceproto.AppEvent{Name: "n"}, now))
	if text, ts := at(t, v, "params", "entry", "text"), at(t, v, "params", "entry", "timestamp"); text != `observe("n")` || ts != 1_700_000_000_123.0 {
		t.Errorf("text %v at %v, want observe(\"n\") at now", text, ts)
	}
}

func TestContextDestroyedKeepsExecutionContextID(t *testing.T) {
	v := decode(t, "contextDestroyed", ExecutionContextDestroyed(-3, "u"))
	if id := at(t, v, "params", "executionContextId"); id != -3.0 {
		t.Errorf("executionContextId %v, want -3 (the frontend reads it)", id)
	}
}

func TestScriptParsedMembers(t *testing.T) {
	v := decode(t, "scriptParsed", ScriptParsed("s1", "http://x/a.js", Context{ID: -2, FrameID: "F"}))
	p := at(t, v, "params").(map[string]any)
	want := map[string]any{"scriptId": "s1", "hash": "s1", "url": "http://x/a.js", "executionContextId": -2.0, "sourceMapURL": "", "length": 0.0,
		"startLine": 0.0, "endLine": 0.0, "isModule": false, "executionContextAuxData": map[string]any{"frameId": "F", "isDefault": true}}
	for k, w := range want {
		if fmt.Sprint(p[k]) != fmt.Sprint(w) {
			t.Errorf("%s = %v, want %v", k, p[k], w)
		}
	}
}

func consoleCases() []sourceproto.ConsoleEvent {
	str := func(s string) sourceproto.RemoteObject {
		b, _ := jsontext.AppendQuote(nil, s)
		return sourceproto.RemoteObject{Type: sourceproto.TypeString, Value: b}
	}
	var out []sourceproto.ConsoleEvent
	for _, s := range nasty {
		out = append(out, sourceproto.ConsoleEvent{Type: sourceproto.ConsoleLog, Timestamp: 1_700_000_000_123.456, Context: s,
			Args: []sourceproto.RemoteObject{str(s), {Type: sourceproto.TypeObject, ClassName: s, Description: s, Handle: "h1",
				Preview: &sourceproto.ObjectPreview{Type: sourceproto.TypeObject, Description: s, Properties: []sourceproto.PropertyPreview{
					{Name: s, Type: "string", Value: s}, {Name: "o", Type: "object", ValuePreview: &sourceproto.ObjectPreview{Type: "object"}}},
					Entries: []sourceproto.EntryPreview{{Key: &sourceproto.ObjectPreview{Type: "string", Description: s}, Value: sourceproto.ObjectPreview{Type: "number"}}}}}},
			StackTrace: &sourceproto.StackTrace{Description: s, CallFrames: []sourceproto.CallFrame{{FunctionName: s, URL: s, LineNumber: 3, ColumnNumber: 4}, {URL: "u"}}},
		})
	}
	for _, ts := range []float64{0, 1, 1e-7, 0.5, 1e21, 123456789012345678, -2.5} {
		out = append(out, sourceproto.ConsoleEvent{Type: sourceproto.ConsoleWarning, Timestamp: ts, Args: []sourceproto.RemoteObject{
			{Type: sourceproto.TypeObject, Subtype: "null"}, {Type: sourceproto.TypeNumber, UnserializableValue: "-0", Description: "-0"},
			{Type: sourceproto.TypeNumber, Value: sourceproto.RawJSON(`1e3`)}, {Type: sourceproto.TypeUndefined},
			{Type: sourceproto.TypeString, Value: sourceproto.RawJSON(`""`)}, {Type: sourceproto.TypeObject, Subtype: "array", Value: sourceproto.RawJSON(`[]`)}}})
	}
	return append(out, sourceproto.ConsoleEvent{Type: sourceproto.ConsoleLog, Args: []sourceproto.RemoteObject{}})
}

// TestConsoleHandMatchesTyped holds the hand encoder of the console hot
// path to the typed projection encoded by jsonv2, byte for byte, with and
// without objectIds.
func TestConsoleHandMatchesTyped(t *testing.T) {
	v := Values{ScriptID: func(url string) string { return "sid:" + url }, ContextID: -7}
	for i, ev := range consoleCases() {
		var ids []string
		for pass := 0; pass < 2; pass++ {
			if pass == 1 {
				ids = make([]string, len(ev.Args))
				for j := range ids {
					ids[j] = fmt.Sprintf("obj-%d \"%s\"", j, "\u2028")
				}
			}
			hand := v.AppendConsoleAPICalled([]byte("prefix"), &ev, ids)
			hand, ok := bytes.CutPrefix(hand, []byte("prefix"))
			if !ok {
				t.Fatal("AppendConsoleAPICalled did not append")
			}
			typed := Event("Runtime.consoleAPICalled", v.consoleParams(&ev, ids))
			if !bytes.Equal(hand, typed) {
				t.Errorf("case %d ids %v:\nhand  %s\ntyped %s", i, ids != nil, hand, typed)
			}
			decode(t, "consoleAPICalled", hand)
		}
	}
}

func TestRuntimeResultProjectsValues(t *testing.T) {
	var handles []string
	v := &Values{ObjectID: func(h string) string { handles = append(handles, h); return "id-" + h },
		ScriptID: func(url string) string { return "s-" + url }, ContextID: -4}
	bad := "e\xff\u2028\x7f"
	res := &sourceproto.RuntimeResult{Method: sourceproto.MethodEvaluate, Evaluate: &sourceproto.EvaluateResult{
		Result: sourceproto.RemoteObject{Type: sourceproto.TypeObject, Subtype: "null"},
		ExceptionDetails: &sourceproto.ExceptionDetails{Text: bad, URL: "u", Exception: &sourceproto.RemoteObject{Type: sourceproto.TypeObject, Handle: "h9", Description: bad},
			StackTrace: &sourceproto.StackTrace{CallFrames: []sourceproto.CallFrame{{URL: "u2"}}}}}}
	b, err := RuntimeResult(res, v)
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, "evaluate", b)
	checks := map[string]any{
		"result.value":                                 at(t, got, "result", "value"),
		"exceptionDetails.text":                        at(t, got, "exceptionDetails", "text"),
		"exceptionDetails.scriptId":                    at(t, got, "exceptionDetails", "scriptId"),
		"exceptionDetails.executionContextId":          at(t, got, "exceptionDetails", "executionContextId"),
		"exceptionDetails.exception.objectId":          at(t, got, "exceptionDetails", "exception", "objectId"),
		"exceptionDetails.stackTrace.callFrames[0].id": at(t, got, "exceptionDetails", "stackTrace", "callFrames", 0, "scriptId"),
	}
	want := map[string]any{"result.value": nil, "exceptionDetails.text": wantDecoded(bad), "exceptionDetails.scriptId": "s-u",
		"exceptionDetails.executionContextId": -4.0, "exceptionDetails.exception.objectId": "id-h9", "exceptionDetails.stackTrace.callFrames[0].id": "s-u2"}
	for k, w := range want {
		if checks[k] != w {
			t.Errorf("%s = %#v, want %#v", k, checks[k], w)
		}
	}
	if !bytes.Contains(b, []byte(`"result":{"type":"object","subtype":"null","value":null}`)) {
		t.Errorf("null object without its value: %s", b)
	}
	if strings.Join(handles, ",") != "h9" {
		t.Errorf("objectIds asked for %v, want only h9 (primitives have none)", handles)
	}
}
