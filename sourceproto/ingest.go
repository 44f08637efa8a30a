package sourceproto

import "strconv"

// Ingest handles one inbound frame of an open source and returns what to
// send back. Checks run before any body field is read, in this order:
// size, syntax and structural bounds, version, type, direction, source id,
// state (hello), generation, capability; then the body is decoded with
// item topics checked against the declared topics as each item opens;
// then the body's own rules; only then does state change and the consumer
// hear of it. A refused frame changes nothing but the reject counters.
//
// The decision is taken under the source's lock, which queues the
// consumer calls; they are made after it is released (deliver.go), on this
// goroutine or, when another goroutine is delivering the source's calls,
// by that one while Ingest waits: the consumers have had the frame when
// Ingest returns. So Ingest must not be called from a consumer call (it
// is the read loop's; Close and Send may be). A consumer's panic
// propagates.
func (s *Source) Ingest(frame []byte) Result {
	res, mark := s.accept(frame)
	s.deliverUpTo(mark)
	return res
}

// accept is Ingest's locked part: decide, queue the consumer calls, reply;
// mark is the lane position of the last call queued.
func (s *Source) accept(frame []byte) (Result, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := s.decide(frame)
	return res, s.lane.mark()
}

// decide is accept without the lane mark. s.mu held.
func (s *Source) decide(frame []byte) Result {
	res := s.ingest(frame)
	if res.Err != nil && s.ackFrames > 0 {
		// A reject names its frame by seq; the producer matches it against
		// its oldest batches, so the acks held back go first.
		res.Replies = append([][]byte{s.takeAck()}, res.Replies...)
	}
	if res.Err == nil {
		s.rejects = 0
		s.stats.Frames++
		return res
	}
	s.stats.Rejects++
	s.rejects++
	if s.rejects >= MaxConsecutiveRejects && s.state != stateClosed {
		res.Replies = append(res.Replies, s.closeFrame(ClosePolicy, "too many rejected frames"))
		res.Close = true
		s.closeLocked(ClosePolicy)
	}
	return res
}

func (s *Source) ingest(frame []byte) Result {
	if s.state == stateClosed {
		if s.closeCode == CloseReplaced {
			return s.refuse(reject(RejectStaleGeneration, "this generation was replaced"), rawEnvelope{}, true)
		}
		return s.refuse(reject(RejectClosed, "source closed"), rawEnvelope{}, true)
	}
	raw, rerr := scanEnvelope(frame)
	if rerr != nil {
		if session, id, method, ok := peekResult(frame); ok {
			s.rejectedResult(session, id, method, rerr)
		}
		return s.refuse(rerr, raw, false)
	}
	ref := s.info.Ref
	switch {
	case raw.typ.Direction()&ToWorker == 0:
		rerr = reject(RejectWrongDirection, "a worker-to-producer frame type")
	case string(raw.source) != ref.ID:
		rerr = reject(RejectSourceMismatch, "one source per connection")
	case raw.typ == FrameHello:
		rerr = reject(RejectUnexpectedFrame, "hello on an open source; reconnect for a new generation")
	case raw.gen < ref.Gen:
		rerr = reject(RejectStaleGeneration, "generation was replaced")
	case raw.gen != ref.Gen:
		rerr = reject(RejectUnknownGeneration, "generation not assigned to this source")
	case !s.info.Capabilities.Has(raw.typ.Capability()):
		rerr = reject(RejectUndeclaredCapability, "capability not declared in hello")
	}
	if rerr != nil {
		return s.refuse(rerr, raw, false)
	}
	switch raw.typ {
	case FrameAppend:
		return s.handleAppend(raw)
	case FrameReplace:
		return s.handleReplace(raw)
	case FrameClose:
		return s.handleClose(raw)
	}
	return s.handleResponse(raw)
}

// refuse builds the reject reply. fatal marks a connection that can never
// be used again (closed or superseded generation).
func (s *Source) refuse(rerr *RejectError, raw rawEnvelope, fatal bool) Result {
	h := Header{Source: s.info.Ref.ID, Gen: s.info.Ref.Gen}
	return Result{Replies: [][]byte{rejectFrame(h, rerr, raw)}, Err: rerr, Close: fatal}
}

func (s *Source) header(seq uint64) Header {
	return Header{Source: s.info.Ref.ID, Gen: s.info.Ref.Gen, Seq: seq}
}

func (s *Source) closeFrame(code CloseCode, reason string) []byte {
	return mustMarshal(s.header(0), &Close{Code: code, Reason: reason})
}

