package sourceproto

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// resultFrame is a runtime.result of c1 generation 3 with body members.
func resultFrame(members string) string {
	return `{"v":1,"type":"runtime.result",` + env + `,"body":{` + members + `}}`
}

func TestPeekResult(t *testing.T) {
	big := strings.Repeat("y", MaxStringBytes+1)
	for _, tc := range []struct {
		name    string
		frame   string
		session string
		id      uint64
		method  RuntimeMethod
	}{
		{"a valid result", resultFrame(`"session":"w1","id":7,"method":"evaluate","evaluate":{"result":{"type":"undefined"}}`), "w1", 7, MethodEvaluate},
		{"members in any order", resultFrame(`"evaluate":{"result":{"type":"undefined"}},"method":"evaluate","id":9,"session":"w2"`), "w2", 9, MethodEvaluate},
		{"a string over MaxStringBytes", resultFrame(`"session":"w1","id":8,"method":"evaluate","evaluate":{"result":{"type":"string","value":"` + big + `"}}`), "w1", 8, MethodEvaluate},
		{"a union with two members", resultFrame(`"session":"w1","id":1,"method":"getProperties","getProperties":{"result":[]},"error":{"code":"internal","message":"x"}}`), "w1", 1, MethodGetProperties},
		{"escapes and nesting skipped", resultFrame(`"x":["a\"]}",{"b":[1,{}]},-1.5e3,true,null],"session":"w1","id":0,"method":"releaseObject"`), "w1", 0, MethodReleaseObject},
		{"envelope members after the body", `{"body":{"session":"w1","id":2,"method":"evaluate"},"type":"runtime.result","v":1}`, "w1", 2, MethodEvaluate},
		{"a body the strict scanner refuses (unterminated inside)", resultFrame(`"session":"w1","id":3,"method":"evaluate","evaluate":{"result":{"type":"number","value":01}}`), "w1", 3, MethodEvaluate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, id, m, ok := peekResult([]byte(tc.frame))
			if !ok || s != tc.session || id != tc.id || m != tc.method {
				t.Fatalf("peekResult = %q %d %q %v, want %q %d %q", s, id, m, ok, tc.session, tc.id, tc.method)
			}
		})
	}
	for _, tc := range []struct{ name, frame string }{
		{"another frame type", `{"v":1,"type":"runtime.command",` + env + `,"body":{"session":"w1","id":7,"method":"evaluate","evaluate":{"expression":"1"}}}`},
		{"no body", `{"v":1,"type":"runtime.result",` + env + `}`},
		{"no id", resultFrame(`"session":"w1","method":"evaluate"`)},
		{"an id above 2^53-1", resultFrame(`"session":"w1","id":9007199254740992,"method":"evaluate"`)},
		{"a non-canonical id", resultFrame(`"session":"w1","id":07,"method":"evaluate"`)},
		{"a negative id", resultFrame(`"session":"w1","id":-7,"method":"evaluate"`)},
		{"an escaped session", resultFrame(`"session":"w\u0031","id":7,"method":"evaluate"`)},
		{"an invalid session id", resultFrame(`"session":"w 1","id":7,"method":"evaluate"`)},
		{"an unknown method", resultFrame(`"session":"w1","id":7,"method":"compileScript"`)},
		{"truncated", resultFrame(`"session":"w1","id":7,"method":"evaluate"`)[:60]},
		{"an unterminated string", resultFrame(`"session":"w1","id":7,"method":"evaluate","x":"abc`)},
		{"a body that is an array", `{"v":1,"type":"runtime.result","body":["session","w1"]}`},
		{"not an object", `[1,2]`},
		{"empty", ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if s, id, m, ok := peekResult([]byte(tc.frame)); ok {
				t.Fatalf("peekResult read %q %d %q from a frame it must give up on", s, id, m)
			}
		})
	}
}

