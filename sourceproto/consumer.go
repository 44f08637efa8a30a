package sourceproto

import "time"

// SourceRef names one generation of one source. It is comparable and is
// the key domain stores use for per-realm state: a new generation of the
// same id is a new realm (DevTools sees a new execution context).
type SourceRef struct {
	ID   string
	Gen  uint64
	Role Role
}

// SourceInfo is what a hello declared, as accepted.
type SourceInfo struct {
	Ref          SourceRef
	Capabilities Capability
	Topics       Topic
	Agent        Agent
	Page         *PageInfo
}

// Gap reports items the worker never received. Count items starting at
// Expected are missing; the producer explained Explained of them as
// queue drops. SnapshotRequested is set when this gap made the worker ask
// for a replacement (an unexplained part, and none already outstanding).
type Gap struct {
	Expected          uint64
	Received          uint64
	Count             uint64
	Explained         uint64
	SnapshotRequested bool
}

// Consumer receives what a Registry accepted. Calls about one source are
// serialized and arrive in the order the frames did: SourceOpened first,
// SourceClosed last, Gap just before the Appended that revealed it; a
// superseded generation's SourceClosed comes before its successor's
// SourceOpened. Calls about different sources may be concurrent, so
// implementations must be safe for that. They must not block (they
// usually run on a carrier's read loop).
//
// The registry holds none of its locks during a call (deliver.go), so a
// consumer may call back into it: Registry.Send, Lookup, Sources, and
// Source.Close, for any source including the one it is called about. What
// such a call causes for the same source (SourceClosed after a full
// outbox or a Close) is delivered right after the current call returns,
// not inside it. A consumer must still not hold one of its own locks
// while calling Send (see Send).
//
// Ownership: the *Append passed to Appended and its Items slice are reused
// for the source's next batch, so copy what must outlive the call; the
// values the items point to (*ConsoleEvent, …) are fresh per frame and
// become the consumer's. Every other pointer argument is the consumer's.
// A registry with several consumers (NewRegistry) passes the same values
// to each: they may keep them, but must not modify them.
type Consumer interface {
	SourceOpened(info SourceInfo)
	// SourceClosed ends ref: domain stores close its unfinished operations.
	SourceClosed(ref SourceRef, code CloseCode)
	// Replaced delivers a snapshot covering items up to seq.
	Replaced(ref SourceRef, seq uint64, r *Replace)
	// Appended delivers a batch whose first item has sequence number seq.
	Appended(ref SourceRef, seq uint64, a *Append)
	Gap(ref SourceRef, g Gap)
	// Response delivers a correlated answer: *RuntimeResult, *ScriptMeta,
	// *ScriptChunk, *ScriptEnd or *QueryResult. Correlation with the
	// worker's own requests (ids, sessions) is the consumer's. A
	// runtime.result the registry refused arrives too when its session, id
	// and method could be read, as a *RuntimeResult with Rejected set, so
	// the command it answers can fail at once.
	Response(ref SourceRef, b Body)
}

// NopConsumer ignores everything; embed it to implement part of Consumer.
type NopConsumer struct{}

func (NopConsumer) SourceOpened(SourceInfo)              {}
func (NopConsumer) SourceClosed(SourceRef, CloseCode)    {}
func (NopConsumer) Replaced(SourceRef, uint64, *Replace) {}
func (NopConsumer) Appended(SourceRef, uint64, *Append)  {}
func (NopConsumer) Gap(SourceRef, Gap)                   {}
func (NopConsumer) Response(SourceRef, Body)             {}

// Outbox is a carrier's queue towards one producer. Enqueue must not
// block: a full queue returns an error and the carrier applies its written
// overflow policy. The frame is the caller's to keep; Enqueue takes it.
type Outbox interface {
	Enqueue(frame []byte) error
}

// Result is what one inbound frame produced. The carrier sends Replies in
// order (each is one encoded frame, owned by the carrier), then ends the
// connection if Close is set. Err is the *RejectError when the frame was
// refused (a reject frame is then among the Replies); it is for logs and
// metrics, never a reason to stop reading.
type Result struct {
	Replies [][]byte
	Err     error
	Close   bool
	// AckAfter, when non-zero, says an ack is being held back (coalesced
	// acks): the carrier calls Source.FlushAck within this long, unless a
	// flush is already due.
	AckAfter time.Duration
}

// SourceStats counts what a source did in its generation.
type SourceStats struct {
	Frames           uint64 // accepted frames
	Items            uint64 // appended items delivered
	Rejects          uint64 // refused frames
	Gaps             uint64 // gaps seen
	Missing          uint64 // items never received (sum of gap counts)
	Unexplained      uint64 // of which not reported as dropped
	SnapshotRequests uint64
}