func (s *Source) handleAppend(raw rawEnvelope) Result {
	if s.state == stateAwaitReplace {
		return s.refuse(reject(RejectUnexpectedFrame, "append before the initial replace"), raw, false)
	}
	if raw.seq < s.next {
		return s.refuse(reject(RejectSequenceRegression, "seq already consumed"), raw, false)
	}
	a := s.batch()
	if rerr := decodeBodyWith(&s.lex, raw.body, a, s.info.Topics); rerr != nil {
		return s.refuse(rerr, raw, false)
	}
	gap := raw.seq - s.next
	last := raw.seq + uint64(len(a.Items)) - 1
	switch {
	case a.Dropped > gap:
		return s.refuse(malformed("dropped exceeds the sequence gap"), raw, false)
	case last > MaxSafeInteger:
		return s.refuse(malformed("seq above 2^53-1"), raw, false)
	}
	var res Result
	if s.ackDelay > 0 && gap == 0 && s.ackFrames+1 < AckCoalesceFrames {
		// Held back: one cumulative ack for several appends. An append
		// after a gap is acked at once (its ack reports the gap).
		s.ackFrames++
		s.ackSeq = last
		res.AckAfter = s.ackDelay
	} else {
		s.ackFrames = 0
		res.Replies = make([][]byte, 1, 2)
		res.Replies[0] = s.ackFrame(last, gap)
	}
	if gap > 0 {
		g := Gap{Expected: s.next, Received: raw.seq, Count: gap, Explained: a.Dropped}
		unexplained := gap - a.Dropped
		s.stats.Gaps++
		s.stats.Missing += gap
		s.stats.Unexplained += unexplained
		if unexplained > 0 && !s.snapPend {
			s.snapPend, g.SnapshotRequested = true, true
			s.stats.SnapshotRequests++
			res.Replies = append(res.Replies, mustMarshal(s.header(0),
				&SnapshotRequest{Expected: s.next, Received: raw.seq, Missing: unexplained}))
		}
		s.lane.queue(delivery{kind: deliverGap, src: s, gap: g})
	}
	s.next = last + 1
	s.stats.Items += uint64(len(a.Items))
	if a == &s.app {
		s.appBusy.Store(true) // until its call is made (delivery.done)
	}
	s.lane.queue(delivery{kind: deliverAppended, src: s, seq: raw.seq, app: a})
	return res
}

func (s *Source) handleReplace(raw rawEnvelope) Result {
	// A snapshot must cover at least what was already consumed.
	if s.state == stateStreaming && raw.seq+1 < s.next {
		return s.refuse(reject(RejectSequenceRegression, "replace covers less than was consumed"), raw, false)
	}
	r := new(Replace)
	if rerr := decodeBody(raw.body, r, s.info.Topics); rerr != nil {
		return s.refuse(rerr, raw, false)
	}
	if (s.state == stateAwaitReplace) != (r.Reason == ReplaceInitial) {
		return s.refuse(reject(RejectUnexpectedFrame, "reason initial is for the first replace only"), raw, false)
	}
	s.state, s.next, s.snapPend = stateStreaming, raw.seq+1, false
	s.ackFrames = 0 // the replace's ack covers the appends held back
	s.lane.queue(delivery{kind: deliverReplaced, src: s, seq: raw.seq, rep: r})
	return Result{Replies: [][]byte{s.ackFrame(raw.seq, 0)}}
}

func (s *Source) handleClose(raw rawEnvelope) Result {
	var c Close
	if rerr := decodeBody(raw.body, &c, 0); rerr != nil {
		return s.refuse(rerr, raw, false)
	}
	s.closeLocked(c.Code)
	return Result{Close: true}
}

func (s *Source) handleResponse(raw rawEnvelope) Result {
	b := newBody(raw.typ)
	if rerr := decodeBody(raw.body, b, 0); rerr != nil {
		if raw.typ == FrameRuntimeResult {
			if session, id, method, ok := peekResultBody(raw.body); ok {
				s.rejectedResult(session, id, method, rerr)
			}
		}
		return s.refuse(rerr, raw, false)
	}
	s.lane.queue(delivery{kind: deliverResponse, src: s, body: b})
	return Result{}
}

// rejectedResult tells the consumer that a runtime.result it may wait for
// was refused, and why (RuntimeResult.Rejected; peek.go). A source that
// did not declare the runtime capability was sent no command to answer.
func (s *Source) rejectedResult(session string, id uint64, method RuntimeMethod, rerr *RejectError) {
	if !s.info.Capabilities.Has(CapRuntime) {
		return
	}
	s.lane.queue(delivery{kind: deliverResponse, src: s,
		body: &RuntimeResult{Session: session, ID: id, Method: method, Rejected: rerr}})
}

// FlushAck returns the ack held back for this source's appends (coalesced
// acks; see Result.AckAfter), or nil when none is due or the source is
// closed. The carrier queues it like any reply.
func (s *Source) FlushAck() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ackFrames == 0 || s.state == stateClosed {
		return nil
	}
	return s.takeAck()
}

// takeAck encodes the cumulative ack of the appends held back. s.mu held.
func (s *Source) takeAck() []byte {
	s.ackFrames = 0
	return s.ackFrame(s.ackSeq, 0)
}

// ackFrame encodes an ack by appending to the prefix computed at Open: acks
// are one per batch on the hot path. TestAckFrameMatchesMarshal pins it to
// Marshal's output.
func (s *Source) ackFrame(seq, dropped uint64) []byte {
	b := make([]byte, 0, len(s.ackPrefix)+48)
	b = strconv.AppendUint(append(b, s.ackPrefix...), seq, 10)
	b = append(b, `,"body":{`...)
	if dropped > 0 {
		b = strconv.AppendUint(append(b, `"dropped":`...), dropped, 10)
	}
	return append(b, "}}"...)
}
