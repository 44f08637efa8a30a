package hostrealm

import (
	"bytes"
	"encoding/json"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/internal/cdpwire"
)

type rewriteCase struct {
	name string
	in   string
	want string // "" means: unchanged
}

var rewriteFileURLCases = []rewriteCase{
	{name: "scriptParsed url",
		in:   `{"method":"Debugger.scriptParsed","params":{"scriptId":"1","url":"/home/me/app.js","hash":"h"}}`,
		want: `{"method":"Debugger.scriptParsed","params":{"scriptId":"1","url":"file:///home/me/app.js","hash":"h"}}`},
	{name: "space", in: `{"url":"/home/me/my app.js"}`, want: `{"url":"file:///home/me/my%20app.js"}`},
	{name: "percent", in: `{"url":"/a/100%.js"}`, want: `{"url":"file:///a/100%25.js"}`},
	{name: "non-ASCII", in: `{"url":"/tmp/é/日本.js"}`, want: `{"url":"file:///tmp/%C3%A9/%E6%97%A5%E6%9C%AC.js"}`},
	{name: "escaped non-ASCII", in: `{"url":"/tmp/\u00e9.js"}`, want: `{"url":"file:///tmp/%C3%A9.js"}`},
	{name: "query and fragment characters", in: `{"url":"/a/b?c#d.js"}`, want: `{"url":"file:///a/b%3Fc%23d.js"}`},
	{name: "escaped quote", in: `{"url":"/a/\"q\".js"}`, want: `{"url":"file:///a/%22q%22.js"}`},
	{name: "root", in: `{"url":"/"}`, want: `{"url":"file:///"}`},
	{name: "stack frames",
		in: `{"method":"Runtime.consoleAPICalled","params":{"type":"log","args":[],"stackTrace":{"callFrames":[` +
			`{"functionName":"f","url":"/x/a.js","lineNumber":1},{"functionName":"","url":"node:internal/main","lineNumber":2},` +
			`{"functionName":"g","url":"/x/b.js","lineNumber":3}],"parent":{"callFrames":[{"url":"/x/c.js"}]}}}}`,
		want: `{"method":"Runtime.consoleAPICalled","params":{"type":"log","args":[],"stackTrace":{"callFrames":[` +
			`{"functionName":"f","url":"file:///x/a.js","lineNumber":1},{"functionName":"","url":"node:internal/main","lineNumber":2},` +
			`{"functionName":"g","url":"file:///x/b.js","lineNumber":3}],"parent":{"callFrames":[{"url":"file:///x/c.js"}]}}}}`},
	{name: "exceptionDetails",
		in:   `{"id":3,"result":{"result":{"type":"object"},"exceptionDetails":{"exceptionId":1,"url":"/x/a.js","lineNumber":0}}}`,
		want: `{"id":3,"result":{"result":{"type":"object"},"exceptionDetails":{"exceptionId":1,"url":"file:///x/a.js","lineNumber":0}}}`},
	{name: "top-level array", in: `[{"url":"/a"},"url",{"url":"/b"}]`, want: `[{"url":"file:///a"},"url",{"url":"file:///b"}]`},
	{name: "duplicate url members", in: `{"url":"/a","url":"/b"}`, want: `{"url":"file:///a","url":"file:///b"}`},
	{name: "escaped member name", in: `{"u\u0072l":"/a","url":"/b"}`, want: `{"u\u0072l":"file:///a","url":"file:///b"}`},

	// "url" as a value, or inside another string, is not a member.
	{name: "url as a value",
		in:   `{"params":{"args":[{"type":"string","value":"url"},"/etc/passwd",{"value":"/etc/x"}],"name":"url","url":"/a.js"}}`,
		want: `{"params":{"args":[{"type":"string","value":"url"},"/etc/passwd",{"value":"/etc/x"}],"name":"url","url":"file:///a.js"}}`},
	{name: "marker inside a string",
		in:   `{"text":"see \"url\":\"/etc/x\" and {\"url\":\"/y\"}","url":"/a.js"}`,
		want: `{"text":"see \"url\":\"/etc/x\" and {\"url\":\"/y\"}","url":"file:///a.js"}`},
	{name: "url member with a non-string value", in: `{"url":5,"x":{"url":null,"y":{"url":"/a"}},"z":{"url":["/b"]}}`,
		want: `{"url":5,"x":{"url":null,"y":{"url":"file:///a"}},"z":{"url":["/b"]}}`},
	{name: "name of url value object", in: `{"url":{"url":"/a"}}`, want: `{"url":{"url":"file:///a"}}`},

	// Bytes outside rewritten values are kept, whatever they are.
	{name: "lone surrogates elsewhere",
		in:   `{"text":"\ud800","url":"/a.js","more":"\udc00x\ud83d","\ud800":1}`,
		want: `{"text":"\ud800","url":"file:///a.js","more":"\udc00x\ud83d","\ud800":1}`},
	{name: "invalid UTF-8 elsewhere",
		in:   "{\"t\":\"\xff\xc3\",\"url\":\"/a.js\",\"u\":\"\x80\"}",
		want: "{\"t\":\"\xff\xc3\",\"url\":\"file:///a.js\",\"u\":\"\x80\"}"},
	{name: "whitespace kept", in: "{ \"a\" : [ 1 , 2 ] ,\n\"url\":\"/a.js\" , \"b\" : { } }",
		want: "{ \"a\" : [ 1 , 2 ] ,\n\"url\":\"file:///a.js\" , \"b\" : { } }"},
	{name: "escapes elsewhere kept", in: `{"s":"\u00e9\/\n","url":"/a.js"}`, want: `{"s":"\u00e9\/\n","url":"file:///a.js"}`},
	// Invalid JSON: what was rewritten before the error stays, the rest is relayed as is.
	{name: "truncated after a rewrite", in: `{"url":"/a.js","x":{"url":"/b`, want: `{"url":"file:///a.js","x":{"url":"/b`},

	// Values that are not bare absolute paths stay.
	{name: "already file URL", in: `{"url":"file:///a.js","x":{"url":"/b"}}`, want: `{"url":"file:///a.js","x":{"url":"file:///b"}}`},
	{name: "file URL with marker", in: `{"url":"file:///a.js","u":{"url":"//host/share/a.js"}}`},
	{name: "node internal", in: `{"url":"node:internal/main/run_main_module","x":"\"url\":\"/"}`},
	{name: "empty", in: `{"url":"","y":{"url":"//"}}`},
	{name: "relative", in: `{"url":"app.js","y":{"url":"//x"}}`},
	{name: "network path", in: `{"url":"//host/a.js"}`},
	{name: "https", in: `{"url":"https://example.com/a.js","u":{"url":"//h"}}`},
	{name: "lone surrogate in the path", in: `{"url":"/a\ud800.js"}`},
	{name: "not JSON with marker", in: `"url":"/a.js"`},
}

