package cdpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// workerMessageCases are NodeWorker.receivedMessageFromWorker events as
// Node sends them and as it might: members in another order, whitespace,
// escapes of every kind in the thread's message (a lone surrogate V8 wrote
// in the thread's JSON arrives escaped twice), and shapes workerMessage
// must leave to encoding/json.
var workerMessageCases = []struct {
	name, msg string
	ok        bool
}{
	{"node", `{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"1","message":"{\"method\":\"Runtime.consoleAPICalled\",\"params\":{\"type\":\"log\",\"args\":[{\"type\":\"string\",\"value\":\"thread msg 0\"}]}}"}}`, true},
	{"answer", `{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"12","message":"{\"id\":3,\"result\":{}}"}}`, true},
	{"order", `{"params":{"message":"{\"id\":3,\"result\":{}}","workerId":"2","sessionId":"12"},"method":"NodeWorker.receivedMessageFromWorker"}`, false},
	{"space", "{ \"method\" : \"NodeWorker.receivedMessageFromWorker\" ,\n \"params\" : { \"sessionId\" : \"1\" , \"message\" : \"{}\" } }", false},
	{"escapes", `{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"1","message":"{\"v\":\"\\ud800 \\n \\\"q\\\" é \u00e9 \u2028 \/ \t\"}"}}`, true},
	{"member after", `{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"1","message":"{}","workerId":"1"}}`, false},
	{"quote inside", `{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"1","message":"{}","x":"{}"}}`, false},
	{"escaped session", `{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"\u0031","message":"{}"}}`, false},
	{"trailing space", `{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"1","message":"{}"}} `, false},
	{"no session", `{"method":"NodeWorker.receivedMessageFromWorker","params":{"message":"{}"}}`, false},
	{"no message", `{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"1"}}`, false},
	{"message not a string", `{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"1","message":{}}}`, false},
	{"session not a string", `{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":1,"message":"{}"}}`, false},
	{"invalid utf-8", "{\"method\":\"NodeWorker.receivedMessageFromWorker\",\"params\":{\"sessionId\":\"1\",\"message\":\"{\xff}\"}}", false},
	{"truncated", `{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"1","message":"{}`, false},
	{"params not an object", `{"method":"NodeWorker.receivedMessageFromWorker","params":[]}`, false},
}

// workerMessageByJSON is the decoding workerMessage stands for (the
// threadEvent path it replaced, and still the path of what it refuses).
func workerMessageByJSON(msg []byte) (sessionID, inner string, err error) {
	var ev struct {
		Params struct {
			SessionID string `json:"sessionId"`
			Message   string `json:"message"`
		} `json:"params"`
	}
	err = json.Unmarshal(msg, &ev)
	return ev.Params.SessionID, ev.Params.Message, err
}

