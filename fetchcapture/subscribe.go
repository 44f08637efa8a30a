package fetchcapture

import (
	"context"
	"errors"
	"sync"
)

// DefaultSubscriberQueue bounds the steps waiting for one subscriber: a
// 1 MiB response is ~25 steps, so this is a few thousand requests of
// backlog, a few MiB of pointers at most.
const DefaultSubscriberQueue = 65536

// subscriberBytes bounds what the steps waiting for one subscriber pin:
// the heads they point at, which stay alive in the queue after the journal
// evicted their entries (a page sending 1 MiB heads as fast as it can
// would otherwise pin 64 GiB behind 65,536 queued steps). An honest step
// pins ~1 KiB, so this is still thousands of requests of backlog.
const subscriberBytes = 16 << 20

// stepOverhead is a queued step's own size (Step), for subscriberBytes.
const stepOverhead = 128

// ErrClosed is returned by Subscription.Next after Close.
var ErrClosed = errors.New("fetchcapture: subscription closed")

// Subscription is one reader's live stream. Steps are queued under the
// journal's lock (so the stream continues exactly where the snapshot given
// by Subscribe ended) and handed out by Next on the reader's goroutine, so
// the journal never waits for a reader.
//
// Overflow policy: the queue holds at most its bound of steps and
// subscriberBytes of what they pin. A step that does not fit is dropped and
// counted, and so is every later step until the reader
// has taken everything queued; Next then reports the count (Lost) once and
// the stream resumes. The reader tells its user how many steps it lost;
// the journal itself keeps everything within its budgets (Body, a new
// Subscribe) regardless.
type Subscription struct {
	j   *Journal // Static after construction.
	max int      // Static after construction.

	mu       sync.Mutex    // Lock order: see docs/locks.md.
	q        []Step        // Guarded by mu.
	bytes    int64         // Guarded by mu: the cost of the steps in q.
	lost     int           // Guarded by mu: dropped since the last report.
	dropping bool          // Guarded by mu: overflowed, until the queue drained.
	closed   bool          // Guarded by mu.
	wake     chan struct{} // capacity 1: "something changed"
}

// Subscribe returns a snapshot of every entry in the journal, oldest first,
// and a subscription that delivers every step published after it. Both are
// taken under the journal's lock: no step is in both, none in neither.
// queue <= 0 means DefaultSubscriberQueue.
func (j *Journal) Subscribe(queue int) ([]Entry, *Subscription) {
	if queue <= 0 {
		queue = DefaultSubscriberQueue
	}
	s := &Subscription{j: j, max: queue, wake: make(chan struct{}, 1)}
	j.mu.Lock()
	defer j.mu.Unlock()
	snap := make([]Entry, 0, j.order.Len())
	for el := j.order.Front(); el != nil; el = el.Next() {
		snap = append(snap, el.Value.(*entry).snapshotLocked())
	}
	j.subs[s] = struct{}{}
	return snap, s
}

// snapshotLocked is the entry's steps with its response data as one step,
// placed after the response (before the end, when there is one).
func (e *entry) snapshotLocked() Entry {
	steps := make([]Step, 0, len(e.steps)+1)
	for _, s := range e.steps {
		if (s.Kind == StepFinished || s.Kind == StepFailed) && e.dataSeen > 0 {
			steps = append(steps, e.dataStep(s.Time))
		}
		steps = append(steps, s)
	}
	if !e.ended && e.dataSeen > 0 {
		steps = append(steps, e.dataStep(steps[len(steps)-1].Time))
	}
	return Entry{RequestID: e.requestID, Steps: steps}
}

func (e *entry) dataStep(at float64) Step {
	return Step{Kind: StepData, RequestID: e.requestID, Request: e.req, Time: at, DataLength: e.dataSeen}
}

// publishLocked records s on e (data steps are summed, not kept) and queues
// it for every subscriber.
func (j *Journal) publishLocked(e *entry, s Step) {
	s.RequestID, s.Request = e.requestID, e.req
	if s.Kind != StepData {
		e.steps = append(e.steps, s)
	}
	if s.Kind == StepRedirect {
		e.hops++
	}
	// Every step pins its request head; counting it on each overcounts an
	// honest (small) head a little and bounds a hostile one.
	s.cost = stepOverhead + e.req.cost()
	if s.Response != nil {
		s.cost += respCost(s.Response)
	}
	if s.Failure != nil {
		s.cost += failureCost(s.Failure)
	}
	for sub := range j.subs {
		sub.push(s)
	}
}

// noticeLocked queues a notice for every subscriber.
func (j *Journal) noticeLocked(text string) {
	s := Step{Kind: StepNotice, Time: j.now(), Notice: text, cost: stepOverhead + int64(len(text))}
	for sub := range j.subs {
		sub.push(s)
	}
}

func (s *Subscription) push(st Step) {
	s.mu.Lock()
	switch {
	case s.closed:
	case s.dropping || len(s.q) >= s.max || s.bytes+st.cost > subscriberBytes:
		s.dropping = true
		s.lost++
	default:
		s.q = append(s.q, st)
		s.bytes += st.cost
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Next blocks until steps are queued and returns them (appended to buf), or
// returns lost > 0 once the reader drained an overflowed queue. It returns
// ErrClosed after Close, ctx.Err() when ctx ends.
func (s *Subscription) Next(ctx context.Context, buf []Step) (steps []Step, lost int, err error) {
	for {
		s.mu.Lock()
		switch {
		case s.closed:
			s.mu.Unlock()
			return buf, 0, ErrClosed
		case len(s.q) > 0:
			buf = append(buf, s.q...)
			clear(s.q)
			s.q, s.bytes = s.q[:0], 0
			s.mu.Unlock()
			return buf, 0, nil
		case s.lost > 0:
			lost, s.lost, s.dropping = s.lost, 0, false
			s.mu.Unlock()
			return buf, lost, nil
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-ctx.Done():
			return buf, 0, ctx.Err()
		}
	}
}

// Close ends the subscription; Next returns ErrClosed. Safe to call twice.
func (s *Subscription) Close() {
	s.j.mu.Lock()
	delete(s.j.subs, s)
	s.j.mu.Unlock()
	s.mu.Lock()
	s.closed, s.q = true, nil
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
