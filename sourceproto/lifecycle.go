package sourceproto

// Source lifecycle bodies. The state machine that consumes them is in
// registry.go; docs/protocol.md, "Source lifecycle", has the JSON shapes.

// Hello opens a source: who it is, what it serves, what it will append.
// Envelope: source = the producer's id, no gen, no seq.
//
//easyjson:json
type Hello struct {
	Role Role `json:"role"`
	// Token is the per-run secret of the client carrier; empty on the
	// host pipe (the pipe itself is the credential).
	Token        Secret     `json:"token,omitempty"`
	Capabilities Capability `json:"capabilities"`
	Topics       Topic      `json:"topics"`
	Agent        Agent      `json:"agent"`
	Page         *PageInfo  `json:"page,omitempty"`
	// AckDelayMs, when above 0, lets the worker answer appends with one
	// cumulative ack after at most this many milliseconds or
	// AckCoalesceFrames appends, whichever comes first, instead of one ack
	// per append: a page client then receives (and wakes for) a few acks
	// a second rather than one per frame. At most MaxAckDelayMs. Only the
	// client carrier coalesces (OpenOptions.CoalesceAcks); on the host
	// pipe, whose producer keeps one batch in flight, it is ignored.
	AckDelayMs int64 `json:"ackDelayMs,omitempty"`
}

// Agent names the producer build, for logs and for the DevTools context
// name; it is not used for decisions.
//
//easyjson:json
type Agent struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Welcome accepts a hello. Envelope: gen = the generation the worker
// assigned; the producer stamps it on every later frame.
//
//easyjson:json
type Welcome struct {
	Capabilities Capability `json:"capabilities"`
	Topics       Topic      `json:"topics"`
	Limits       Limits     `json:"limits"`
}

// Limits tells a producer the bounds it must respect, so a producer built
// for another limit set fails visibly rather than being rejected silently.
//
//easyjson:json
type Limits struct {
	MaxFrameBytes  int64 `json:"maxFrameBytes"`
	MaxBatchItems  int64 `json:"maxBatchItems"`
	MaxStringBytes int64 `json:"maxStringBytes"`
	MaxChunkBytes  int64 `json:"maxChunkBytes"`
	MaxValueBytes  int64 `json:"maxValueBytes"`
}

// CurrentLimits is what Welcome carries.
func CurrentLimits() Limits {
	return Limits{MaxFrameBytes: MaxFrameBytes, MaxBatchItems: MaxBatchItems,
		MaxStringBytes: MaxStringBytes, MaxChunkBytes: MaxChunkBytes, MaxValueBytes: MaxValueBytes}
}

// Replace is a snapshot: the producer's retained state for its declared
// topics. Envelope seq = the last item sequence number the snapshot covers
// (0 when nothing was ever appended); the next append starts at seq+1.
// Consumers drop what they hold from this source generation and take Items
// instead. Encoded and decoded by hand (items.go): items are checked
// against the declared topics before their fields are read.
type Replace struct {
	Reason ReplaceReason `json:"reason"`
	Items  []Item        `json:"items"`
}

// Append is a batch of new items. Envelope seq = the sequence number of
// Items[0]; item i has seq+i. Dropped is the number of items the producer's
// bounded queue discarded immediately before this batch: a gap of exactly
// that size is explained and costs no snapshot. Encoded and decoded by hand
// (items.go).
type Append struct {
	Dropped uint64 `json:"dropped,omitempty"`
	Items   []Item `json:"items"`
}

// Ack confirms consumption of every item up to envelope seq. On the host
// pipe it also releases the one in-flight batch. Dropped repeats how many
// items the worker counted as missing before the acked batch.
//
//easyjson:json
type Ack struct {
	Dropped uint64 `json:"dropped,omitempty"`
}

// SnapshotRequest asks for a Replace after an unexplained gap. At most one
// is outstanding per generation; the next Replace answers it.
//
//easyjson:json
type SnapshotRequest struct {
	// Expected is the first sequence number the worker did not receive.
	Expected uint64 `json:"expected"`
	// Received is the sequence number that revealed the gap.
	Received uint64 `json:"received"`
	// Missing is the unexplained part of the gap (gap minus Dropped).
	Missing uint64 `json:"missing"`
}

// Reject refuses one frame. The frame had no effect; the source stays
// open unless a close frame follows.
//
//easyjson:json
type Reject struct {
	Code   RejectCode `json:"code"`
	Reason string     `json:"reason,omitempty"`
	// RefType and RefSeq identify the refused frame when its envelope
	// could be read.
	RefType FrameType `json:"refType,omitempty"`
	RefSeq  uint64    `json:"refSeq,omitempty"`
	Limit   string    `json:"limit,omitempty"`
	Max     int64     `json:"max,omitempty"`
}

// Close ends a source generation, from either side. The carrier closes the
// connection after sending or receiving it.
//
//easyjson:json
type Close struct {
	Code   CloseCode `json:"code"`
	Reason string    `json:"reason,omitempty"`
}