func TestRewriteFileURLs(t *testing.T) {
	for _, tc := range rewriteFileURLCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			got := RewriteFileURLs(in)
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if string(got) != want {
				t.Errorf("RewriteFileURLs(%s)\n got %s\nwant %s", tc.in, got, want)
			}
			if string(in) != tc.in {
				t.Errorf("RewriteFileURLs modified its input: %q", in)
			}
		})
	}
}

func TestRewriteFileURLsWithoutMarkerReturnsInput(t *testing.T) {
	for _, in := range []string{
		``,
		`{"id":1,"result":{}}`,
		`{"url" : "/a.js"}`, // V8 writes compact JSON: not looked at
		`{"url":"file:///a.js"}`,
		`{"url":"\/a.js"}`,
		`{"method":"Runtime.consoleAPICalled","params":{"args":[{"value":"\ud800"}]}}`,
	} {
		msg := []byte(in)
		got := RewriteFileURLs(msg)
		if !isSameSlice(got, msg) {
			t.Errorf("RewriteFileURLs(%s) = %s, want the very same slice (no copy, no change)", in, got)
		}
	}
}

func isSameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func FuzzRewriteFileURLs(f *testing.F) {
	for _, tc := range rewriteFileURLCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		orig := bytes.Clone(msg)
		if hasURLPath(msg) != bytes.Contains(msg, urlPathMarker) {
			t.Fatalf("hasURLPath(%q) = %v, bytes.Contains says otherwise", msg, hasURLPath(msg))
		}
		got := RewriteFileURLs(msg)
		if !bytes.Equal(msg, orig) {
			t.Fatalf("RewriteFileURLs modified its input %q", orig)
		}
		if !bytes.Contains(msg, urlPathMarker) && !isSameSlice(got, msg) {
			t.Fatalf("RewriteFileURLs(%q) = %q; without the marker it must return the input", msg, got)
		}
		if !jsontext.Value(msg).IsValid(cdpwire.DecodeOpts...) {
			return
		}
		if !jsontext.Value(got).IsValid(cdpwire.DecodeOpts...) {
			t.Fatalf("RewriteFileURLs(%q) = %q is not valid JSON", msg, got)
		}
		if again := RewriteFileURLs(got); !bytes.Equal(again, got) {
			t.Fatalf("RewriteFileURLs is not idempotent on %q: %q then %q", msg, got, again)
		}
	})
}

