package sourceproto

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

const caps, topics = `"runtime","console"`, `"console","page"`

type isolationCase struct {
	name string
	// bad returns the frame to send to source a (gen 1).
	bad       func(t *testing.T, reg *Registry, a *Source) []byte
	want      []string
	wantClose bool
	aFlows    bool
}

// isolationCases: for each kind of bad input, the exact reply frames.
var isolationCases = []isolationCase{{
	name:   "malformed",
	bad:    func(*testing.T, *Registry, *Source) []byte { return []byte(`{"v":1,"type":"append","source":"a",`) },
	want:   []string{`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"malformed","reason":"JSON syntax error"}}`},
	aFlows: true,
}, {
	name: "malformed body",
	bad: func(*testing.T, *Registry, *Source) []byte {
		return []byte(`{"v":1,"type":"append","source":"a","gen":1,"seq":1,"body":{"items":[{"console":{"type":"log","args":"x","timestamp":1}}]}}`)
	},
	want:   []string{`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"malformed","reason":"body does not match its schema","refType":"append","refSeq":1}}`},
	aFlows: true,
}, {
	name: "oversized",
	bad: func(*testing.T, *Registry, *Source) []byte {
		return []byte(appendFrame("a", 1, 1, 0, `{"page":{"url":"`+strings.Repeat("x", MaxFrameBytes)+`","title":""}}`))
	},
	want:   []string{`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"oversized","reason":"over MaxFrameBytes","limit":"MaxFrameBytes","max":1048576}}`},
	aFlows: true,
}, {
	name: "wrong version",
	bad: func(*testing.T, *Registry, *Source) []byte {
		return []byte(`{"v":2,"type":"append","source":"a","gen":1,"seq":1,"body":{"items":[` + consoleItem + `]}}`)
	},
	want:   []string{`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"unsupported-version","reason":"this worker speaks version 1"}}`},
	aFlows: true,
}, {
	name: "stale generation on a superseded connection",
	bad: func(t *testing.T, reg *Registry, a *Source) []byte {
		// a reconnects: a new hello for "a" makes generation 3.
		openStreaming(t, reg, "a", caps, topics)
		return []byte(appendFrame("a", 1, 1, 0, consoleItem))
	},
	want:      []string{`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"stale-generation","reason":"this generation was replaced"}}`},
	wantClose: true,
}, {
	name: "undeclared topic",
	bad: func(*testing.T, *Registry, *Source) []byte {
		return []byte(appendFrame("a", 1, 1, 0, consoleItem, `{"fetch":{"id":"f","phase":"failed","timestamp":1,"failed":{"message":"x"}}}`))
	},
	want:   []string{`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"undeclared-topic","reason":"item topic not declared in hello","refType":"append","refSeq":1}}`},
	aFlows: true,
}, {
	name: "undeclared capability",
	bad: func(*testing.T, *Registry, *Source) []byte {
		return []byte(`{"v":1,"type":"query.result","source":"a","gen":1,"body":{"id":1,"name":"q","result":1}}`)
	},
	want:   []string{`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"undeclared-capability","reason":"capability not declared in hello","refType":"query.result"}}`},
	aFlows: true,
}}

// TestRejectIsolation is the acceptance table: for each kind of bad input
// the exact reply frames, and a second healthy source on the same registry
// keeps flowing (as does the bad source itself, unless the reply closed it).
func TestRejectIsolation(t *testing.T) {
	cases := isolationCases
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			reg := NewRegistry(rec)
			a := openStreaming(t, reg, "a", caps, topics)
			b := openStreaming(t, reg, "b", caps, topics)
			rec.take()
			res := a.Ingest(tc.bad(t, reg, a))
			expectReplies(t, res, tc.want...)
			if res.Close != tc.wantClose || res.Err == nil {
				t.Fatalf("Close = %v, Err = %v", res.Close, res.Err)
			}
			for _, e := range rec.take() {
				if e.Ref.ID == "a" && e.Ref.Gen == 1 && e.Kind != "closed" {
					t.Fatalf("refused frame reached the consumer: %+v", e)
				}
			}
			expectFlowing(t, b, 1)
			expectFlowing(t, b, 2)
			if tc.aFlows {
				expectFlowing(t, a, 1)
			}
			if got := b.Stats(); got.Rejects != 0 || got.Items != 2 {
				t.Fatalf("healthy source stats %+v", got)
			}
		})
	}
}

