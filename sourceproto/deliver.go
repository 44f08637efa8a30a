package sourceproto

import "sync"

// Delivery: the registry decides under Source.mu and calls the consumer
// after releasing it. Each state change queues its consumer calls on the
// source's lane while s.mu is held, so the queue's order is the frames'
// order; whoever released s.mu then drains the lane (deliver), one
// goroutine at a time, calls in queue order. A consumer therefore runs
// under no registry lock and may call Registry.Send, Registry.Lookup,
// Registry.Sources and Source.Close — about any source, its own included:
// a call it causes about a source whose lane it is draining is queued and
// delivered right after it returns, by the same loop.
//
// A lane is shared by the generations of one id that supersede each other
// (Registry.insert hands the old generation's lane to the new one), so a
// superseded generation's SourceClosed is delivered before its
// successor's SourceOpened, as when calls were made under the lock.
//
// The queue is bounded: an Ingest queues at most two calls (a Gap and its
// Appended) and returns only once they were made (by itself, or by the
// goroutine delivering the lane: Ingest waits for it), so a source's read
// loop is held back by its consumers as when they ran under the lock;
// Open, Close and supersession queue one call each and do not wait (they
// may run inside a consumer call of the same lane).
type lane struct {
	mu         sync.Mutex // Lock order: see docs/locks.md.
	pending    []delivery // Guarded by mu: calls not yet made, in order, from head.
	head       int        // Guarded by mu.
	delivering bool       // Guarded by mu: a goroutine is making a call of this lane.
	queued     uint64     // Guarded by mu: calls ever queued.
	made       uint64     // Guarded by mu: calls ever made (or that panicked).
	waiters    int        // Guarded by mu: Ingests waiting in deliverUpTo.
	cond       sync.Cond  // L is &mu once a waiter came; signalled when a call ends.
}

type deliveryKind uint8

const (
	deliverOpened deliveryKind = iota
	deliverClosed
	deliverReplaced
	deliverAppended
	deliverGap
	deliverResponse
)

// delivery is one consumer call, with its arguments.
type delivery struct {
	kind deliveryKind
	src  *Source
	code CloseCode
	seq  uint64
	app  *Append
	rep  *Replace
	gap  Gap
	body Body
}

// queue adds a call. The caller holds d.src.mu, which orders the calls of
// one source; lane.mu only guards the slice.
func (l *lane) queue(d delivery) {
	l.mu.Lock()
	l.pending = append(l.pending, d)
	l.queued++
	l.mu.Unlock()
}

// mark is the position of the last call queued so far. The caller holds
// the source's mu, so it is the last of its own calls.
func (l *lane) mark() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.queued
}

// take pops the next call and marks the lane as being delivered; ok is
// false when the lane is empty or another goroutine delivers it.
func (l *lane) take() (d delivery, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.delivering || l.head == len(l.pending) {
		return delivery{}, false
	}
	d = l.pending[l.head]
	l.pending[l.head] = delivery{} // let the batch go
	l.head++
	if l.head == len(l.pending) {
		l.pending, l.head = l.pending[:0], 0 // reuse the array: no allocation per frame
	}
	l.delivering = true
	return d, true
}

// deliver makes the queued calls of s's lane, in order, outside every
// registry lock. It returns when the lane is empty or another goroutine
// is delivering it (that goroutine makes the calls queued meanwhile). A
// consumer's panic propagates to the caller after the lane is released;
// the calls still queued are made by the next deliver (the carrier's
// Close after it recovered the panic).
func (s *Source) deliver() {
	l := s.lane
	for {
		d, ok := l.take()
		if !ok {
			return
		}
		d.call(s.reg.consumer)
	}
}

// deliverUpTo is deliver for Ingest: it returns once the calls up to mark
// were made, waiting for the goroutine delivering the lane if another is.
// If that goroutine stops early (a consumer panicked; the panic is its
// caller's), this one makes the rest.
func (s *Source) deliverUpTo(mark uint64) {
	l := s.lane
	for {
		s.deliver()
		l.mu.Lock()
		for l.made < mark && l.delivering {
			if l.cond.L == nil {
				l.cond.L = &l.mu
			}
			l.waiters++
			l.cond.Wait()
			l.waiters--
		}
		done := l.made >= mark
		l.mu.Unlock()
		if done {
			return
		}
	}
}

// call makes one consumer call and then releases the lane (and the
// source's reused Append), also when the consumer panics.
func (d delivery) call(c Consumer) {
	defer d.done()
	ref := d.src.info.Ref
	switch d.kind {
	case deliverOpened:
		c.SourceOpened(d.src.info)
	case deliverClosed:
		c.SourceClosed(ref, d.code)
	case deliverReplaced:
		c.Replaced(ref, d.seq, d.rep)
	case deliverAppended:
		c.Appended(ref, d.seq, d.app)
	case deliverGap:
		c.Gap(ref, d.gap)
	case deliverResponse:
		c.Response(ref, d.body)
	}
}

func (d delivery) done() {
	if d.kind == deliverAppended && d.app == &d.src.app {
		// The backing array is reused, its items are not: clearing them
		// lets the batch's events go (up to MaxBatchItems per source,
		// ~5 MB for 20 pages between their frames).
		clear(d.app.Items)
		d.src.appBusy.Store(false)
	}
	l := d.src.lane
	l.mu.Lock()
	l.delivering = false
	l.made++
	if l.waiters > 0 {
		l.cond.Broadcast()
	}
	l.mu.Unlock()
}

// batch returns the Append to decode the next batch into: the source's
// reused one, or a fresh one while the reused one still waits for its
// consumer call (another goroutine is delivering the lane). s.mu held.
func (s *Source) batch() *Append {
	if s.appBusy.Load() {
		return new(Append)
	}
	return &s.app
}
