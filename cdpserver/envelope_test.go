package cdpserver

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/internal/cdpwire"
)

// parseRequestCase is one row of the parseRequest table. wantParams is nil
// when the request must come back without params.
type parseRequestCase struct {
	name       string
	in         string
	wantID     string // raw bytes of the echoed id; "" when none
	wantMethod string
	wantSess   string
	wantParams *string
	wantCode   int    // 0: the request parses
	wantMsg    string // substring of the wire error message
}

func ptr(s string) *string { return &s }

var parseRequestCases = []parseRequestCase{
	// Valid requests.
	{name: "minimal", in: `{"id":1,"method":"Runtime.enable"}`, wantID: `1`, wantMethod: "Runtime.enable"},
	{name: "id 7 with params", in: `{"id":7,"method":"Runtime.evaluate","params":{"expression":"1+1"}}`,
		wantID: `7`, wantMethod: "Runtime.evaluate", wantParams: ptr(`{"expression":"1+1"}`)},
	{name: "negative id", in: `{"id":-3,"method":"Debugger.pause"}`, wantID: `-3`, wantMethod: "Debugger.pause"},
	{name: "zero id", in: `{"id":0,"method":"A.b"}`, wantID: `0`, wantMethod: "A.b"},
	{name: "max int64 id", in: `{"id":9223372036854775807,"method":"A.b"}`, wantID: `9223372036854775807`, wantMethod: "A.b"},
	{name: "min int64 id", in: `{"id":-9223372036854775808,"method":"A.b"}`, wantID: `-9223372036854775808`, wantMethod: "A.b"},
	{name: "members reordered", in: `{"params":{"a":[1,2]},"method":"X.y","id":42}`,
		wantID: `42`, wantMethod: "X.y", wantParams: ptr(`{"a":[1,2]}`)},
	{name: "whitespace everywhere", in: " {\n \"id\" : 7 ,\t\"method\" : \"A.b\" , \"params\" : { \"x\" : 1 } }\n",
		wantID: `7`, wantMethod: "A.b", wantParams: ptr(`{ "x" : 1 }`)},
	{name: "empty params", in: `{"id":1,"method":"A.b","params":{}}`, wantID: `1`, wantMethod: "A.b", wantParams: ptr(`{}`)},
	{name: "sessionId", in: `{"id":1,"method":"A.b","sessionId":"S-1"}`, wantID: `1`, wantMethod: "A.b", wantSess: "S-1"},
	{name: "escaped method", in: `{"id":1,"method":"Runtime.\u0065nable"}`, wantID: `1`, wantMethod: "Runtime.enable"},
	{name: "unknown members ignored", in: `{"id":1,"extra":[1,{"y":null}],"method":"A.b","z":"q","n":null}`,
		wantID: `1`, wantMethod: "A.b"},
	// Duplicate names are tolerated; the last one wins, as in JSON.parse.
	{name: "duplicate names", in: `{"id":1,"method":"A.a","id":2,"method":"B.b"}`, wantID: `2`, wantMethod: "B.b"},
	{name: "duplicate names inside params", in: `{"id":1,"method":"A.b","params":{"x":1,"x":2}}`,
		wantID: `1`, wantMethod: "A.b", wantParams: ptr(`{"x":1,"x":2}`)},
	{name: "lone surrogate in params", in: `{"id":1,"method":"Runtime.evaluate","params":{"expression":"'\ud800'","\udc00":"\ud800\ud800"}}`,
		wantID: `1`, wantMethod: "Runtime.evaluate", wantParams: ptr(`{"expression":"'\ud800'","\udc00":"\ud800\ud800"}`)},
	{name: "invalid UTF-8 in params", in: "{\"id\":1,\"method\":\"A.b\",\"params\":{\"s\":\"\xff\xfe\xc3(\",\"\x80\":1}}",
		wantID: `1`, wantMethod: "A.b", wantParams: ptr("{\"s\":\"\xff\xfe\xc3(\",\"\x80\":1}")},
	{name: "escapes kept raw in params", in: `{"id":1,"method":"A.b","params":{"s":"\u00e9\n\/"}}`,
		wantID: `1`, wantMethod: "A.b", wantParams: ptr(`{"s":"\u00e9\n\/"}`)},

	// Not a JSON object: parse error, no id.
	{name: "empty input", in: ``, wantCode: codeParseError, wantMsg: "valid JSON object"},
	{name: "not JSON", in: `hello`, wantCode: codeParseError, wantMsg: "valid JSON object"},
	{name: "array", in: `[{"id":1,"method":"A.b"}]`, wantCode: codeParseError, wantMsg: "valid JSON object"},
	{name: "string", in: `"x"`, wantCode: codeParseError, wantMsg: "valid JSON object"},
	{name: "null", in: `null`, wantCode: codeParseError, wantMsg: "valid JSON object"},
	{name: "truncated", in: `{"id":1,"method":"A.b"`, wantID: `1`, wantCode: codeParseError, wantMsg: "valid JSON object"},
	{name: "truncated value", in: `{"id":1,"method":"A.b","params":{"x":`, wantID: `1`, wantCode: codeParseError, wantMsg: "valid JSON object"},
	{name: "unquoted name", in: `{id:1,"method":"A.b"}`, wantCode: codeParseError, wantMsg: "valid JSON object"},

	// Bad id: invalid request, and the answer carries no id.
	{name: "missing id", in: `{"method":"A.b"}`, wantCode: codeInvalidRequest, wantMsg: "integer 'id'"},
	{name: "string id", in: `{"id":"1","method":"A.b"}`, wantCode: codeInvalidRequest, wantMsg: "integer 'id'"},
	{name: "float id", in: `{"id":1.5,"method":"A.b"}`, wantCode: codeInvalidRequest, wantMsg: "integer 'id'"},
	{name: "exponent id", in: `{"id":1e3,"method":"A.b"}`, wantCode: codeInvalidRequest, wantMsg: "integer 'id'"},
	{name: "integral float id", in: `{"id":1.0,"method":"A.b"}`, wantCode: codeInvalidRequest, wantMsg: "integer 'id'"},
	{name: "id past int64", in: `{"id":9223372036854775808,"method":"A.b"}`, wantCode: codeInvalidRequest, wantMsg: "integer 'id'"},
	{name: "null id", in: `{"id":null,"method":"A.b"}`, wantCode: codeInvalidRequest, wantMsg: "integer 'id'"},
	{name: "bool id", in: `{"id":true,"method":"A.b"}`, wantCode: codeInvalidRequest, wantMsg: "integer 'id'"},
	{name: "object id", in: `{"id":{},"method":"A.b"}`, wantCode: codeInvalidRequest, wantMsg: "integer 'id'"},

	// Bad method: invalid request; the id read before it is echoed.
	{name: "missing method", in: `{"id":5}`, wantID: `5`, wantCode: codeInvalidRequest, wantMsg: "string 'method'"},
	{name: "number method", in: `{"id":5,"method":5}`, wantID: `5`, wantCode: codeInvalidRequest, wantMsg: "string 'method'"},
	{name: "null method", in: `{"id":5,"method":null}`, wantID: `5`, wantCode: codeInvalidRequest, wantMsg: "string 'method'"},
	{name: "empty method", in: `{"id":5,"method":""}`, wantID: `5`, wantCode: codeInvalidRequest, wantMsg: "string 'method'"},
	{name: "empty object", in: `{}`, wantCode: codeInvalidRequest, wantMsg: "integer 'id'"},

	// Bad params: invalid params.
	{name: "array params", in: `{"id":5,"method":"A.b","params":[1]}`, wantID: `5`, wantCode: codeInvalidParams, wantMsg: "'params' must be an object"},
	{name: "string params", in: `{"id":5,"method":"A.b","params":"{}"}`, wantID: `5`, wantCode: codeInvalidParams, wantMsg: "'params' must be an object"},
	{name: "null params", in: `{"id":5,"method":"A.b","params":null}`, wantID: `5`, wantCode: codeInvalidParams, wantMsg: "'params' must be an object"},
	{name: "number params", in: `{"id":5,"method":"A.b","params":1}`, wantID: `5`, wantCode: codeInvalidParams, wantMsg: "'params' must be an object"},
}

