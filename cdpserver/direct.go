package cdpserver

import (
	"context"
	"errors"

	"github.com/coder/websocket"
)

// Direct writes (issue 12, P9). A message from Node normally goes hostLoop →
// sendQueue → sendLoop → socket: one goroutine wake-up per message that a
// bare TCP splice does not pay. When the queue is empty, nobody is writing,
// no further Node message is already on its way (hostnode.SessionIO's
// MoreBuffered: those go to sendLoop, which writes them in one corked
// batch) and the socket has room, hostLoop writes the message itself.
//
// Why this keeps the guarantees of the queue (queue.go, Session's doc):
//   - Order: the writer token (sendQueue.writer, under its mutex) is taken by
//     popAll for each of sendLoop's batches and by takeDirect for one direct
//     message, which is taken only while nothing is queued. Anything queued
//     during a direct write (and the close frame) waits for its release,
//     which wakes sendLoop.
//   - A stuck window never blocks hostLoop: a direct write happens only when
//     the socket's unsent bytes (SIOCOUTQ) are under directMaxUnsent and the
//     message is at most directMaxMessage. The kernel send buffer is fixed at
//     devToolsSendBuffer (256 KiB, which Linux doubles), so such a write
//     always fits and write(2) returns at once. Anything else is queued as
//     before, and the overflow policy applies to it unchanged.
//   - Counters: a direct message counts as pushed when the token is taken and
//     as sent when it is written, so awaitAnswersWritten sees it like any
//     queued one.
//   - Write errors end the session as sendLoop's do (writeFailed); the queue
//     is closed with errDevToolsWrite so sendLoop stops without writing.
//   - The message is written as it is, never modified (it may be shared).
const (
	directMaxMessage = 16 << 10
	directMaxUnsent  = 32 << 10
)

var errDevToolsWrite = errors.New("cdpserver: writing to the DevTools window failed")

// writer says who holds the right to write to a DevTools socket.
type writer uint8

const (
	writerNone     writer = iota
	writerSendLoop        // a batch handed out by popAll, until written
	writerDirect          // one message written by its producer (writeDirect)
)

// idle reports whether a direct write could take the token now; a cheap
// look before the SIOCOUTQ syscall.
func (q *sendQueue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.closed && len(q.items) == 0 && q.writer == writerNone
}

// takeDirect takes the writer token for one message its producer writes
// itself: only while the queue is open, empty and nobody writes. The message
// counts as pushed from here on.
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

// releaseDirect returns the token; ok says the message is on the socket.
// Otherwise the socket is broken (maybe with a frame half written): the queue
// closes and drops what it holds, since nothing can follow.
func (q *sendQueue) releaseDirect(ok bool) {
	q.mu.Lock()
	q.writer = writerNone
	if ok {
		q.sent++
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

// enqueueFromHost is enqueue for hostLoop's relayed messages: written
// directly when that is safe (see above), queued otherwise.
func (sess *Session) enqueueFromHost(msg []byte) {
	if !sess.writeDirect(msg) {
		sess.enqueue(msg)
	}
}

// writeDirect writes msg to the DevTools socket from the caller's goroutine
// if the queue is idle and the socket has room; it reports whether it took
// msg (written, or the session ended on a write error).
func (sess *Session) writeDirect(msg []byte) bool {
	if sess.wire == nil || len(msg) > directMaxMessage || !sess.out.idle() ||
		sess.readIO.MoreBuffered() || !sess.wire.sendRoom(directMaxUnsent) {
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
	err := sess.dt.Write(context.Background(), websocket.MessageText, msg)
	sess.out.releaseDirect(err == nil)
	if err != nil {
		sess.writeFailed()
	}
	return true
}
