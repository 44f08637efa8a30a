package sourceproto

import (
	"errors"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// reentrantWatchdog bounds a scenario that takes microseconds; a
// consumer calling back into the registry under the source's lock hangs
// for ever instead.
const reentrantWatchdog = 10 * time.Second

// closingOutbox is a carrier whose queue is full: like the real ones, it
// ends the connection, closing the source, on the sender's goroutine.
type closingOutbox struct{ src *Source }

func (o *closingOutbox) Enqueue([]byte) error {
	o.src.Close(ClosePolicy)
	return errFull
}

// reentrant calls back into the registry from its callbacks: Lookup and
// Sources from SourceOpened, Send from the first Appended (to a full
// outbox, which closes the source: Source.Close inside the callback), and
// Send again from SourceClosed.
type reentrant struct {
	recorder
	reg     *Registry
	appends int
	sendErr error
	found   bool
}

func (c *reentrant) SourceOpened(i SourceInfo) {
	_, c.found = c.reg.Lookup(i.Ref.ID)
	_ = c.reg.Sources()
	c.recorder.SourceOpened(i)
}

func (c *reentrant) Appended(ref SourceRef, seq uint64, a *Append) {
	c.recorder.Appended(ref, seq, a)
	c.appends++
	if c.appends == 1 {
		c.sendErr = c.reg.Send(ref, &ConsoleEnable{Session: "s1"})
	}
}

func (c *reentrant) SourceClosed(ref SourceRef, code CloseCode) {
	c.recorder.SourceClosed(ref, code)
	_ = c.reg.Send(ref, &ConsoleEnable{Session: "s1"}) // gone: an error, not a hang
}

// TestConsumerCallsBackIntoRegistry: a consumer may call Send, Lookup,
// Sources and Close about the source it is called about; what that causes
// (SourceClosed) is delivered after the call that caused it, in order.
// Before consumers ran outside Source.mu this hung in the first Send.
func TestConsumerCallsBackIntoRegistry(t *testing.T) {
	c := &reentrant{}
	c.reg = NewRegistry(c)
	out := &closingOutbox{}
	done := make(chan []event, 1)
	go func() {
		src, res := c.reg.Open([]byte(helloFrame("a", `"console"`, topics)),
			OpenOptions{Role: RoleClient, Token: testToken, Outbox: out})
		if src == nil {
			t.Errorf("open: %v", res.Err)
			done <- nil
			return
		}
		out.src = src
		ref := src.Ref()
		src.Ingest([]byte(replaceFrame("a", ref.Gen, 0, "initial")))
		src.Ingest([]byte(appendFrame("a", ref.Gen, 1, 0, consoleItem)))
		// Closed by the full outbox: this frame is refused, not delivered.
		src.Ingest([]byte(appendFrame("a", ref.Gen, 2, 0, consoleItem)))
		src.Close(CloseGoingAway) // idempotent
		done <- c.take()
	}()
	var got []event
	select {
	case got = <-done:
	case <-time.After(reentrantWatchdog):
		buf := make([]byte, 1<<16)
		t.Fatalf("a consumer calling back into the registry deadlocked (%s); goroutines:\n%s",
			reentrantWatchdog, buf[:runtime.Stack(buf, true)])
	}
	if !c.found {
		t.Errorf("Lookup from SourceOpened did not find the source")
	}
	if !errors.Is(c.sendErr, errFull) {
		t.Errorf("Send to a full outbox: %v, want %v", c.sendErr, errFull)
	}
	ref := SourceRef{"a", 1, RoleClient}
	want := []event{{Kind: "opened", Ref: ref}, {Kind: "replaced", Ref: ref},
		{Kind: "appended", Ref: ref, Seq: 1, N: 1}, {Kind: "closed", Ref: ref, Code: ClosePolicy}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %+v\nwant %+v", got, want)
	}
}

// holdFirstAppend blocks in its first Appended until release is closed.
type holdFirstAppend struct {
	recorder
	entered chan struct{}
	release chan struct{}
	held    bool
}

func (c *holdFirstAppend) Appended(ref SourceRef, seq uint64, a *Append) {
	if !c.held {
		c.held = true
		close(c.entered)
		<-c.release
	}
	c.recorder.Appended(ref, seq, a)
}

// TestIngestWaitsForItsCalls: an Ingest whose calls another goroutine is
// delivering returns only once they were made, so a read loop stays held
// back by its consumers (the bound on the lane) and the consumers have the
// frame when Ingest returns.
func TestIngestWaitsForItsCalls(t *testing.T) {
	c := &holdFirstAppend{entered: make(chan struct{}), release: make(chan struct{})}
	reg := NewRegistry(c)
	src := openStreaming(t, reg, "a", caps, topics)
	gen := src.Ref().Gen
	go src.Ingest([]byte(appendFrame("a", gen, 1, 0, consoleItem)))
	<-c.entered // that goroutine now delivers the lane, held in Appended(1)
	seen := make(chan []event, 1)
	go func() {
		src.Ingest([]byte(appendFrame("a", gen, 2, 0, consoleItem)))
		seen <- c.take()
	}()
	deadline := time.Now().Add(reentrantWatchdog)
	for src.lane.mark() < 4 { // opened, replaced, appended 1, appended 2
		if time.Now().After(deadline) {
			t.Fatal("the second Ingest never queued its call")
		}
		time.Sleep(time.Millisecond)
	}
	close(c.release)
	got := <-seen
	if n := len(got); n == 0 || got[n-1].Kind != "appended" || got[n-1].Seq != 2 {
		t.Fatalf("when the second Ingest returned the consumer had %+v, want appended 2 last", got)
	}
}
