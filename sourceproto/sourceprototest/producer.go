// Package sourceprototest is a scripted producer for tests of carriers and
// consumers: it builds valid frames with the right generation and sequence
// numbers, and decodes what the worker sends back with Expect helpers. It
// holds no socket; tests move its frames over whatever carrier they test.
package sourceprototest

import (
	"encoding/json"
	"testing"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Producer is one source as a producer sees it. Not safe for concurrent
// use: one test goroutine plays one producer.
type Producer struct {
	ID    string
	Role  sourceproto.Role
	Token string // sent in the hello as is; empty for the host pipe
	// AckDelayMs is sent as the hello's ackDelayMs (coalesced acks).
	AckDelayMs int64

	gen     uint64 // from the welcome
	last    uint64 // last sequence number sent or dropped
	dropped uint64 // dropped since the last append, reported in the next
}

// New returns a client producer for id presenting token.
func New(id string, token string) *Producer {
	return &Producer{ID: id, Role: sourceproto.RoleClient, Token: token}
}

// Gen returns the generation the worker assigned (0 before Welcomed).
func (p *Producer) Gen() uint64 { return p.gen }

// Hello builds the hello frame.
func (p *Producer) Hello(t testing.TB, caps sourceproto.Capability, topics sourceproto.Topic) []byte {
	t.Helper()
	return p.marshal(t, sourceproto.Header{Source: p.ID}, &sourceproto.Hello{
		Role: p.Role, Token: sourceproto.Secret(p.Token), Capabilities: caps, Topics: topics,
		Agent: sourceproto.Agent{Name: "sourceprototest", Version: "0"}, AckDelayMs: p.AckDelayMs,
	})
}

// Welcomed reads the worker's answer to the hello and adopts its
// generation; it fails the test on anything but a welcome.
func (p *Producer) Welcomed(t testing.TB, frame []byte) *sourceproto.Welcome {
	t.Helper()
	f := Expect(t, frame, sourceproto.FrameWelcome)
	p.gen, p.last, p.dropped = f.Gen, 0, 0
	return f.Body.(*sourceproto.Welcome)
}

// Replace builds a replace covering everything sent so far.
func (p *Producer) Replace(t testing.TB, reason sourceproto.ReplaceReason, items ...sourceproto.Item) []byte {
	t.Helper()
	p.dropped = 0
	return p.marshal(t, p.header(p.last), &sourceproto.Replace{Reason: reason, Items: items})
}

// Drop makes the next n sequence numbers vanish, as a producer queue
// overflow does; the next Append reports them as dropped (explained).
func (p *Producer) Drop(n uint64) { p.last += n; p.dropped += n }

// Lose makes the next n sequence numbers vanish without reporting them:
// an unexplained gap.
func (p *Producer) Lose(n uint64) { p.last += n }

// Append builds the next append batch.
func (p *Producer) Append(t testing.TB, items ...sourceproto.Item) []byte {
	t.Helper()
	first := p.last + 1
	p.last += uint64(len(items))
	a := &sourceproto.Append{Dropped: p.dropped, Items: items}
	p.dropped = 0
	return p.marshal(t, p.header(first), a)
}

// Frame builds any other producer → worker frame (runtime.result,
// script.*, query.result, close) stamped with the current generation.
func (p *Producer) Frame(t testing.TB, b sourceproto.Body) []byte {
	t.Helper()
	return p.marshal(t, p.header(0), b)
}

func (p *Producer) header(seq uint64) sourceproto.Header {
	return sourceproto.Header{Source: p.ID, Gen: p.gen, Seq: seq}
}

func (p *Producer) marshal(t testing.TB, h sourceproto.Header, b sourceproto.Body) []byte {
	t.Helper()
	out, err := sourceproto.Marshal(h, b)
	if err != nil {
		t.Fatalf("sourceprototest: marshal %s: %v", b.FrameType(), err)
	}
	return out
}

// Console wraps a console event as an item.
func Console(ev *sourceproto.ConsoleEvent) sourceproto.Item {
	return sourceproto.Item{Topic: sourceproto.TopicConsole, Console: ev}
}

// Log is a console.log of string arguments at timestamp 1.
func Log(args ...string) sourceproto.Item {
	ev := &sourceproto.ConsoleEvent{Type: sourceproto.ConsoleLog, Timestamp: 1, Args: []sourceproto.RemoteObject{}}
	for _, a := range args {
		ev.Args = append(ev.Args, sourceproto.RemoteObject{Type: sourceproto.TypeString, Value: quote(a)})
	}
	return Console(ev)
}

func quote(s string) sourceproto.RawJSON {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// Expect decodes a frame from the worker and fails the test unless it is
// valid and of type want.
func Expect(t testing.TB, frame []byte, want sourceproto.FrameType) sourceproto.Frame {
	t.Helper()
	f, err := sourceproto.Decode(frame)
	if err != nil {
		t.Fatalf("sourceprototest: %v in %s", err, frame)
	}
	if f.Type != want {
		t.Fatalf("sourceprototest: got %s, want %s: %s", f.Type, want, frame)
	}
	return f
}

// ExpectAck expects an ack of seq and returns its dropped count.
func ExpectAck(t testing.TB, frame []byte, seq uint64) uint64 {
	t.Helper()
	f := Expect(t, frame, sourceproto.FrameAck)
	if f.Seq != seq {
		t.Fatalf("sourceprototest: ack of %d, want %d: %s", f.Seq, seq, frame)
	}
	return f.Body.(*sourceproto.Ack).Dropped
}

// ExpectReject expects a reject with code and returns it.
func ExpectReject(t testing.TB, frame []byte, code sourceproto.RejectCode) *sourceproto.Reject {
	t.Helper()
	r := Expect(t, frame, sourceproto.FrameReject).Body.(*sourceproto.Reject)
	if r.Code != code {
		t.Fatalf("sourceprototest: reject %s, want %s: %s", r.Code, code, frame)
	}
	return r
}