type contextCase struct {
	name    string
	in      string
	wantAux map[string]any // nil: the message must come back unchanged
	// outside is the message with the auxData value cut out (or, for an
	// inserted auxData, the original): every byte there must be kept.
	outside string
}

const frameID = "F00D"

var contextCases = []contextCase{
	{name: "auxData overridden",
		in: `{"method":"Runtime.executionContextCreated","params":{"context":{"id":1,"origin":"","name":"main",` +
			`"uniqueId":"-1.2","auxData":{"isDefault":false,"type":"default","frameId":"old"}}}}`,
		wantAux: map[string]any{"isDefault": true, "frameId": frameID, "type": "default"},
		outside: `{"method":"Runtime.executionContextCreated","params":{"context":{"id":1,"origin":"","name":"main",` +
			`"uniqueId":"-1.2","auxData":}}}`},
	{name: "auxData without the members",
		in:      `{"method":"Runtime.executionContextCreated","params":{"context":{"id":1,"auxData":{"type":"isolated","n":[1,{"a":null}],"s":"\ud800"}}}}`,
		wantAux: map[string]any{"isDefault": true, "frameId": frameID, "type": "isolated", "n": []any{1.0, map[string]any{"a": nil}}, "s": "\ufffd"},
		outside: `{"method":"Runtime.executionContextCreated","params":{"context":{"id":1,"auxData":}}}`},
	{name: "escaped member names dropped",
		in:      `{"params":{"context":{"auxData":{"frame\u0049d":"x","is\u0044efault":false,"k":1}}}}`,
		wantAux: map[string]any{"isDefault": true, "frameId": frameID, "k": 1.0},
		outside: `{"params":{"context":{"auxData":}}}`},
	{name: "empty auxData", in: `{"params":{"context":{"id":2,"auxData":{}}}}`,
		wantAux: map[string]any{"isDefault": true, "frameId": frameID}, outside: `{"params":{"context":{"id":2,"auxData":}}}`},
	{name: "null auxData", in: `{"params":{"context":{"id":2,"auxData":null}}}`,
		wantAux: map[string]any{"isDefault": true, "frameId": frameID}, outside: `{"params":{"context":{"id":2,"auxData":}}}`},
	{name: "missing auxData", in: `{"method":"Runtime.executionContextCreated","params":{"context":{"id":1,"name":"x"}}}`,
		wantAux: map[string]any{"isDefault": true, "frameId": frameID}},
	{name: "empty context", in: `{"method":"Runtime.executionContextCreated","params":{"context":{}}}`,
		wantAux: map[string]any{"isDefault": true, "frameId": frameID}},
	{name: "params members around", in: `{"params":{"a":1,"context":{"id":1},"z":"\ud800"},"method":"Runtime.executionContextCreated"}`,
		wantAux: map[string]any{"isDefault": true, "frameId": frameID}},
	{name: "whitespace around auxData", in: "{ \"params\" : { \"context\" : { \"auxData\" : { \"type\" : \"default\" } } } }",
		wantAux: map[string]any{"isDefault": true, "frameId": frameID, "type": "default"},
		outside: "{ \"params\" : { \"context\" : { \"auxData\" :  } } }"},

	// Nothing to rewrite.
	{name: "no params", in: `{"method":"Runtime.executionContextCreated"}`},
	{name: "no context", in: `{"method":"Runtime.executionContextCreated","params":{"id":1}}`},
	{name: "context not an object", in: `{"params":{"context":5}}`},
	{name: "context string", in: `{"params":{"context":"{}"}}`},
	{name: "params not an object", in: `{"params":[{"context":{}}]}`},
	{name: "not JSON", in: `Runtime.executionContextCreated`},
	{name: "empty", in: ``},
}

