package sourceproto

import (
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mailru/easyjson/jlexer"
)

// Registry owns the per-source state of every live source: the generation
// counter, the id → source map, and through each Source its sequence
// state. It owns no sockets and no goroutines: each carrier connection
// calls Open once and then Ingest from its own read loop, and any
// goroutine may call Send. docs/protocol.md, "State machine", is the spec.
type Registry struct {
	consumer Consumer // Static after construction: the one consumer, or a fanout.
	nextGen  atomic.Uint64

	mu   sync.Mutex         // Lock order: see docs/locks.md.
	live map[string]*Source // Guarded by mu. Only open, current generations.
}

// NewRegistry returns an empty registry delivering every accepted frame to
// each of consumers (nil ones are left out; with none, frames are only
// acked). Consumers are fixed for the registry's life.
//
// With several consumers each call goes to all of them in the order given,
// one after another, on the goroutine that delivers the source's calls
// (deliver.go), outside the registry's locks: every consumer sees a
// source's calls in the same order, and a consumer sees a call only after
// the consumers before it returned from it. So a slow consumer delays the
// others and the source's read loop (Consumer's rule: never block). A
// consumer that panics does not keep the call from the others; the first
// panic is then raised again as a *ConsumerPanic, and the carrier ends
// that source's connection as it does for a single consumer's panic. The
// arguments are shared by all consumers (see Consumer: read-only).
func NewRegistry(consumers ...Consumer) *Registry {
	var cs fanout
	for _, c := range consumers {
		if c != nil {
			cs = append(cs, c)
		}
	}
	var c Consumer = cs
	switch len(cs) {
	case 0:
		c = NopConsumer{}
	case 1:
		c = cs[0] // no fan-out cost on the ingest path, and the panic stays the consumer's own
	}
	return &Registry{consumer: c, live: make(map[string]*Source)}
}

// OpenOptions is what a carrier grants a connection.
type OpenOptions struct {
	// Role the carrier grants; the hello must claim it. Required.
	Role Role
	// Token must equal the hello's token (constant-time). Required for
	// RoleClient (a client open without one is refused); the host pipe
	// leaves it zero, the inherited pipe being the credential.
	Token Token
	// ID, when set, is the one source id the carrier grants (a child
	// process's channel: "child-<pid>"); a hello claiming another id is
	// refused, so a child cannot replace the host or another child.
	ID string
	// Outbox receives frames sent with Registry.Send; nil means the
	// source can only be answered through Ingest results.
	Outbox Outbox
	// OnSuperseded is called once, outside all locks, when a newer hello
	// for the same id replaced this generation; the carrier should send
	// Close{Code: CloseReplaced} and end the connection.
	OnSuperseded func()
	// CoalesceAcks: the carrier arms a timer for Result.AckAfter and then
	// calls Source.FlushAck, so a hello's ackDelayMs is honoured. Without
	// it every append is acked at once, whatever the hello asked.
	CoalesceAcks bool
}

// Source is one open generation of one source, bound to one carrier
// connection. Ingest and Close are meant for that connection's read loop;
// they are also safe from other goroutines (a per-source mutex serializes
// them with supersession), but frames must be fed in arrival order.
// Consumers are called after s.mu is released (deliver.go).
type Source struct {
	reg          *Registry   // Static after construction.
	info         SourceInfo  // Static after construction.
	outbox       Outbox      // Static after construction.
	onSuperseded func()      // Static after construction.
	lane         *lane       // Set by Registry.insert, then static: the consumer calls' queue.
	appBusy      atomic.Bool // s.app waits for or is in its consumer call (deliver.go).

	// mu guards everything below; the calls it decides are queued on the
	// lane under it and made after it is released. Lock order: see
	// docs/locks.md.
	mu        sync.Mutex
	state     sourceState
	closeCode CloseCode
	next      uint64        // next expected item sequence number
	snapPend  bool          // a snapshot-request is outstanding
	rejects   int           // consecutive rejects
	app       Append        // reused for every append batch
	lex       jlexer.Lexer  // reused for every body
	ackPrefix []byte        // `{"v":1,"type":"ack","source":…,"gen":…,"seq":`; static after Open
	ackDelay  time.Duration // coalesced acks (Hello.AckDelayMs); 0 = one ack per append; static after Open
	ackFrames int           // appends accepted and not yet acked (coalesced acks only)
	ackSeq    uint64        // the last item seq of those appends
	stats     SourceStats
}