// workerMessage's one-pass decoding of Node's shape gives what
// encoding/json gives, and leaves any other shape to it.
func TestWorkerMessage(t *testing.T) {
	for _, tc := range workerMessageCases {
		sessionID, inner, ok := workerMessage([]byte(tc.msg))
		if ok != tc.ok {
			t.Errorf("%s: ok %v, want %v", tc.name, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		wantID, wantInner, err := workerMessageByJSON([]byte(tc.msg))
		if err != nil {
			t.Fatalf("%s: encoding/json: %v", tc.name, err)
		}
		if sessionID != wantID || string(inner) != wantInner {
			t.Errorf("%s: got %q %q, want %q %q", tc.name, sessionID, inner, wantID, wantInner)
		}
		if cap(inner)-len(inner) < len(`,"sessionId":""}`)+len(sessionID) {
			t.Errorf("%s: no room for the sessionId (len %d, cap %d)", tc.name, len(inner), cap(inner))
		}
	}
}

func FuzzWorkerMessage(f *testing.F) {
	for _, tc := range workerMessageCases {
		f.Add([]byte(tc.msg))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		sessionID, inner, ok := workerMessage(msg)
		if !ok {
			return
		}
		wantID, wantInner, err := workerMessageByJSON(msg)
		if err != nil {
			t.Fatalf("%q: taken, but encoding/json says %v", msg, err)
		}
		if sessionID != wantID || string(inner) != wantInner {
			t.Errorf("%q: got %q %q, encoding/json %q %q", msg, sessionID, inner, wantID, wantInner)
		}
	})
}

// What Node really sends a session that enabled NodeWorker is the shape
// workerMessage takes; were it not, every thread message would silently
// take encoding/json's slower path.
func TestWorkerMessageNodeShape(t *testing.T) {
	w := startWorker(t, threadHostScript, Options{})
	c := w.dialDirect("node")
	c.Send("NodeWorker.enable", map[string]any{"waitForDebuggerOnStart": false})
	attached := c.ExpectEvent("NodeWorker.attachedToWorker", nil)
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(attached.Params, &p); err != nil || p.SessionID == "" {
		t.Fatalf("attachedToWorker: %s", attached.Raw)
	}
	// An answer whose value has a quote, a backslash, a non-ASCII letter
	// and a line separator: escapes in the thread's JSON, escaped again.
	inner0, _ := json.Marshal(map[string]any{"id": 1, "method": "Runtime.evaluate", "params": map[string]any{
		"expression": `'q"b\\ ' + String.fromCharCode(0xe9, 0x2028)`, "returnByValue": true}})
	c.Send("NodeWorker.sendMessageToWorker", map[string]any{"sessionId": p.SessionID, "message": string(inner0)})
	m := c.ExpectEvent("NodeWorker.receivedMessageFromWorker", nil)
	sessionID, inner, ok := workerMessage(m.Raw)
	if !ok {
		t.Fatalf("workerMessage refused Node's %s", m.Raw)
	}
	wantID, wantInner, err := workerMessageByJSON(m.Raw)
	if err != nil || sessionID != wantID || string(inner) != wantInner {
		t.Fatalf("workerMessage: %q %q, encoding/json: %q %q (%v)", sessionID, inner, wantID, wantInner, err)
	}
	if !strings.Contains(string(inner), `"value":"q\"b\\ \u00e9\u2028"`) {
		t.Errorf("the thread's answer %s lacks the evaluated string", inner)
	}
	t.Logf("Node's message: %s", m.Raw)
}

// A request in a thread's session with characters beyond ASCII is
// answered: Node 20's NodeWorker.sendMessageToWorker refuses raw UTF-8
// with an error that has no id, which left such a request unanswered
// (an "é" typed in a thread's console never came back).
func TestThreadNonASCIIRequest(t *testing.T) {
	w := startWorker(t, threadHostScript, Options{})
	c := w.dial("A")
	c.SetTimeout(10 * time.Second) // the old code never answers
	c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	a := c.ExpectAttached()
	const text = "é € 😀 \u2028 \"q\" \\"
	m := c.CallIn(a.SessionID, "Runtime.evaluate", map[string]any{"expression": "`" + strings.ReplaceAll(text, `\`, `\\`) + "`", "returnByValue": true})
	var r struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil || r.Result.Value != text {
		t.Fatalf("evaluate %q in a thread: %s", text, m.Raw)
	}
}

func TestASCIIJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"b"}`:            `{"a":"b"}`,
		`{"a":"é€😀"}`:          `{"a":"\u00e9\u20ac\ud83d\ude00"}`,
		"{\"a\":\"\xff\"}":     `{"a":"\ufffd"}`,
		`{"a":"\u00e9\\ é"}`:   `{"a":"\u00e9\\ \u00e9"}`,
		"{\"a\":\"x\u2028y\"}": `{"a":"x\u2028y"}`,
	} {
		got := asciiJSON([]byte(in))
		if string(got) != want {
			t.Errorf("asciiJSON(%q) = %s, want %s", in, got, want)
		}
		var a, b any
		if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
			t.Errorf("asciiJSON(%q) = %s: not JSON", in, got)
		}
	}
}

// TestInternalToThreadIsASCII: the worker's own requests to a thread (a
// breakpoint replayed into a later thread) go through the same escape as the
// window's, or Node drops them unanswered when a URL or condition holds
// non-ASCII text.
func TestInternalToThreadIsASCII(t *testing.T) {
	tt := newThreadTable()
	tt.mu.Lock()
	msg := tt.internalToThreadLocked("thread-1", "Debugger.setBreakpointByUrl", []byte(`{"url":"file:///tmp/café.js","lineNumber":1,"condition":"x==='é😀'"}`))
	tt.mu.Unlock()
	for i, b := range msg {
		if b >= 0x80 {
			t.Fatalf("byte %d of the message is not ASCII: %s", i, msg)
		}
	}
	var outer struct {
		Params struct{ Message string } `json:"params"`
	}
	if err := json.Unmarshal(msg, &outer); err != nil {
		t.Fatal(err)
	}
	var inner struct {
		Params struct{ URL, Condition string } `json:"params"`
	}
	if err := json.Unmarshal([]byte(outer.Params.Message), &inner); err != nil {
		t.Fatal(err)
	}
	if inner.Params.URL != "file:///tmp/café.js" || inner.Params.Condition != "x==='é😀'" {
		t.Fatalf("the escaped message decodes to %+v", inner.Params)
	}
}