// TestSequenceGap: an unexplained gap is acked, counted, reported to the
// consumer and answered with one snapshot request; an explained gap costs
// no snapshot; the replace clears the request. Source b is untouched.
func TestSequenceGap(t *testing.T) {
	rec := &recorder{}
	reg := NewRegistry(rec)
	a := openStreaming(t, reg, "a", caps, topics)
	b := openStreaming(t, reg, "b", caps, topics)
	rec.take()

	expectFlowing(t, a, 1)
	res := a.Ingest([]byte(appendFrame("a", 1, 6, 0, consoleItem, consoleItem))) // 2..5 missing
	expectReplies(t, res,
		`{"v":1,"type":"ack","source":"a","gen":1,"seq":7,"body":{"dropped":4}}`,
		`{"v":1,"type":"snapshot-request","source":"a","gen":1,"body":{"expected":2,"received":6,"missing":4}}`)
	expectFlowing(t, b, 1)

	// A second unexplained gap while a snapshot is outstanding: counted,
	// no second request.
	expectReplies(t, a.Ingest([]byte(appendFrame("a", 1, 9, 0, consoleItem))),
		`{"v":1,"type":"ack","source":"a","gen":1,"seq":9,"body":{"dropped":1}}`)
	// The snapshot arrives (covering up to 9), then an explained gap.
	expectReplies(t, a.Ingest([]byte(replaceFrame("a", 1, 9, "requested"))),
		`{"v":1,"type":"ack","source":"a","gen":1,"seq":9,"body":{}}`)
	expectReplies(t, a.Ingest([]byte(appendFrame("a", 1, 13, 3, consoleItem))),
		`{"v":1,"type":"ack","source":"a","gen":1,"seq":13,"body":{"dropped":3}}`)

	ra, rb := SourceRef{"a", 1, RoleClient}, SourceRef{"b", 2, RoleClient}
	want := []event{
		{Kind: "appended", Ref: ra, Seq: 1, N: 1},
		{Kind: "gap", Ref: ra, Gap: Gap{Expected: 2, Received: 6, Count: 4, SnapshotRequested: true}},
		{Kind: "appended", Ref: ra, Seq: 6, N: 2},
		{Kind: "appended", Ref: rb, Seq: 1, N: 1},
		{Kind: "gap", Ref: ra, Gap: Gap{Expected: 8, Received: 9, Count: 1}},
		{Kind: "appended", Ref: ra, Seq: 9, N: 1},
		{Kind: "replaced", Ref: ra, Seq: 9},
		{Kind: "gap", Ref: ra, Gap: Gap{Expected: 10, Received: 13, Count: 3, Explained: 3}},
		{Kind: "appended", Ref: ra, Seq: 13, N: 1},
	}
	if got := rec.take(); !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %+v\nwant %+v", got, want)
	}
	wantStats := SourceStats{Frames: 6, Items: 5, Gaps: 3, Missing: 8, Unexplained: 5, SnapshotRequests: 1}
	if got := a.Stats(); got != wantStats {
		t.Fatalf("stats %+v, want %+v", got, wantStats)
	}
}

