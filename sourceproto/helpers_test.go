package sourceproto

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Frame builders for tests: readable JSON, compacted by the decoder's own
// rules (whitespace is allowed anywhere JSON allows it).

// testToken is the token helloFrame carries.
var testToken = Token{s: "tok"}

const consoleItem = `{"console":{"type":"log","args":[{"type":"string","value":"hello"},` +
	`{"type":"number","value":42,"description":"42"}],"timestamp":1700000000000.5,` +
	`"stackTrace":{"callFrames":[{"functionName":"main","url":"http://127.0.0.1:5173/app.js","lineNumber":10,"columnNumber":4}]}}}`

func helloFrame(id string, caps, topics string) string {
	return fmt.Sprintf(`{"v":1,"type":"hello","source":%q,"body":{"role":"client","token":"tok",`+
		`"capabilities":[%s],"topics":[%s],"agent":{"name":"test","version":"0"},`+
		`"page":{"url":"http://127.0.0.1:5173/","title":"T"}}}`, id, caps, topics)
}

func replaceFrame(id string, gen, seq uint64, reason string) string {
	return fmt.Sprintf(`{"v":1,"type":"replace","source":%q,"gen":%d,"seq":%d,"body":{"reason":%q,"items":[]}}`,
		id, gen, seq, reason)
}

func appendFrame(id string, gen, seq uint64, dropped uint64, items ...string) string {
	d := ""
	if dropped > 0 {
		d = fmt.Sprintf(`"dropped":%d,`, dropped)
	}
	return fmt.Sprintf(`{"v":1,"type":"append","source":%q,"gen":%d,"seq":%d,"body":{%s"items":[%s]}}`,
		id, gen, seq, d, strings.Join(items, ","))
}

// event is one consumer call, flattened for comparison.
type event struct {
	Kind string
	Ref  SourceRef
	Seq  uint64
	N    int
	Gap  Gap
	Code CloseCode
	Type FrameType
}

// recorder is a Consumer that keeps every call.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) add(e event) { r.mu.Lock(); r.events = append(r.events, e); r.mu.Unlock() }

func (r *recorder) SourceOpened(i SourceInfo) { r.add(event{Kind: "opened", Ref: i.Ref}) }
func (r *recorder) SourceClosed(ref SourceRef, c CloseCode) {
	r.add(event{Kind: "closed", Ref: ref, Code: c})
}
func (r *recorder) Replaced(ref SourceRef, seq uint64, x *Replace) {
	r.add(event{Kind: "replaced", Ref: ref, Seq: seq, N: len(x.Items)})
}
func (r *recorder) Appended(ref SourceRef, seq uint64, a *Append) {
	r.add(event{Kind: "appended", Ref: ref, Seq: seq, N: len(a.Items)})
}
func (r *recorder) Gap(ref SourceRef, g Gap) { r.add(event{Kind: "gap", Ref: ref, Gap: g}) }
func (r *recorder) Response(ref SourceRef, b Body) {
	r.add(event{Kind: "response", Ref: ref, Type: b.FrameType()})
}

// take returns and clears the recorded events.
func (r *recorder) take() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

// openStreaming opens id with the given declarations and sends its initial
// replace (seq 0), so appends start at 1.
func openStreaming(t testing.TB, reg *Registry, id, caps, topics string) *Source {
	t.Helper()
	src, res := reg.Open([]byte(helloFrame(id, caps, topics)), OpenOptions{Role: RoleClient, Token: testToken})
	if src == nil {
		t.Fatalf("open %s: %v (%s)", id, res.Err, replies(res))
	}
	if r := src.Ingest([]byte(replaceFrame(id, src.Ref().Gen, 0, "initial"))); r.Err != nil {
		t.Fatalf("initial replace %s: %v", id, r.Err)
	}
	return src
}

func replies(r Result) string {
	s := make([]string, len(r.Replies))
	for i, b := range r.Replies {
		s[i] = string(b)
	}
	return strings.Join(s, "\n")
}

// expectReplies fails unless r's replies are exactly want, byte for byte.
func expectReplies(t testing.TB, r Result, want ...string) {
	t.Helper()
	if got := replies(r); got != strings.Join(want, "\n") {
		t.Fatalf("replies:\n got: %s\nwant: %s", got, strings.Join(want, "\n"))
	}
}

// expectFlowing proves src still accepts its next append and is acked.
func expectFlowing(t testing.TB, src *Source, seq uint64) {
	t.Helper()
	ref := src.Ref()
	r := src.Ingest([]byte(appendFrame(ref.ID, ref.Gen, seq, 0, consoleItem)))
	expectReplies(t, r, fmt.Sprintf(`{"v":1,"type":"ack","source":%q,"gen":%d,"seq":%d,"body":{}}`, ref.ID, ref.Gen, seq))
}
