package cdpserver

import (
	"context"
	"errors"

	"github.com/coder/websocket"
)

// Direct writes (docs/agent-note.md "Relay cost"). A message from Node normally goes hostLoop →
// sendQueue → sendLoop → socket: one goroutine wake-up per message that a
// bare TCP splice does not pay. When the queue is empty, nobody is writing
// and the socket has room, hostLoop writes the message itself, in a run: it
// takes the writer token, corks the connection and adds each following Node
// message while more of them are already on their way (hostnode.SessionIO's
// MoreBuffered) and nothing was queued meanwhile; the run goes out in one
// write syscall when no further message is buffered (before hostLoop's next
// read could wait), when it reaches directMaxRun, or when a message cannot
// join it (that one is queued, after the run).
//
// Why this keeps the guarantees of the queue (queue.go, Session's doc):
//   - Order: the writer token (sendQueue.writer, under its mutex) is taken by
//     popAll for each of sendLoop's batches and by takeDirect for a run,
//     which is opened and extended only while nothing is queued. Anything
//     queued during a run (and the close frame) waits for its release, which
//     wakes sendLoop.
//   - A stuck window never blocks hostLoop: a run opens only when the
//     socket's unsent bytes (SIOCOUTQ) are under directMaxUnsent, takes
//     messages of at most directMaxMessage and holds at most directMaxRun
//     bytes (plus frame headers: under cork.Max). The kernel send buffer is
//     fixed at devToolsSendBuffer (256 KiB, which Linux doubles), so the
//     run's write always fits and write(2) returns at once. While a run is
//     open, hostLoop reads only what is already buffered (at worst the rest
//     of a frame Node is sending). Anything else is queued as before, and
//     the overflow policy applies to it unchanged.
//   - Counters: a direct message counts as pushed when it joins a run and as
//     sent when the run is written, so awaitAnswersWritten sees it like any
//     queued one.
//   - Write errors end the session as sendLoop's do (writeFailed); the queue
//     is closed with errDevToolsWrite so sendLoop stops without writing.
//   - The message is written as it is, never modified (it may be shared).
const (
	directMaxMessage = 16 << 10
	directMaxUnsent  = 32 << 10
	directMaxRun     = 32 << 10 // < cork.Max: a run is written once, at its end
)

var errDevToolsWrite = errors.New("cdpserver: writing to the DevTools window failed")

// writer says who holds the right to write to a DevTools socket.
type writer uint8

const (
	writerNone     writer = iota
	writerSendLoop        // a batch handed out by popAll, until written
	writerDirect          // a run written by hostLoop (startRun … endRun)
)

// idle reports whether a run could take the token now; a cheap look before
// the SIOCOUTQ syscall.
func (q *sendQueue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.closed && len(q.items) == 0 && q.writer == writerNone
}

// takeDirect takes the writer token for a run's first message (hostLoop
// writes it itself): only while the queue is open, empty and nobody writes.
// The message counts as pushed from here on.
func (q *sendQueue) takeDirect() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.items) > 0 || q.writer != writerNone {
		return false
	}
	q.writer = writerDirect
	q.pushed++
	return true
}

// extendDirect counts one more message of an open run (writerDirect held by
// the caller): only while the queue is open and still empty, so nothing
// queued meanwhile is overtaken.
func (q *sendQueue) extendDirect() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.items) > 0 || q.writer != writerDirect {
		return false
	}
	q.pushed++
	return true
}

// releaseDirect returns the token; ok says the n messages of the run are on
// the socket. Otherwise the socket is broken (maybe with a frame half
// written): the queue closes and drops what it holds, since nothing can
// follow.
func (q *sendQueue) releaseDirect(ok bool, n int) {
	q.mu.Lock()
	q.writer = writerNone
	if ok {
		q.sent += int64(n)
	} else {
		q.closeLocked(errDevToolsWrite)
		clear(q.items)
		q.items, q.bytes = q.items[:0], 0
	}
	wake := len(q.items) > 0 || q.closed
	q.mu.Unlock()
	if wake {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// directRun is hostLoop's open run of direct writes: it holds the writer
// token and the DevTools connection is corked.
type directRun struct {
	n      int // messages written into the cork
	bytes  int
	failed bool // a write of the run failed: the session ends at endRun
}

// open reports whether a run holds the token: it takes its first message
// as it opens.
func (r *directRun) open() bool { return r.n > 0 }

// enqueueFromHost is enqueue for hostLoop's relayed messages: written
// directly when that is safe (see above), queued otherwise.
func (sess *Session) enqueueFromHost(msg []byte) {
	if sess.direct.open() {
		if sess.extendRun(msg) {
			return
		}
		sess.endRun()
		sess.enqueue(msg)
		return
	}
	if !sess.startRun(msg) {
		sess.enqueue(msg)
	}
}

// startRun opens a run with msg if the queue is idle and the socket has
// room; it reports whether it took msg.
func (sess *Session) startRun(msg []byte) bool {
	if sess.wire == nil || len(msg) > directMaxMessage || !sess.out.idle() || !sess.wire.sendRoom(directMaxUnsent) {
		return false
	}
	select {
	case <-sess.sendDone: // sendLoop stopped writing: its close frame may be out
		return false
	default:
	}
	if !sess.out.takeDirect() {
		return false
	}
	sess.wire.out.Cork()
	sess.direct = directRun{}
	sess.writeRun(msg)
	return true
}

// extendRun adds msg to the open run if it is small, the run stays within
// directMaxRun and nothing was queued meanwhile.
func (sess *Session) extendRun(msg []byte) bool {
	if sess.direct.failed || len(msg) > directMaxMessage || sess.direct.bytes+len(msg) > directMaxRun || !sess.out.extendDirect() {
		return false
	}
	sess.writeRun(msg)
	return true
}

// writeRun writes msg into the corked connection: no syscall, since a run
// stays below cork.Max.
func (sess *Session) writeRun(msg []byte) {
	sess.direct.n++
	sess.direct.bytes += len(msg)
	if sess.dt.Write(context.Background(), websocket.MessageText, msg) != nil {
		sess.direct.failed = true
	}
}

// endRun writes the open run in one syscall and returns the writer token.
// hostLoop ends it as soon as no further Node message is on its way
// (readHost), before any read that could wait, and when a message cannot
// join it.
func (sess *Session) endRun() {
	if !sess.direct.open() {
		return
	}
	ok := sess.wire.out.Uncork() == nil && !sess.direct.failed
	sess.out.releaseDirect(ok, sess.direct.n)
	sess.direct = directRun{}
	if !ok {
		sess.writeFailed()
	}
	sess.poke() // the run counts as written only now (awaitAnswersWritten)
}