func TestRewriteContextCreated(t *testing.T) {
	for _, tc := range contextCases {
		t.Run(tc.name, func(t *testing.T) {
			got := RewriteContextCreated([]byte(tc.in), frameID)
			if tc.wantAux == nil {
				if string(got) != tc.in {
					t.Fatalf("RewriteContextCreated(%s) = %s, want it unchanged", tc.in, got)
				}
				return
			}
			if !jsontext.Value(got).IsValid(cdpwire.DecodeOpts...) {
				t.Fatalf("RewriteContextCreated(%s) = %s is not valid JSON", tc.in, got)
			}
			var m struct {
				Params struct {
					Context map[string]any `json:"context"`
				} `json:"params"`
			}
			if err := json.Unmarshal(got, &m); err != nil {
				t.Fatalf("RewriteContextCreated(%s) = %s: %v", tc.in, got, err)
			}
			if aux := m.Params.Context["auxData"]; !reflect.DeepEqual(aux, tc.wantAux) {
				t.Errorf("RewriteContextCreated(%s) auxData = %#v, want %#v", tc.in, aux, tc.wantAux)
			}
			if tc.outside != "" {
				s, e, ok := cdpwire.FindMember(got, "params", "context", "auxData")
				if !ok {
					t.Fatalf("RewriteContextCreated(%s) = %s has no auxData", tc.in, got)
				}
				if cut := string(got[:s]) + string(got[e:]); cut != tc.outside {
					t.Errorf("RewriteContextCreated(%s): bytes outside auxData\n got %s\nwant %s", tc.in, cut, tc.outside)
				}
				return
			}
			// Inserted: the context's other members and everything around
			// them are unchanged.
			var orig map[string]any
			if err := json.Unmarshal([]byte(tc.in), &orig); err != nil {
				t.Fatal(err)
			}
			var all map[string]any
			if err := json.Unmarshal(got, &all); err != nil {
				t.Fatal(err)
			}
			delete(all["params"].(map[string]any)["context"].(map[string]any), "auxData")
			if !reflect.DeepEqual(all, orig) {
				t.Errorf("RewriteContextCreated(%s) = %s changed more than auxData", tc.in, got)
			}
		})
	}
}

func TestRewriteContextCreatedQuotesFrameID(t *testing.T) {
	got := RewriteContextCreated([]byte(`{"params":{"context":{"auxData":{}}}}`), `a"b\c`)
	want := `{"params":{"context":{"auxData":{"isDefault":true,"frameId":"a\"b\\c"}}}}`
	if string(got) != want {
		t.Errorf("RewriteContextCreated with frame id %q = %s, want %s", `a"b\c`, got, want)
	}
}

func FuzzRewriteContextCreated(f *testing.F) {
	for _, tc := range contextCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		orig := bytes.Clone(msg)
		got := RewriteContextCreated(msg, frameID)
		if !bytes.Equal(msg, orig) {
			t.Fatalf("RewriteContextCreated modified its input %q", orig)
		}
		if !jsontext.Value(msg).IsValid(cdpwire.DecodeOpts...) {
			return
		}
		if !jsontext.Value(got).IsValid(cdpwire.DecodeOpts...) {
			t.Fatalf("RewriteContextCreated(%q) = %q is not valid JSON", msg, got)
		}
		if bytes.Equal(got, msg) {
			return
		}
		s, e, ok := cdpwire.FindMember(got, "params", "context", "auxData")
		if !ok {
			t.Fatalf("RewriteContextCreated(%q) = %q changed the message but has no params.context.auxData", msg, got)
		}
		var aux map[string]jsontext.Value
		if err := json.Unmarshal(got[s:e], &aux); err != nil {
			t.Fatalf("RewriteContextCreated(%q): auxData %q is not an object: %v", msg, got[s:e], err)
		}
		if string(aux["isDefault"]) != "true" || string(aux["frameId"]) != `"`+frameID+`"` {
			t.Fatalf("RewriteContextCreated(%q): auxData %q lacks isDefault:true and frameId %q", msg, got[s:e], frameID)
		}
		if again := RewriteContextCreated(got, frameID); !bytes.Equal(again, got) {
			t.Fatalf("RewriteContextCreated is not idempotent on %q: %q then %q", msg, got, again)
		}
	})
}

