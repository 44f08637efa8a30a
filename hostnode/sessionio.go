package hostnode

import (
	"context"
	"sync/atomic"

	"github.com/inspector-worker/inspector-worker/internal/cork"
)

// SessionIO is a relay's handle on one Node session's socket, below the
// WebSocket library:
//   - Hold and Release let the one goroutine that writes requests send several
//     of them in one write syscall: between the two, the session's writes
//     collect (bounded by cork.Max) and go out together. It is for a relay
//     that already holds the next requests in hand; holding a write while
//     waiting for anything else would delay Node's answer.
//   - MoreBuffered lets the one goroutine that reads Node's messages know
//     whether another one is already on its way (read ahead by the library,
//     or in the kernel), so it can leave the write of several to one batch.
//   - Drained lets any goroutine know whether the reader has taken every
//     message Node sent so far, so a session is closed only after Node's
//     last messages were relayed (the library's close handshake discards
//     what is still unread).
//
// A SessionIO is bound to the session whose Dial got its context
// (WithSessionIO); unbound (another Dial, or a Host that does not dial
// through this package) Hold and Release do nothing, MoreBuffered says false
// and NextLen 0.
type SessionIO struct {
	w *cork.Writer  // the session's, set by Dial
	c *quickAckConn // the session's, set by Dial

	// Written by the reader (Took), read by Drained from any goroutine:
	// the messages it took since the handshake.
	taken atomic.Int64
}

type batchKey struct{}

// WithSessionIO returns a context for Dial (or a Host's OpenSession) that
// binds b to the session it opens.
func WithSessionIO(ctx context.Context, b *SessionIO) context.Context {
	return context.WithValue(ctx, batchKey{}, b)
}

// Hold starts holding writes.
func (b *SessionIO) Hold() {
	if b != nil && b.w != nil {
		b.w.Cork()
	}
}

// Release writes what was held; an error means the connection is broken.
func (b *SessionIO) Release() error {
	if b == nil || b.w == nil {
		return nil
	}
	return b.w.Uncork()
}

// handshakeDone marks the end of the WebSocket handshake: from here on every
// byte read is part of Node's frames. Node sends nothing before a request,
// so nothing of a frame was read with the handshake.
func (b *SessionIO) handshakeDone() {
	if b != nil && b.c != nil {
		b.c.frames.start()
	}
}

// Took is called by the session's reader after each message it read.
func (b *SessionIO) Took() {
	if b != nil {
		b.taken.Add(1)
	}
}

// NextLen is the payload length of the message the reader is reading now,
// when it is large (≥ 16 KiB) and its frame header was seen; 0 otherwise.
// The reader asks once the library has read the header (websocket.Conn's
// Reader returned). It is a hint: a length it gets wrong (a frame not
// counted, a fragmented message) costs only a copy, if the reader checks
// it against what it reads.
func (b *SessionIO) NextLen() int64 {
	if b == nil || b.c == nil {
		return 0
	}
	n, _ := b.c.frames.sizeOf(b.taken.Load())
	return n
}

// MoreBuffered reports whether the next of Node's messages has started to
// arrive (its first frame header read ahead by the WebSocket library) or
// bytes wait in the kernel's receive queue, so the next read does not wait
// for Node. Only the reader calls it. Unbound, or when the frame tracker
// gave up, it says false: the relay then ends a batch at every message,
// which only costs syscalls, while a wrong true would hold a batch across a
// read that waits.
func (b *SessionIO) MoreBuffered() bool {
	if b == nil || b.c == nil {
		return false
	}
	if b.c.frames.started() > b.taken.Load() {
		return true
	}
	return b.c.kernelQueued()
}

// Taken is the number of messages the reader took: a closer waiting for
// Drained sees the reader making progress. Any goroutine may call it.
func (b *SessionIO) Taken() int64 {
	if b == nil {
		return 0
	}
	return b.taken.Load()
}

// Drained reports whether the reader has taken every message Node had sent
// when it was called: no byte waits in the kernel's receive queue and every
// message whose first frame arrived (read ahead by the library) was taken.
// A message the reader has taken is in its hands: it is relayed whatever
// happens to the socket next. known is false when this cannot be told
// (unbound, the frame tracker off or given up, no SIOCINQ outside Linux);
// drained is then false too. Any goroutine may call it.
func (b *SessionIO) Drained() (drained, known bool) {
	if b == nil || b.c == nil || !kernelQueueVisible {
		return false, false
	}
	started, ok := b.c.frames.startedSure()
	if !ok {
		return false, false
	}
	// taken before the kernel: a message taken between the two reads
	// only makes the answer "not drained" for one more look.
	if started > b.taken.Load() {
		return false, true
	}
	return !b.c.kernelQueued(), true
}
