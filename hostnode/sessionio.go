package hostnode

import (
	"context"

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
//
// A SessionIO is bound to the session whose Dial got its context
// (WithSessionIO); unbound (another Dial, or a Host that does not dial
// through this package) Hold and Release do nothing and MoreBuffered says
// true (nothing is known, so nothing is promised).
type SessionIO struct {
	w *cork.Writer  // the session's, set by Dial
	c *quickAckConn // the session's, set by Dial

	// Owned by the reader (Took, MoreBuffered, NextLen): bytes of Node's
	// frames read through the library, counted from the end of the
	// handshake, and the messages taken.
	consumed int64
	taken    int64
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
		b.consumed = b.c.received.Load()
		b.c.frames.start()
	}
}

// Took is called by the session's reader after each message it read, with
// its payload's length.
func (b *SessionIO) Took(msgLen int) {
	if b != nil {
		b.consumed += int64(msgLen + frameHeaderLen(msgLen))
		b.taken++
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
	n, _ := b.c.frames.sizeOf(b.taken)
	return n
}

// MoreBuffered reports whether more of Node's bytes than the reader took
// (Took) are already read ahead by the WebSocket library or wait in the
// kernel's receive queue, so the next read returns without waiting. Only
// the reader calls it.
//
// The read-ahead is what the socket delivered minus the frames the reader
// took: Node sends every message as one unmasked frame and no control frame
// but the close. A frame not counted (a close, a fragment) can only make it
// say true: a missed batch, never a lost or reordered message.
func (b *SessionIO) MoreBuffered() bool {
	if b == nil || b.c == nil {
		return true
	}
	if b.c.received.Load() > b.consumed {
		return true
	}
	return b.c.kernelQueued()
}

// frameHeaderLen is the size of the header of an unmasked frame (server to
// client, RFC 6455 5.2) that carries n bytes.
func frameHeaderLen(n int) int {
	switch {
	case n < 126:
		return 2
	case n <= 0xFFFF:
		return 4
	default:
		return 10
	}
}