// FuzzPeekResult: the tolerant reader never panics, and where the strict
// decoder reads a runtime.result too, both read the same correlation.
func FuzzPeekResult(f *testing.F) {
	for _, tc := range decodeCases {
		if tc.fam == famRuntime && len(tc.frame) < 64<<10 {
			f.Add([]byte(tc.frame))
		}
	}
	f.Add([]byte(resultFrame(`"x":["a\"]}",{"b":[1,{}]},-1.5e3,true,null],"session":"w1","id":0,"method":"releaseObject"`)))
	f.Add([]byte(resultFrame(`"session":"w1","id":8,"method":"evaluate","evaluate":{"result":{"type":"string","value":"` + strings.Repeat("y", 300) + `"}}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, id, m, ok := peekResult(data)
		if !ok {
			return
		}
		if !validID([]byte(s)) || id > MaxSafeInteger || m == "" {
			t.Fatalf("peekResult read an invalid correlation %q %d %q", s, id, m)
		}
		fr, err := Decode(data)
		if err != nil {
			return
		}
		if r, isResult := fr.Body.(*RuntimeResult); isResult && (r.Session != s || r.ID != id || r.Method != m) {
			t.Fatalf("peekResult read %q %d %q, Decode %q %d %q", s, id, m, r.Session, r.ID, r.Method)
		}
	})
}

// resultCatcher keeps the runtime results a registry delivers.
type resultCatcher struct {
	NopConsumer
	mu  sync.Mutex
	got []*RuntimeResult
}

func (c *resultCatcher) Response(_ SourceRef, b Body) {
	if r, ok := b.(*RuntimeResult); ok {
		c.mu.Lock()
		c.got = append(c.got, r)
		c.mu.Unlock()
	}
}

// A runtime.result Ingest refuses is still refused (the producer gets the
// reject), and the consumer hears which command it answered and why; a
// source that declared no runtime capability was sent no command, so
// nothing is delivered for it.
func TestIngestRefusedResultReachesConsumer(t *testing.T) {
	c := &resultCatcher{}
	reg := NewRegistry(c)
	src := openStreaming(t, reg, "c1", `"runtime","console"`, `"console"`)
	frame := func(gen uint64, members string) []byte {
		return fmt.Appendf(nil, `{"v":1,"type":"runtime.result","source":"c1","gen":%d,"body":{%s}}`, gen, members)
	}
	gen := src.Ref().Gen
	for _, tc := range []struct {
		members string
		code    RejectCode
		limit   string
	}{
		{`"session":"w1","id":5,"method":"evaluate","evaluate":{"result":{"type":"string","value":"` + strings.Repeat("y", MaxStringBytes+1) + `"}}`, RejectOversized, "MaxStringBytes"},
		{`"session":"w1","id":6,"method":"evaluate","evaluate":{"result":{"type":"object","value":[` + strings.Repeat(`"`+strings.Repeat("v", 60<<10)+`",`, 5) + `1]}}`, RejectOversized, "MaxValueBytes"},
		{`"session":"w1","id":7,"method":"evaluate"`, RejectMalformed, ""},
	} {
		res := src.Ingest(frame(gen, tc.members))
		var rerr *RejectError
		if !errors.As(res.Err, &rerr) || rerr.Code != tc.code || rerr.Limit != tc.limit || len(res.Replies) != 1 {
			t.Fatalf("Ingest = %v (%s), want a %s reject naming %q", res.Err, replies(res), tc.code, tc.limit)
		}
	}
	c.mu.Lock()
	got := c.got
	c.got = nil
	c.mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("%d refused results delivered, want 3", len(got))
	}
	for i, r := range got {
		if r.Session != "w1" || r.ID != uint64(5+i) || r.Method != MethodEvaluate || r.Rejected == nil || r.Evaluate != nil || r.Error != nil {
			t.Fatalf("delivered %+v", r)
		}
	}

	plain := openStreaming(t, reg, "c2", `"console"`, `"console"`)
	res := plain.Ingest(fmt.Appendf(nil, `{"v":1,"type":"runtime.result","source":"c2","gen":%d,"body":{"session":"w1","id":1,"method":"evaluate","x":"`+
		strings.Repeat("y", MaxStringBytes+1)+`"}}`, plain.Ref().Gen))
	if res.Err == nil {
		t.Fatal("refused frame accepted")
	}
	if len(c.got) != 0 {
		t.Fatalf("delivered a refused result of a source without the runtime capability: %+v", c.got[0])
	}
}