type breakpointCase struct {
	name      string
	in        string
	url       string   // the url the regex must be built from; "" means unchanged
	match     []string // besides url and its path
	mismatch  []string
	wantOther map[string]any // the other members, decoded
}

var breakpointCases = []breakpointCase{
	{name: "file URL",
		in:  `{"lineNumber":3,"url":"file:///x/host.js","columnNumber":0,"condition":""}`,
		url: "file:///x/host.js",
		mismatch: []string{"/x/host.jsx", "file:///x/host.jsx", "/x/host.js.map", "file:///x/host.js.map",
			"/y/x/host.js", "x/host.js", "/x/hostXjs", "file:///x/hostXjs", "file:///y/x/host.js", "/x/host.js\n"},
		wantOther: map[string]any{"lineNumber": 3.0, "columnNumber": 0.0, "condition": ""}},
	{name: "url first", in: `{"url":"file:///x/host.js","lineNumber":3}`, url: "file:///x/host.js",
		mismatch: []string{"/x/host.jsx"}, wantOther: map[string]any{"lineNumber": 3.0}},
	{name: "url only", in: `{"url":"file:///x/host.js"}`, url: "file:///x/host.js", wantOther: map[string]any{}},
	{name: "percent-encoded", in: `{"lineNumber":1,"url":"file:///my%20app/a.js"}`, url: "file:///my%20app/a.js",
		match: []string{"/my app/a.js"}, mismatch: []string{"/my%20app/a.js", "/myXapp/a.js"}, wantOther: map[string]any{"lineNumber": 1.0}},
	{name: "non-ASCII", in: `{"lineNumber":1,"url":"file:///tmp/%C3%A9.js"}`, url: "file:///tmp/%C3%A9.js",
		match: []string{"/tmp/é.js"}, mismatch: []string{"/tmp/e.js"}, wantOther: map[string]any{"lineNumber": 1.0}},
	{name: "regex metacharacters", in: `{"lineNumber":1,"url":"file:///a/(b)+[c]$^.js"}`, url: "file:///a/(b)+[c]$^.js",
		mismatch: []string{"/a/bb[c]$^.js", "/a/(b)+c$^.js", "/a/(b)+[c]$^Xjs"}, wantOther: map[string]any{"lineNumber": 1.0}},
	{name: "whitespace", in: `{ "lineNumber" : 1 , "url" : "file:///x/a.js" }`, url: "file:///x/a.js",
		wantOther: map[string]any{"lineNumber": 1.0}},
	{name: "other members kept", in: `{"lineNumber":9,"url":"file:///a.js","columnNumber":2,"condition":"x > \"url\"","extra":{"url":"k"}}`,
		url: "file:///a.js", wantOther: map[string]any{"lineNumber": 9.0, "columnNumber": 2.0, "condition": `x > "url"`, "extra": map[string]any{"url": "k"}}},

	// Unchanged.
	{name: "http", in: `{"lineNumber":1,"url":"http://localhost/a.js"}`},
	{name: "node internal", in: `{"lineNumber":1,"url":"node:internal/main"}`},
	{name: "bare path", in: `{"lineNumber":1,"url":"/x/host.js"}`},
	{name: "empty url", in: `{"lineNumber":1,"url":""}`},
	{name: "file without path", in: `{"lineNumber":1,"url":"file:"}`},
	{name: "opaque file", in: `{"lineNumber":1,"url":"file:a.js"}`},
	{name: "bad escape", in: `{"lineNumber":1,"url":"file:///a%zz.js"}`},
	{name: "urlRegex", in: `{"lineNumber":1,"urlRegex":"^file:///a\\.js$"}`},
	{name: "scriptHash", in: `{"lineNumber":1,"scriptHash":"abc"}`},
	{name: "url not a string", in: `{"lineNumber":1,"url":5}`},
	{name: "url null", in: `{"lineNumber":1,"url":null}`},
	{name: "nested url only", in: `{"lineNumber":1,"x":{"url":"file:///a.js"}}`},
	{name: "empty params", in: `{}`},
	{name: "not an object", in: `["url","file:///a.js"]`},
	{name: "lone surrogate in url", in: `{"url":"file:///a\ud800.js"}`},
}