type sourceState uint8

const (
	stateAwaitReplace sourceState = iota // after welcome: only the initial replace, close or responses
	stateStreaming                       // appends flow
	stateClosed
)

// Ref returns the source's identity.
func (s *Source) Ref() SourceRef { return s.info.Ref }

// Info returns what the hello declared.
func (s *Source) Info() SourceInfo { return s.info }

// Stats returns the source's counters.
func (s *Source) Stats() SourceStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Open handles a connection's first frame, which must be a hello. On
// success it returns the new Source (a new generation; a live generation
// of the same id is superseded) and a Result holding the welcome. On
// failure the Source is nil and the Result holds a reject with Close set.
func (r *Registry) Open(hello []byte, o OpenOptions) (*Source, Result) {
	raw, h, rerr := checkHello(hello, o)
	if rerr != nil {
		return nil, openRefused(rerr, raw)
	}
	s := &Source{reg: r, outbox: o.Outbox, onSuperseded: o.OnSuperseded, next: 1, info: SourceInfo{
		Ref:          SourceRef{ID: string(raw.source), Role: h.Role},
		Capabilities: h.Capabilities, Topics: h.Topics, Agent: h.Agent, Page: h.Page,
	}}
	// s.mu is held until SourceOpened is queued, so a concurrent
	// supersession of s cannot queue SourceClosed first.
	s.mu.Lock()
	old, rerr := r.insert(s)
	if rerr != nil {
		s.mu.Unlock()
		return nil, openRefused(rerr, raw)
	}
	if o.CoalesceAcks {
		s.ackDelay = time.Duration(h.AckDelayMs) * time.Millisecond
	}
	superseded := old != nil && old.supersede()
	prefix := strconv.AppendUint([]byte(`{"v":1,"type":"ack","source":"`+s.info.Ref.ID+`","gen":`), s.info.Ref.Gen, 10)
	s.ackPrefix = append(prefix, `,"seq":`...)
	s.lane.queue(delivery{kind: deliverOpened, src: s})
	s.mu.Unlock()
	// The lane is old's when s superseded it: its SourceClosed goes first.
	s.deliver()
	if superseded && old.onSuperseded != nil {
		old.onSuperseded()
	}
	welcome := mustMarshal(Header{Source: s.info.Ref.ID, Gen: s.info.Ref.Gen},
		&Welcome{Capabilities: h.Capabilities, Topics: h.Topics, Limits: CurrentLimits()})
	return s, Result{Replies: [][]byte{welcome}}
}

// checkHello reads a connection's first frame and checks it against what
// the carrier grants.
func checkHello(hello []byte, o OpenOptions) (rawEnvelope, *Hello, *RejectError) {
	raw, rerr := scanEnvelope(hello)
	h := new(Hello)
	switch {
	case rerr != nil:
		return raw, nil, rerr
	case raw.typ != FrameHello:
		return raw, nil, reject(RejectUnexpectedFrame, "the first frame must be hello")
	}
	if rerr = decodeBody(raw.body, h, topicAll); rerr != nil {
		return raw, nil, rerr
	}
	// A client carrier without a token is a wiring bug; refusing keeps it
	// from becoming an open door. Wrong role and wrong token share one
	// reason: a prober learns nothing about which failed.
	tokenOK := o.Token.Matches(h.Token) || (o.Role == RoleHost && o.Token.IsZero())
	if h.Role != o.Role || !tokenOK || (o.ID != "" && string(raw.source) != o.ID) {
		return raw, nil, reject(RejectUnauthorized, "role not granted or token refused")
	}
	return raw, h, nil
}

// insert assigns s its generation and makes it the live source for its id,
// returning the generation it replaces.
func (r *Registry) insert(s *Source) (*Source, *RejectError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := s.info.Ref.ID
	old := r.live[id]
	switch {
	case old == nil && len(r.live) >= MaxSources:
		return nil, reject(RejectOverCapacity, "too many sources")
	case old != nil && old.info.Ref.Role != s.info.Ref.Role:
		// A page holding the client token must not be able to replace the
		// host (or the reverse) by claiming its id.
		return nil, reject(RejectUnauthorized, "role not granted or token refused")
	}
	// Generations come from one registry-wide counter: unique across ids,
	// never reused, so a stale frame can never match a later generation.
	s.info.Ref.Gen = r.nextGen.Add(1)
	r.live[id] = s
	s.lane = new(lane)
	if old != nil {
		s.lane = old.lane // one queue for both: old's SourceClosed before s's SourceOpened
	}
	return old, nil
}

