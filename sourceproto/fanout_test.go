package sourceproto

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// callLog records calls of several consumers in one sequence.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

// tagged is a consumer that writes "name:kind" to a shared callLog.
type tagged struct {
	name string
	log  *callLog
}

func (c tagged) add(kind string) {
	c.log.mu.Lock()
	c.log.calls = append(c.log.calls, c.name+":"+kind)
	c.log.mu.Unlock()
}

func (c tagged) SourceOpened(SourceInfo)              { c.add("opened") }
func (c tagged) SourceClosed(SourceRef, CloseCode)    { c.add("closed") }
func (c tagged) Replaced(SourceRef, uint64, *Replace) { c.add("replaced") }
func (c tagged) Appended(SourceRef, uint64, *Append)  { c.add("appended") }
func (c tagged) Gap(SourceRef, Gap)                   { c.add("gap") }
func (c tagged) Response(SourceRef, Body)             { c.add("response") }

// runConversation drives one source through every kind of consumer call:
// opened, replaced, appended, gap (+ appended), response, closed.
func runConversation(t *testing.T, reg *Registry) {
	t.Helper()
	src := openStreaming(t, reg, "a", caps, topics)
	for _, f := range []string{
		appendFrame("a", 1, 1, 0, consoleItem),
		appendFrame("a", 1, 4, 2, consoleItem, consoleItem),
		`{"v":1,"type":"runtime.result","source":"a","gen":1,"body":{"session":"s1","id":1,"method":"evaluate","evaluate":{"result":{"type":"number","value":2,"description":"2"}}}}`,
	} {
		if res := src.Ingest([]byte(f)); res.Err != nil {
			t.Fatalf("%s: %v", f, res.Err)
		}
	}
	src.Close(CloseGoingAway)
}

// TestFanOut: a registry with two consumers (and a nil, left out) delivers
// every call to both, in frame order, the first consumer's call before the
// second's each time.
func TestFanOut(t *testing.T) {
	r0, r1 := &recorder{}, &recorder{}
	runConversation(t, NewRegistry(r0, nil, r1))
	ra := SourceRef{"a", 1, RoleClient}
	want := []event{
		{Kind: "opened", Ref: ra},
		{Kind: "replaced", Ref: ra},
		{Kind: "appended", Ref: ra, Seq: 1, N: 1},
		{Kind: "gap", Ref: ra, Gap: Gap{Expected: 2, Received: 4, Count: 2, Explained: 2}},
		{Kind: "appended", Ref: ra, Seq: 4, N: 2},
		{Kind: "response", Ref: ra, Type: FrameRuntimeResult},
		{Kind: "closed", Ref: ra, Code: CloseGoingAway},
	}
	for i, r := range []*recorder{r0, r1} {
		if got := r.take(); !reflect.DeepEqual(got, want) {
			t.Errorf("consumer %d saw\n %+v\nwant\n %+v", i, got, want)
		}
	}

	log := &callLog{}
	runConversation(t, NewRegistry(tagged{"first", log}, tagged{"second", log}))
	var wantCalls []string
	for _, k := range []string{"opened", "replaced", "appended", "gap", "appended", "response", "closed"} {
		wantCalls = append(wantCalls, "first:"+k, "second:"+k)
	}
	if got := strings.Join(log.calls, " "); got != strings.Join(wantCalls, " ") {
		t.Errorf("calls in order\n %s\nwant\n %s", got, strings.Join(wantCalls, " "))
	}
}

// panicky panics on Appended.
type panicky struct{ NopConsumer }

var errConsumerBroke = errors.New("consumer broke")

func (panicky) Appended(SourceRef, uint64, *Append) { panic(errConsumerBroke) }

// TestFanOutPanic: a consumer that panics does not keep the call from the
// next one; the panic then reaches the caller (the carrier, which ends the
// connection) as a *ConsumerPanic naming the consumer and its stack, and
// the source goes on working.
func TestFanOutPanic(t *testing.T) {
	rec := &recorder{}
	reg := NewRegistry(panicky{}, rec)
	src := openStreaming(t, reg, "a", caps, topics)
	var got any
	func() {
		defer func() { got = recover() }()
		src.Ingest([]byte(appendFrame("a", 1, 1, 0, consoleItem)))
	}()
	var cp *ConsumerPanic
	if err, _ := got.(error); !errors.As(err, &cp) || cp.Consumer != 0 || !errors.Is(cp, errConsumerBroke) ||
		!strings.Contains(string(cp.Stack), "panicky.Appended") {
		t.Fatalf("panic value %#v, want a *ConsumerPanic of consumer 0 with its stack", got)
	}
	src.Close(CloseGoingAway)
	ra := SourceRef{"a", 1, RoleClient}
	want := []event{
		{Kind: "opened", Ref: ra},
		{Kind: "replaced", Ref: ra},
		{Kind: "appended", Ref: ra, Seq: 1, N: 1},
		{Kind: "closed", Ref: ra, Code: CloseGoingAway},
	}
	if got := rec.take(); !reflect.DeepEqual(got, want) {
		t.Fatalf("the consumer after the panicking one saw\n %+v\nwant\n %+v", got, want)
	}

	// A single consumer is called directly: its panic is its own.
	single := NewRegistry(panicky{})
	src = openStreaming(t, single, "b", caps, topics)
	func() {
		defer func() { got = recover() }()
		src.Ingest([]byte(appendFrame("b", src.Ref().Gen, 1, 0, consoleItem)))
	}()
	if got != errConsumerBroke {
		t.Fatalf("single consumer's panic value %#v", got)
	}
}