func TestMapBreakpointURL(t *testing.T) {
	for _, tc := range breakpointCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			got := MapBreakpointURL(in)
			if string(in) != tc.in {
				t.Fatalf("MapBreakpointURL modified its input: %s", in)
			}
			if tc.url == "" {
				if string(got) != tc.in {
					t.Fatalf("MapBreakpointURL(%s) = %s, want it unchanged", tc.in, got)
				}
				return
			}
			var m map[string]any
			if err := json.Unmarshal(got, &m); err != nil {
				t.Fatalf("MapBreakpointURL(%s) = %s is not a JSON object: %v", tc.in, got, err)
			}
			if _, ok := m["url"]; ok {
				t.Errorf("MapBreakpointURL(%s) = %s still has url: V8 refuses url together with urlRegex", tc.in, got)
			}
			src, ok := m["urlRegex"].(string)
			if !ok {
				t.Fatalf("MapBreakpointURL(%s) = %s has no string urlRegex", tc.in, got)
			}
			delete(m, "urlRegex")
			if !reflect.DeepEqual(m, tc.wantOther) {
				t.Errorf("MapBreakpointURL(%s) other members = %v, want %v", tc.in, m, tc.wantOther)
			}
			re, err := regexp.Compile(src)
			if err != nil {
				t.Fatalf("MapBreakpointURL(%s) urlRegex %q does not compile: %v", tc.in, src, err)
			}
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range append([]string{tc.url, u.Path}, tc.match...) {
				if !re.MatchString(s) {
					t.Errorf("urlRegex %q does not match %q; it must match both the file URL and the bare path", src, s)
				}
			}
			for _, s := range tc.mismatch {
				if re.MatchString(s) {
					t.Errorf("urlRegex %q matches %q; it must match only this script", src, s)
				}
			}
		})
	}
}

func FuzzMapBreakpointURL(f *testing.F) {
	for _, tc := range breakpointCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		orig := bytes.Clone(params)
		got := MapBreakpointURL(params)
		if !bytes.Equal(params, orig) {
			t.Fatalf("MapBreakpointURL modified its input %q", orig)
		}
		if bytes.Equal(got, params) {
			return
		}
		s, e, ok := cdpwire.FindMember(params, "url")
		if !ok || params[s] != '"' {
			t.Fatalf("MapBreakpointURL(%q) = %q rewrote params without a string url", params, got)
		}
		raw := cdpwire.Unquote(params[s:e])
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "file" {
			t.Fatalf("MapBreakpointURL(%q) = %q rewrote url %q, which is not a file URL", params, got, raw)
		}
		rs, re, ok := cdpwire.FindMember(got, "urlRegex")
		if !ok || got[rs] != '"' {
			t.Fatalf("MapBreakpointURL(%q) = %q has no string urlRegex", params, got)
		}
		rx, err := regexp.Compile(cdpwire.Unquote(got[rs:re]))
		if err != nil {
			t.Fatalf("MapBreakpointURL(%q): urlRegex %s does not compile: %v", params, got[rs:re], err)
		}
		if !rx.MatchString(raw) || !rx.MatchString(u.Path) {
			t.Fatalf("MapBreakpointURL(%q): urlRegex %s must match %q and %q", params, got[rs:re], raw, u.Path)
		}
		if rx.MatchString(raw+"x") || rx.MatchString(u.Path+".map") {
			t.Fatalf("MapBreakpointURL(%q): urlRegex %s matches a sibling of %q", params, got[rs:re], raw)
		}
		if jsontext.Value(params).IsValid(cdpwire.DecodeOpts...) && !jsontext.Value(got).IsValid(cdpwire.DecodeOpts...) {
			t.Fatalf("MapBreakpointURL(%q) = %q is not valid JSON", params, got)
		}
	})
}