// TestConversation walks the state machine's other edges, one frame at a
// time, with the exact answer to each.
func TestConversation(t *testing.T) {
	rec := &recorder{}
	reg := NewRegistry(rec)
	src, res := reg.Open([]byte(helloFrame("a", caps, topics)), OpenOptions{Role: RoleClient, Token: testToken})
	expectReplies(t, res, `{"v":1,"type":"welcome","source":"a","gen":1,"body":{"capabilities":["runtime","console"],"topics":["console","page"],"limits":{"maxFrameBytes":1048576,"maxBatchItems":512,"maxStringBytes":65536,"maxChunkBytes":49152,"maxValueBytes":262144}}}`)
	steps := []struct {
		in, out string
		close   bool
	}{
		{appendFrame("a", 1, 1, 0, consoleItem),
			`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"unexpected-frame","reason":"append before the initial replace","refType":"append","refSeq":1}}`, false},
		{replaceFrame("a", 1, 0, "requested"),
			`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"unexpected-frame","reason":"reason initial is for the first replace only","refType":"replace"}}`, false},
		{`{"v":1,"type":"runtime.result","source":"a","gen":1,"body":{"session":"s1","id":1,"method":"evaluate","evaluate":{"result":{"type":"number","value":2,"description":"2"}}}}`, ``, false},
		{replaceFrame("a", 1, 0, "initial"), `{"v":1,"type":"ack","source":"a","gen":1,"seq":0,"body":{}}`, false},
		{replaceFrame("a", 1, 0, "initial"),
			`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"unexpected-frame","reason":"reason initial is for the first replace only","refType":"replace"}}`, false},
		{appendFrame("a", 1, 1, 0, consoleItem), `{"v":1,"type":"ack","source":"a","gen":1,"seq":1,"body":{}}`, false},
		{appendFrame("a", 1, 1, 0, consoleItem),
			`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"sequence-regression","reason":"seq already consumed","refType":"append","refSeq":1}}`, false},
		// 2 dropped claimed for a gap of 1: malformed, not acked.
		{appendFrame("a", 1, 3, 2, consoleItem),
			`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"malformed","reason":"dropped exceeds the sequence gap","refType":"append","refSeq":3}}`, false},
	}
	more := []struct {
		in, out string
		close   bool
	}{
		{appendFrame("b", 1, 2, 0, consoleItem),
			`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"source-mismatch","reason":"one source per connection","refType":"append","refSeq":2}}`, false},
		{appendFrame("a", 7, 2, 0, consoleItem),
			`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"unknown-generation","reason":"generation not assigned to this source","refType":"append","refSeq":2}}`, false},
		{`{"v":1,"type":"ack","source":"a","gen":1,"seq":1,"body":{}}`,
			`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"wrong-direction","reason":"a worker-to-producer frame type","refType":"ack","refSeq":1}}`, false},
		{helloFrame("a", caps, topics),
			`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"unexpected-frame","reason":"hello on an open source; reconnect for a new generation","refType":"hello"}}`, false},
		{`{"v":1,"type":"script.end","source":"a","gen":1,"body":{"id":1,"length":0}}`,
			`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"undeclared-capability","reason":"capability not declared in hello","refType":"script.end"}}`, false},
		{`{"v":1,"type":"shout","source":"a","gen":1,"body":{}}`,
			`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"unknown-type","reason":"no such frame type"}}`, false},
		{`{"v":1,"type":"close","source":"a","gen":1,"body":{"code":"going-away"}}`, ``, true},
		{appendFrame("a", 1, 2, 0, consoleItem),
			`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"closed","reason":"source closed"}}`, true},
	}
	for i, st := range append(steps, more...) {
		res := src.Ingest([]byte(st.in))
		var want []string
		if st.out != "" {
			want = []string{st.out}
		}
		expectReplies(t, res, want...)
		if res.Close != st.close {
			t.Fatalf("step %d: Close = %v", i, res.Close)
		}
	}
	ra := SourceRef{"a", 1, RoleClient}
	want := []event{
		{Kind: "opened", Ref: ra},
		{Kind: "response", Ref: ra, Type: FrameRuntimeResult},
		{Kind: "replaced", Ref: ra},
		{Kind: "appended", Ref: ra, Seq: 1, N: 1},
		{Kind: "closed", Ref: ra, Code: CloseGoingAway},
	}
	if got := rec.take(); !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %+v\nwant %+v", got, want)
	}
	if _, ok := reg.Lookup("a"); ok {
		t.Fatal("closed source still live")
	}
}