func TestParseRequest(t *testing.T) {
	for _, tc := range parseRequestCases {
		t.Run(tc.name, func(t *testing.T) {
			msg := []byte(tc.in)
			r, werr := parseRequest(msg)
			if string(r.ID) != tc.wantID {
				t.Errorf("parseRequest(%q).ID = %q, want %q", tc.in, r.ID, tc.wantID)
			}
			if tc.wantCode != 0 {
				if werr == nil {
					t.Fatalf("parseRequest(%q) = %+v, nil; want wire error %d", tc.in, r, tc.wantCode)
				}
				if werr.Code != tc.wantCode || !strings.Contains(werr.Message, tc.wantMsg) {
					t.Errorf("parseRequest(%q) error = {%d %q}, want code %d and a message containing %q",
						tc.in, werr.Code, werr.Message, tc.wantCode, tc.wantMsg)
				}
				return
			}
			if werr != nil {
				t.Fatalf("parseRequest(%q) error = {%d %q}, want success", tc.in, werr.Code, werr.Message)
			}
			if r.Method != tc.wantMethod {
				t.Errorf("parseRequest(%q).Method = %q, want %q", tc.in, r.Method, tc.wantMethod)
			}
			if r.SessionID != tc.wantSess {
				t.Errorf("parseRequest(%q).SessionID = %q, want %q", tc.in, r.SessionID, tc.wantSess)
			}
			switch {
			case tc.wantParams == nil && r.Params != nil:
				t.Errorf("parseRequest(%q).Params = %q, want nil", tc.in, r.Params)
			case tc.wantParams != nil && !bytes.Equal(r.Params, []byte(*tc.wantParams)):
				t.Errorf("parseRequest(%q).Params = %q, want the original bytes %q", tc.in, r.Params, *tc.wantParams)
			}
			if !isSubSlice(r.ID, msg) || !isSubSlice(r.Params, msg) {
				t.Errorf("parseRequest(%q): ID and Params must alias the input, not copies", tc.in)
			}
		})
	}
}