func TestRenameHostContext(t *testing.T) {
	const node = `{"method":"Runtime.executionContextCreated","params":{"context":{"id":1,"origin":"","name":"/usr/local/bin/node[4242]","uniqueId":"1.2","auxData":{"isDefault":true}}}}`
	cases := []struct{ name, in, want string }{
		{"Node's main context", node, strings.Replace(node, `"/usr/local/bin/node[4242]"`, `"app \"1\".js"`, 1)},
		{"vm context keeps its name",
			`{"params":{"context":{"id":2,"name":"VM Context 1","auxData":{"isDefault":false}}}}`, ""},
		{"no auxData", `{"params":{"context":{"id":2,"name":"node[1]"}}}`, ""},
		{"isDefault not a bool", `{"params":{"context":{"name":"node[1]","auxData":{"isDefault":"true"}}}}`, ""},
		{"name not a string", `{"params":{"context":{"name":5,"auxData":{"isDefault":true}}}}`, ""},
		{"no name", `{"params":{"context":{"auxData":{"isDefault":true}}}}`, ""},
		{"not JSON", `Runtime.executionContextCreated`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if got := RenameHostContext([]byte(tc.in), `app "1".js`); string(got) != want {
				t.Errorf("RenameHostContext(%s)\n got %s\nwant %s", tc.in, got, want)
			}
		})
	}
}

func TestHasURLPath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{``, false}, {`/`, false}, {`"url":"`, false}, {`"url":"/`, true}, {`x"url":"/`, true},
		{`/"url":"/`, true}, {`{"url":"x/y","a":"/b"}`, false}, {`"url":"//h"`, true},
		{`url":"/`, false}, {`"url": "/`, false}, {`"uri":"/`, false},
	} {
		if got := hasURLPath([]byte(tc.in)); got != tc.want {
			t.Errorf("hasURLPath(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// BenchmarkHasURLPath compares hasURLPath with the bytes.Contains it stands
// for, on a 5 MB string result and on a host console event, in one run:
// go test -run '^$' -bench HasURLPath ./hostrealm
func BenchmarkHasURLPath(b *testing.B) {
	big := []byte(`{"id":7,"result":{"result":{"type":"string","value":"` + strings.Repeat("x", 5<<20) + `"}}}`)
	event := []byte(`{"method":"Runtime.consoleAPICalled","params":{"type":"log","args":[{"type":"string","value":"tick 1"}],"executionContextId":1,"timestamp":1.7e12,"stackTrace":{"callFrames":[{"functionName":"tick","scriptId":"71","url":"file:///srv/app/host.js","lineNumber":3,"columnNumber":10}]}}}`)
	for _, m := range []struct {
		name string
		msg  []byte
	}{{"5MB", big}, {"event", event}} {
		b.Run(m.name+"/hasURLPath", func(b *testing.B) {
			b.SetBytes(int64(len(m.msg)))
			for b.Loop() {
				hasURLPath(m.msg)
			}
		})
		b.Run(m.name+"/bytes.Contains", func(b *testing.B) {
			b.SetBytes(int64(len(m.msg)))
			for b.Loop() {
				bytes.Contains(m.msg, urlPathMarker)
			}
		})
	}
}

// Regressions found by the unit-test pass; each failed before its fix.

func TestRegressContextCreatedWithWhitespace(t *testing.T) {
	for _, in := range []string{`{"params":{"context":{ }}}`, "{\"params\":{\"context\":{\n}}}"} {
		out := RewriteContextCreated([]byte(in), "F00D")
		if !json.Valid(out) {
			t.Errorf("RewriteContextCreated(%q) = %s, not JSON", in, out)
		}
	}
}

func TestRegressBreakpointURLWithEscapedName(t *testing.T) {
	in := `{"condition":"url","u\u0072l":"file:///a.js"}`
	want := `{"condition":"url","urlRegex":"^(?:file:///a\\.js|/a\\.js)$"}`
	if got := string(MapBreakpointURL([]byte(in))); got != want {
		t.Errorf("MapBreakpointURL(%s) = %s, want %s", in, got, want)
	}
}