func TestOpenRefused(t *testing.T) {
	tok, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	good := strings.Replace(helloFrame("c", "", topics), `"tok"`, `"`+tok.Reveal()+`"`, 1)
	cases := []struct {
		name  string
		frame string
		opts  OpenOptions
		want  string
	}{
		{"wrong token", helloFrame("c", "", topics), OpenOptions{Role: RoleClient, Token: tok},
			`{"v":1,"type":"reject","source":"c","body":{"code":"unauthorized","reason":"role not granted or token refused","refType":"hello"}}`},
		{"role not granted", good, OpenOptions{Role: RoleHost, Token: tok},
			`{"v":1,"type":"reject","source":"c","body":{"code":"unauthorized","reason":"role not granted or token refused","refType":"hello"}}`},
		{"not a hello", replaceFrame("c", 1, 0, "initial"), OpenOptions{Role: RoleClient, Token: testToken},
			`{"v":1,"type":"reject","source":"c","body":{"code":"unexpected-frame","reason":"the first frame must be hello","refType":"replace"}}`},
		{"garbage", `hello`, OpenOptions{Role: RoleClient, Token: testToken},
			`{"v":1,"type":"reject","body":{"code":"malformed","reason":"frame is not a JSON object"}}`},
		{"undeclared topic name", helloFrame("c", "", `"console","tweets"`), OpenOptions{Role: RoleClient, Token: testToken},
			`{"v":1,"type":"reject","source":"c","body":{"code":"malformed","reason":"value outside its closed set","refType":"hello"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			src, res := NewRegistry(rec).Open([]byte(tc.frame), tc.opts)
			if src != nil || !res.Close {
				t.Fatalf("opened: %v %v", src, res.Close)
			}
			expectReplies(t, res, tc.want)
			if ev := rec.take(); len(ev) != 0 {
				t.Fatalf("consumer heard %+v", ev)
			}
		})
	}
	src, res := NewRegistry(nil).Open([]byte(good), OpenOptions{Role: RoleClient, Token: tok})
	if src == nil {
		t.Fatalf("good token refused: %v", res.Err)
	}
}

func TestOverCapacity(t *testing.T) {
	reg := NewRegistry(nil)
	for i := 0; i < MaxSources; i++ {
		openStreaming(t, reg, fmt.Sprintf("s%d", i), "", topics)
	}
	_, res := reg.Open([]byte(helloFrame("one-more", "", topics)), OpenOptions{Role: RoleClient, Token: testToken})
	expectReplies(t, res, `{"v":1,"type":"reject","source":"one-more","body":{"code":"over-capacity","reason":"too many sources","refType":"hello"}}`)
	// A reconnect of a live id is still admitted: it replaces, not adds.
	if src, res := reg.Open([]byte(helloFrame("s0", "", topics)), OpenOptions{Role: RoleClient, Token: testToken}); src == nil {
		t.Fatalf("reconnect refused: %v", res.Err)
	}
}

func TestTooManyRejectsCloses(t *testing.T) {
	rec := &recorder{}
	reg := NewRegistry(rec)
	a := openStreaming(t, reg, "a", "", topics)
	b := openStreaming(t, reg, "b", "", topics)
	var res Result
	for i := 0; i < MaxConsecutiveRejects; i++ {
		res = a.Ingest([]byte("x"))
	}
	expectReplies(t, res,
		`{"v":1,"type":"reject","source":"a","gen":1,"body":{"code":"malformed","reason":"frame is not a JSON object"}}`,
		`{"v":1,"type":"close","source":"a","gen":1,"body":{"code":"policy-violation","reason":"too many rejected frames"}}`)
	if !res.Close {
		t.Fatal("not closed")
	}
	expectFlowing(t, b, 1)
}

func TestSupersede(t *testing.T) {
	rec := &recorder{}
	reg := NewRegistry(rec)
	superseded := 0
	a1, _ := reg.Open([]byte(helloFrame("a", caps, topics)), OpenOptions{Role: RoleClient, Token: testToken, OnSuperseded: func() { superseded++ }})
	a2 := openStreaming(t, reg, "a", caps, topics)
	if superseded != 1 || a2.Ref().Gen != 2 {
		t.Fatalf("superseded %d, gen %d", superseded, a2.Ref().Gen)
	}
	// A frame stamped with the old generation on the new connection.
	expectReplies(t, a2.Ingest([]byte(appendFrame("a", 1, 1, 0, consoleItem))),
		`{"v":1,"type":"reject","source":"a","gen":2,"body":{"code":"stale-generation","reason":"generation was replaced","refType":"append","refSeq":1}}`)
	a1.Close(CloseGoingAway) // the old carrier noticing late changes nothing
	if info, ok := reg.Lookup("a"); !ok || info.Ref.Gen != 2 {
		t.Fatalf("lookup %+v %v", info, ok)
	}
	r1, r2 := SourceRef{"a", 1, RoleClient}, SourceRef{"a", 2, RoleClient}
	want := []event{{Kind: "opened", Ref: r1}, {Kind: "closed", Ref: r1, Code: CloseReplaced},
		{Kind: "opened", Ref: r2}, {Kind: "replaced", Ref: r2}}
	if got := rec.take(); !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %+v\nwant %+v", got, want)
	}
}

type outbox struct {
	mu     sync.Mutex
	frames []string
	full   bool
}

var errFull = errors.New("full")

func (o *outbox) Enqueue(f []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.full {
		return errFull
	}
	o.frames = append(o.frames, string(f))
	return nil
}

func TestSend(t *testing.T) {
	reg := NewRegistry(nil)
	out := &outbox{}
	src, _ := reg.Open([]byte(helloFrame("a", `"console"`, topics)), OpenOptions{Role: RoleClient, Token: testToken, Outbox: out})
	ref := src.Ref()
	cmd := &RuntimeCommand{Session: "s1", ID: 1, Method: MethodEvaluate, Evaluate: &EvaluateParams{Expression: "1"}}
	checks := []struct {
		ref  SourceRef
		body Body
		want error
	}{
		{ref, &ConsoleEnable{Session: "s1"}, nil},
		{ref, cmd, ErrUndeclaredCapability},
		{SourceRef{ID: "a", Gen: 9}, &ConsoleEnable{Session: "s1"}, ErrUnknownGeneration},
		{SourceRef{ID: "zz", Gen: 1}, &ConsoleEnable{Session: "s1"}, ErrUnknownSource},
		{ref, &Append{}, ErrWrongDirection},
		{ref, &Ack{}, ErrUnexpectedFrame},
		{ref, &ConsoleEnable{Session: "bad id"}, ErrMalformed},
	}
	for i, c := range checks {
		if err := reg.Send(c.ref, c.body); !errors.Is(err, c.want) && !(err == nil && c.want == nil) {
			t.Fatalf("check %d: err %v, want %v", i, err, c.want)
		}
	}
	want := []string{`{"v":1,"type":"console.enable","source":"a","gen":1,"body":{"session":"s1"}}`}
	if !reflect.DeepEqual(out.frames, want) {
		t.Fatalf("outbox %q", out.frames)
	}
	out.full = true
	if err := reg.Send(ref, &ConsoleDisable{Session: "s1"}); !errors.Is(err, errFull) {
		t.Fatalf("full outbox: %v", err)
	}
	openStreaming(t, reg, "a", caps, topics)
	if err := reg.Send(ref, &ConsoleEnable{Session: "s1"}); !errors.Is(err, ErrStaleGeneration) {
		t.Fatalf("stale: %v", err)
	}
}

// TestConcurrentSources runs one goroutine per source, with reconnects
// racing appends; -race checks the locking, the assertions check that
// every source's consumer calls stay ordered and complete.
func TestConcurrentSources(t *testing.T) {
	rec := &orderChecker{last: map[SourceRef]uint64{}, closed: map[SourceRef]bool{}}
	reg := NewRegistry(rec)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			id := fmt.Sprintf("s%d", w%4) // two workers share each id: supersession races
			for round := 0; round < 20; round++ {
				src, _ := reg.Open([]byte(helloFrame(id, caps, topics)), OpenOptions{Role: RoleClient, Token: testToken})
				ref := src.Ref()
				src.Ingest([]byte(replaceFrame(id, ref.Gen, 0, "initial")))
				for seq := uint64(1); seq <= 10; seq++ {
					if r := src.Ingest([]byte(appendFrame(id, ref.Gen, seq, 0, consoleItem))); r.Close {
						break
					}
				}
				src.Close(CloseGoingAway)
			}
		}(w)
	}
	wg.Wait()
	if err := rec.err(); err != nil {
		t.Fatal(err)
	}
	if n := len(reg.Sources()); n != 0 {
		t.Fatalf("%d sources left", n)
	}
}

type orderChecker struct {
	NopConsumer
	mu     sync.Mutex
	last   map[SourceRef]uint64
	closed map[SourceRef]bool
	bad    []string
}

func (o *orderChecker) SourceOpened(i SourceInfo) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.last[i.Ref] = 0
}

func (o *orderChecker) Appended(ref SourceRef, seq uint64, a *Append) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if last, ok := o.last[ref]; !ok || o.closed[ref] || seq != last+1 {
		o.bad = append(o.bad, fmt.Sprintf("%v: append %d after %d (opened %v, closed %v)", ref, seq, last, ok, o.closed[ref]))
	}
	o.last[ref] = seq + uint64(len(a.Items)) - 1
}

func (o *orderChecker) SourceClosed(ref SourceRef, _ CloseCode) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.last[ref]; !ok || o.closed[ref] {
		o.bad = append(o.bad, fmt.Sprintf("%v: closed twice or before open", ref))
	}
	o.closed[ref] = true
}

func (o *orderChecker) err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for ref := range o.last {
		if !o.closed[ref] {
			o.bad = append(o.bad, fmt.Sprintf("%v never closed", ref))
		}
	}
	if len(o.bad) > 0 {
		return errors.New(strings.Join(o.bad, "\n"))
	}
	return nil
}

func TestAckFrameMatchesMarshal(t *testing.T) {
	src := openStreaming(t, NewRegistry(nil), "a-b.c:d_e", "", topics)
	for _, c := range [][2]uint64{{0, 0}, {1, 0}, {MaxSafeInteger, 3}} {
		want := mustMarshal(src.header(c[0]), &Ack{Dropped: c[1]})
		if got := src.ackFrame(c[0], c[1]); string(got) != string(want) {
			t.Fatalf("ackFrame %s, Marshal %s", got, want)
		}
	}
}

func TestClientCannotReplaceHost(t *testing.T) {
	rec := &recorder{}
	reg := NewRegistry(rec)
	host := strings.Replace(strings.Replace(helloFrame("host", "", `"fetch"`), `"role":"client"`, `"role":"host"`, 1), `"token":"tok",`, "", 1)
	h, res := reg.Open([]byte(host), OpenOptions{Role: RoleHost})
	if h == nil {
		t.Fatalf("host refused: %v", res.Err)
	}
	src, res := reg.Open([]byte(helloFrame("host", "", topics)), OpenOptions{Role: RoleClient, Token: testToken})
	if src != nil {
		t.Fatal("a client replaced the host")
	}
	expectReplies(t, res, `{"v":1,"type":"reject","source":"host","body":{"code":"unauthorized","reason":"role not granted or token refused","refType":"hello"}}`)
	if info, _ := reg.Lookup("host"); info.Ref != h.Ref() {
		t.Fatalf("host replaced: %+v", info)
	}
}

func TestClientOpenNeedsToken(t *testing.T) {
	_, res := NewRegistry(nil).Open([]byte(helloFrame("c", "", topics)), OpenOptions{Role: RoleClient})
	expectReplies(t, res, `{"v":1,"type":"reject","source":"c","body":{"code":"unauthorized","reason":"role not granted or token refused","refType":"hello"}}`)
}
