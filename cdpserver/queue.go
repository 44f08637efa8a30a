package cdpserver

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/inspector-worker/inspector-worker/internal/cdpwire"
)

// Limits of one DevTools connection's outgoing queue.
//
// Overflow policy: the queue never blocks its producers (the Node read loop,
// the dispatcher). When a window stops reading and the queue passes either
// limit, the connection is closed with status 1008 (policy violation) and a
// reason that says so. Dropping single CDP messages instead would break the
// one-answer-per-request rule silently; closing is honest and the user can
// reopen the window.
const (
	// maxQueuedBytes leaves room for two 50 MB script sources in flight
	// while bounding what one stuck window costs the worker (it was 512 MiB).
	// A stuck window costs at most the bound it reaches first, plus what its
	// socket holds: with Node's console messages (~600 bytes) that is
	// maxQueuedMessages, ~60 MiB; measured (BenchmarkMemStuckWindow, a 1M
	// host flood): closed with 1008 after 6 s, worker peak RSS 69 MiB (112
	// MiB before the worker's soft memory limit, main.go), 18 MiB 1 s later.
	// Only messages of over 1.3 KiB each reach this bound first.
	maxQueuedBytes = 128 << 20
	// maxQueuedMessages is ~3 s of Node's fastest console flood to one session.
	maxQueuedMessages = cdpwire.MaxQueuedMessages
)

var errQueueOverflow = errors.New("cdpserver: DevTools window is not reading its messages")

// sendQueue is the bounded FIFO between a Session's producers and its sendLoop.
type sendQueue struct {
	maxMessages, maxBytes int // Static after construction.

	// Lock order: see docs/locks.md.
	mu      sync.Mutex
	items   [][]byte // Guarded by mu.
	bytes   int      // Guarded by mu.
	closed  bool     // Guarded by mu.
	err     error    // Guarded by mu: why the queue closed.
	pushed  int64    // Guarded by mu: messages ever queued.
	sent    int64    // Guarded by mu: messages sendLoop reported written.
	writer  writer   // Guarded by mu: who may write to the socket now (direct.go).
	wake    chan struct{}
	overrun atomic.Bool // closed for overflow; read by sendLoop between writes
}

func newSendQueue(maxMessages, maxBytes int) *sendQueue {
	return &sendQueue{maxMessages: maxMessages, maxBytes: maxBytes, wake: make(chan struct{}, 1)}
}

// push appends msg. It returns errQueueOverflow when a limit is passed (the
// queue is then closed) and the close error when the queue was already closed.
func (q *sendQueue) push(msg []byte) error {
	q.mu.Lock()
	if q.closed {
		err := q.err
		q.mu.Unlock()
		return err
	}
	if len(q.items)+1 > q.maxMessages || q.bytes+len(msg) > q.maxBytes {
		q.closeLocked(errQueueOverflow)
		q.mu.Unlock()
		return errQueueOverflow
	}
	q.items = append(q.items, msg)
	q.bytes += len(msg)
	q.pushed++
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
}

// pushLossy is push for messages that may be dropped (observations, never
// answers): above half of either limit it drops msg and returns false
// instead of letting the window reach the close-on-overflow bound. A window
// that falls behind a client flood thus loses counted observations, not its
// connection.
func (q *sendQueue) pushLossy(msg []byte) bool {
	q.mu.Lock()
	full := !q.closed && (len(q.items)+1 > q.maxMessages/2 || q.bytes+len(msg) > q.maxBytes/2)
	q.mu.Unlock()
	if full {
		return false
	}
	return q.push(msg) == nil
}

// pushFront queues msg ahead of everything still queued: for a notice that
// is about the queue's own backlog (losses), which must not wait behind it.
// Unlike push it does not check the bounds: callers push one small message
// at a time, rarely.
func (q *sendQueue) pushFront(msg []byte) error {
	q.mu.Lock()
	if q.closed {
		err := q.err
		q.mu.Unlock()
		return err
	}
	q.items = append(q.items, nil)
	copy(q.items[1:], q.items)
	q.items[0] = msg
	q.bytes += len(msg)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
}

// close stops the queue; messages already queued are still handed out by pop
// unless the reason is an overflow.
func (q *sendQueue) close(reason error) {
	q.mu.Lock()
	q.closeLocked(reason)
	q.mu.Unlock()
}

func (q *sendQueue) closeLocked(reason error) {
	if q.closed {
		return
	}
	q.closed, q.err = true, reason
	if errors.Is(reason, errQueueOverflow) {
		q.items, q.bytes = nil, 0
		q.overrun.Store(true)
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// popAll moves every queued message into buf. When the queue is empty it
// reports whether the queue is closed, and why.
func (q *sendQueue) popAll(buf [][]byte) ([][]byte, bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.writer == writerDirect {
		// A direct write is on the socket: everything queued goes after it,
		// and so does the close frame. Its release wakes next.
		return buf[:0], false, nil
	}
	buf = append(buf[:0], q.items...)
	clear(q.items)
	q.items, q.bytes = q.items[:0], 0
	if len(buf) > 0 {
		q.writer = writerSendLoop // until written
	}
	return buf, q.closed && len(buf) == 0, q.err
}

// next blocks until messages are queued (it returns them) or the queue is
// closed and drained (closed is then true). It waits only after an empty pop,
// so a wake merged into an earlier one (push, then close) is never slept
// through.
func (q *sendQueue) next(buf [][]byte) ([][]byte, bool, error) {
	for {
		buf, closed, why := q.popAll(buf)
		if closed || len(buf) > 0 {
			return buf, closed, why
		}
		<-q.wake
	}
}

// overflowed reports whether the queue was closed for overflow: what sendLoop
// still holds is then not worth writing before the close frame.
func (q *sendQueue) overflowed() bool { return q.overrun.Load() }

// written records that sendLoop wrote n more messages to the socket, and
// returns the writer token taken by the popAll that handed them out.
func (q *sendQueue) written(n int) {
	q.mu.Lock()
	q.sent += int64(n)
	if q.writer == writerSendLoop {
		q.writer = writerNone
	}
	q.mu.Unlock()
}

// pushedCount is the number of messages ever queued.
func (q *sendQueue) pushedCount() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pushed
}

// writtenCount is the number of messages sendLoop reported written. Messages
// are written in queue order, so writtenCount() >= n means the first n
// queued messages are on the socket.
func (q *sendQueue) writtenCount() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sent
}