// isSubSlice reports whether sub lies inside whole's memory (not a copy).
func isSubSlice(sub, whole []byte) bool {
	if len(sub) == 0 {
		return true
	}
	s := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	w := uintptr(unsafe.Pointer(unsafe.SliceData(whole)))
	return s >= w && s+uintptr(len(sub)) <= w+uintptr(len(whole))
}

func FuzzParseRequest(f *testing.F) {
	for _, tc := range parseRequestCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		orig := bytes.Clone(msg)
		r, werr := parseRequest(msg)
		if !bytes.Equal(msg, orig) {
			t.Fatalf("parseRequest modified its input: %q became %q", orig, msg)
		}
		if werr != nil {
			switch werr.Code {
			case codeParseError, codeInvalidRequest, codeInvalidParams:
			default:
				t.Fatalf("parseRequest(%q) error code %d, want one of -32700, -32600, -32602", msg, werr.Code)
			}
			if werr.Message == "" {
				t.Fatalf("parseRequest(%q) error %d has no message", msg, werr.Code)
			}
			if r.ID != nil {
				checkID(t, msg, r.ID)
			}
			return
		}
		checkID(t, msg, r.ID)
		if r.Method == "" {
			t.Fatalf("parseRequest(%q) succeeded with an empty method", msg)
		}
		if r.Params != nil {
			if !isSubSlice(r.Params, msg) || !bytes.Contains(msg, r.Params) {
				t.Fatalf("parseRequest(%q).Params = %q is not a sub-slice of the input", msg, r.Params)
			}
			if r.Params.Kind() != '{' || !r.Params.IsValid(cdpwire.DecodeOpts...) {
				t.Fatalf("parseRequest(%q).Params = %q is not a JSON object", msg, r.Params)
			}
		}
	})
}

