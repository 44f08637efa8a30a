package carrier

import "sync"

// queueLimit bounds a frameQueue for one kind of push. The queue itself has
// no policy: push reports ErrQueueFull and the connection decides (each
// carrier writes its policy next to its limits).
type queueLimit struct {
	frames int // frames waiting, not counting the one being written
	bytes  int // their total size
}

// frameQueue is the bounded FIFO between the goroutines that produce
// frames for one peer (the read loop's replies, Registry.Send callers) and
// the connection's one sendLoop. push never blocks.
type frameQueue struct {
	mu     sync.Mutex    // Lock order: see docs/locks.md.
	frames [][]byte      // Guarded by mu.
	bytes  int           // Guarded by mu.
	closed bool          // Guarded by mu: no more pushes; next drains what is left.
	wake   chan struct{} // cap 1: a push or close happened since next last looked
}

func newFrameQueue() *frameQueue {
	return &frameQueue{wake: make(chan struct{}, 1)}
}

// push appends frame unless the queue is closed (ErrConnClosed) or adding
// it would pass lim (ErrQueueFull).
func (q *frameQueue) push(frame []byte, lim queueLimit) error {
	q.mu.Lock()
	switch {
	case q.closed:
		q.mu.Unlock()
		return ErrConnClosed
	case len(q.frames)+1 > lim.frames || q.bytes+len(frame) > lim.bytes:
		q.mu.Unlock()
		return ErrQueueFull
	}
	q.frames = append(q.frames, frame)
	q.bytes += len(frame)
	q.mu.Unlock()
	q.signal()
	return nil
}

// close stops pushes. With discard, frames still queued are dropped (the
// peer will not get them: it is too slow or gone); otherwise next hands
// them out before reporting the end, so a reject or a close frame queued
// before close is still written. goodbye, if not nil, is appended last
// regardless of limits: it is the one frame that explains the hang-up.
// Only the first close counts.
func (q *frameQueue) close(discard bool, goodbye []byte) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	if discard {
		clear(q.frames)
		q.frames, q.bytes = q.frames[:0], 0
	}
	if goodbye != nil {
		q.frames = append(q.frames, goodbye)
		q.bytes += len(goodbye)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *frameQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// next moves every queued frame into buf[:0] and returns it. When nothing
// is queued it waits for a push or a close; done reports that the queue is
// closed and drained, so the sendLoop should stop. It takes no ctx on
// purpose: the sendLoop must outlive a cancelled context long enough to
// write the goodbye frames, and every way a connection ends goes through
// its finish method, which closes the queue (a peer that does not take the
// goodbye is cut off by a write deadline instead). It waits only after an
// empty look, so a wake merged into an earlier one is never slept through.
func (q *frameQueue) next(buf [][]byte) (frames [][]byte, done bool) {
	for {
		q.mu.Lock()
		buf = append(buf[:0], q.frames...)
		clear(q.frames)
		q.frames, q.bytes = q.frames[:0], 0
		closed := q.closed
		q.mu.Unlock()
		if len(buf) > 0 || closed {
			return buf, len(buf) == 0
		}
		<-q.wake
	}
}