func (r *Registry) remove(s *Source) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live[s.info.Ref.ID] == s {
		delete(r.live, s.info.Ref.ID)
	}
}

// openRefused builds the reject for a failed hello. The reject names the
// claimed source only when its id was well formed.
func openRefused(rerr *RejectError, raw rawEnvelope) Result {
	h := Header{}
	if validID(raw.source) {
		h.Source = string(raw.source)
	}
	return Result{Replies: [][]byte{rejectFrame(h, rerr, raw)}, Err: rerr, Close: true}
}

func rejectFrame(h Header, rerr *RejectError, raw rawEnvelope) []byte {
	body := &Reject{Code: rerr.Code, Reason: rerr.Reason, RefType: raw.typ, Limit: rerr.Limit, Max: rerr.Max}
	if raw.typ.Sequenced() && raw.seq <= MaxSafeInteger {
		body.RefSeq = raw.seq
	}
	return mustMarshal(h, body)
}

// supersede closes s because a newer generation took its id. It reports
// whether s was still open (so its carrier must be told).
func (s *Source) supersede() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateClosed {
		return false
	}
	s.state, s.closeCode = stateClosed, CloseReplaced
	s.lane.queue(delivery{kind: deliverClosed, src: s, code: CloseReplaced})
	return true
}

// Close ends the source (carrier lost, worker shutdown). Idempotent. The
// consumers hear SourceClosed before it returns, unless another goroutine
// is delivering the source's calls, or Close is called from a consumer
// call about the source: then right after the call in progress returns,
// by the goroutine making it (deliver.go). Close never waits for that.
func (s *Source) Close(code CloseCode) {
	s.mu.Lock()
	s.closeLocked(code)
	s.mu.Unlock()
	s.deliver()
}

func (s *Source) closeLocked(code CloseCode) {
	if s.state == stateClosed {
		return
	}
	s.state, s.closeCode = stateClosed, code
	s.ackFrames = 0 // no ack after the end
	s.reg.remove(s)
	s.lane.queue(delivery{kind: deliverClosed, src: s, code: code})
}

// Lookup returns the live generation of id.
func (r *Registry) Lookup(id string) (SourceInfo, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.live[id]; s != nil {
		return s.info, true
	}
	return SourceInfo{}, false
}

// Sources returns every live source, oldest generation first.
func (r *Registry) Sources() []SourceInfo {
	r.mu.Lock()
	out := make([]SourceInfo, 0, len(r.live))
	for _, s := range r.live {
		out = append(out, s.info)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Ref.Gen < out[j].Ref.Gen })
	return out
}

// Send encodes a worker-initiated frame for ref and hands it to the
// source's Outbox: runtime.command/cancel/ack, console.*, script.read,
// query.request, or close. It checks that ref is the live generation and
// that the source declared the family's capability.
//
// Send may close the source before it returns: a carrier whose outbox is
// full ends the connection on the caller's goroutine, so the consumers get
// SourceClosed for ref inside this call — or, when Send is called from a
// consumer call about ref, right after that call returns. Consumers may
// call Send; never call it while holding a lock a Consumer callback takes:
// release it, send, then take it again to handle the error.
func (r *Registry) Send(ref SourceRef, b Body) error {
	t := b.FrameType()
	switch {
	case t.Direction()&ToProducer == 0:
		return ErrWrongDirection
	case t == FrameWelcome || t == FrameAck || t == FrameSnapshotRequest || t == FrameReject:
		return ErrUnexpectedFrame // answers to inbound frames come from Ingest
	}
	r.mu.Lock()
	s := r.live[ref.ID]
	r.mu.Unlock()
	switch {
	case s == nil:
		return ErrUnknownSource
	case ref.Gen < s.info.Ref.Gen:
		return ErrStaleGeneration
	case ref.Gen != s.info.Ref.Gen:
		return ErrUnknownGeneration
	case !s.info.Capabilities.Has(t.Capability()):
		return ErrUndeclaredCapability
	case s.outbox == nil:
		return ErrNoOutbox
	}
	frame, err := Marshal(Header{Source: ref.ID, Gen: ref.Gen}, b)
	if err != nil {
		return err
	}
	return s.outbox.Enqueue(frame)
}