// checkID fails unless id is an int64 literal aliasing msg.
func checkID(t *testing.T, msg []byte, id jsontext.Value) {
	t.Helper()
	if _, err := strconv.ParseInt(string(id), 10, 64); err != nil {
		t.Fatalf("parseRequest(%q).ID = %q does not parse as int64: %v", msg, id, err)
	}
	if !isSubSlice(id, msg) {
		t.Fatalf("parseRequest(%q).ID = %q is not a sub-slice of the input", msg, id)
	}
}

type parseHostCase struct {
	name    string
	in      string
	want    hostMessage
	wantErr bool
}

var parseHostCases = []parseHostCase{
	// Fast paths: V8's own member order.
	{name: "fast response", in: `{"id":12,"result":{}}`, want: hostMessage{ID: 12, IsResponse: true}},
	{name: "fast response only id", in: `{"id":12}`, want: hostMessage{ID: 12, IsResponse: true}},
	{name: "fast negative id", in: `{"id":-4,"error":{"code":-32000,"message":"x"}}`, want: hostMessage{ID: -4, IsResponse: true}},
	{name: "fast zero id", in: `{"id":0,"result":{"a":"\ud800"}}`, want: hostMessage{ID: 0, IsResponse: true}},
	{name: "fast event", in: `{"method":"Runtime.consoleAPICalled","params":{}}`, want: hostMessage{Method: "Runtime.consoleAPICalled"}},
	{name: "fast event no params", in: `{"method":"Debugger.resumed"}`, want: hostMessage{Method: "Debugger.resumed"}},

	// Slow path: anything else.
	{name: "reordered response", in: `{"result":{"v":{"id":3}},"id":12}`, want: hostMessage{ID: 12, IsResponse: true}},
	{name: "reordered event", in: `{"params":{"method":"Inner.x"},"method":"Runtime.consoleAPICalled"}`, want: hostMessage{Method: "Runtime.consoleAPICalled"}},
	{name: "whitespace response", in: "{ \"id\" : 12 ,\n\"result\" : { } }", want: hostMessage{ID: 12, IsResponse: true}},
	{name: "whitespace event", in: `{ "method" : "Debugger.paused" }`, want: hostMessage{Method: "Debugger.paused"}},
	{name: "escaped method", in: `{"method":"Runtime.console\u0041PICalled","params":{}}`, want: hostMessage{Method: "Runtime.consoleAPICalled"}},
	{name: "escaped name", in: `{"\u0069d":9,"result":{}}`, want: hostMessage{ID: 9, IsResponse: true}},
	{name: "id past the fast path width", in: `{"id":9223372036854775807,"result":{}}`, want: hostMessage{ID: 9223372036854775807, IsResponse: true}},
	{name: "lone surrogate elsewhere", in: `{"params":{"s":"\ud800"},"method":"Runtime.consoleAPICalled"}`, want: hostMessage{Method: "Runtime.consoleAPICalled"}},

	// Errors.
	{name: "empty", in: ``, wantErr: true},
	{name: "array", in: `[{"id":1}]`, wantErr: true},
	{name: "string", in: `"id"`, wantErr: true},
	{name: "number", in: `12`, wantErr: true},
	{name: "null", in: `null`, wantErr: true},
	{name: "not JSON", in: `{id:1}`, wantErr: true},
	{name: "empty object", in: `{}`, wantErr: true},
	{name: "error without id", in: `{"error":{"code":-32700,"message":"Message must be a valid JSON"}}`, wantErr: true},
	{name: "string id", in: `{"id":"12","result":{}}`, wantErr: true},
	{name: "float id", in: `{"id":1.5,"result":{}}`, wantErr: true},
	{name: "id past int64", in: `{"id":9223372036854775808,"result":{}}`, wantErr: true},
	{name: "empty method", in: `{"method":"","params":{}}`, wantErr: true},
	{name: "truncated", in: `{"id":1`, wantErr: true},
}

func TestParseHostMessage(t *testing.T) {
	for _, tc := range parseHostCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseHostMessage([]byte(tc.in))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("parseHostMessage(%q) = %+v, want an error", tc.in, got)
				}
				if !strings.HasPrefix(err.Error(), "cdpserver: ") {
					t.Errorf("parseHostMessage(%q) error %q lacks the package prefix", tc.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseHostMessage(%q) error %v, want %+v", tc.in, err, tc.want)
			}
			if got != tc.want {
				t.Errorf("parseHostMessage(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
			if slow, err := parseHostMessageSlow([]byte(tc.in)); err != nil || slow != tc.want {
				t.Errorf("parseHostMessageSlow(%q) = %+v, %v; want %+v (the fast path must not change the answer)", tc.in, slow, err, tc.want)
			}
		})
	}
}

// fromV8 reports whether msg is something V8 could have written: JSON whose
// lone surrogates are escaped ("\ud800"), with no raw invalid UTF-8 and no
// duplicate member names.
func fromV8(msg []byte) bool {
	return utf8.Valid(msg) && jsontext.Value(msg).IsValid(jsontext.AllowInvalidUTF8(true))
}

func FuzzParseHostMessage(f *testing.F) {
	for _, tc := range parseHostCases {
		f.Add([]byte(tc.in))
	}
	f.Add([]byte(`{"id":1,"method":"A.b"}`))
	f.Add([]byte(`{"method":"Runtime.executionContextCreated","params":{"context":{"id":1}}}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		got, err := parseHostMessage(msg)
		slow, slowErr := parseHostMessageSlow(msg)
		if err != nil {
			// The fast path never fails: an error is the slow path's own.
			if slowErr == nil || got != slow {
				t.Fatalf("parseHostMessage(%q) = %+v, %v but the slow path says %+v, %v", msg, got, err, slow, slowErr)
			}
			return
		}
		if !got.IsResponse && got.Method == "" {
			t.Fatalf("parseHostMessage(%q) = %+v: neither a response nor an event", msg, got)
		}
		// The fast paths only read a prefix; on input V8 could have written
		// they must classify exactly as the full scan does.
		if !fromV8(msg) {
			return
		}
		if slowErr != nil {
			t.Fatalf("parseHostMessage(%q) = %+v, but the slow path rejects it: %v", msg, got, slowErr)
		}
		if got.IsResponse != slow.IsResponse || got.IsResponse && got.ID != slow.ID || !got.IsResponse && got.Method != slow.Method {
			t.Fatalf("parseHostMessage(%q) = %+v, slow path = %+v; the fast path must classify the same", msg, got, slow)
		}
	})
}

func TestParseHostMessageHotEventsDoNotAllocate(t *testing.T) {
	msg := []byte(`{"method":"Runtime.consoleAPICalled","params":{"type":"log","args":[]}}`)
	var hm hostMessage
	allocs := testing.AllocsPerRun(100, func() { hm, _ = parseHostMessage(msg) })
	if hm.Method != "Runtime.consoleAPICalled" || allocs != 0 {
		t.Fatalf("method %q with %v allocations per call, want Runtime.consoleAPICalled with 0", hm.Method, allocs)
	}
	other := []byte(`{"method":"Custom.event","params":{}}`)
	if hm, _ := parseHostMessage(other); hm.Method != "Custom.event" {
		t.Fatalf("method %q, want Custom.event", hm.Method)
	}
}
