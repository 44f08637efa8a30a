package cdpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/sync/errgroup"

	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/hostrealm"
	"github.com/inspector-worker/inspector-worker/network"
	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/pagerealm"
)

// maxDevToolsMessage bounds one message read from a DevTools window. The
// largest thing the frontend sends is a whole script (Debugger.setScriptSource
// after an edit, Runtime.evaluate of pasted code); 64 MiB covers both.
const maxDevToolsMessage = 64 << 20

// maxCloseReason is what fits in a WebSocket close frame (125 bytes minus the
// 2-byte status code).
const maxCloseReason = 123

// Session is one DevTools connection and its own Node inspector session.
//
// Goroutines (joined by run): readLoop reads DevTools and dispatches — it is
// the only writer to the host connection; hostLoop reads Node and enqueues;
// sendLoop is the writer to the DevTools connection (hostLoop writes runs of
// small messages itself while the queue is idle and the socket has room:
// direct.go). Nothing but sendLoop ever blocks on the DevTools socket, so a
// stuck window holds back neither Node nor another window (see queue.go for
// the overflow policy).
// Timers: the overflow watchdog (overflowWriteGrace) and the retiring Node
// session's idle timer. The close gate's hold (awaitAnswersWritten) runs in
// readLoop, inside dt.Read.
type Session struct {
	srv     *Server         // Static after construction.
	id      int64           // Static after construction.
	tr      transport       // Static after construction: the client (transport.go). Written by sendLoop, or by hostLoop holding the writer token (direct.go).
	dt      *websocket.Conn // Static after construction: a window's socket (tr's), nil for a flat session; direct runs write it.
	wire    *gatedConn      // Static after construction: dt's connection, corked by sendLoop; nil for a flat session (no direct runs).
	out     *sendQueue      // Static after construction.
	objects *object.Table   // Static after construction.
	net     *network.Window // Static after construction: the window's Network state.

	holdHost bool // Owned by readLoop (relay runs in it): hold relayed requests, more follow at once.
	hostHeld bool // Owned by readLoop: a relayed request is held (releaseHost writes it).

	dtClosed  atomic.Bool // the DevTools side ended first
	retiring  atomic.Bool // the window was closed for falling behind (retire)
	retiredAt atomic.Int64
	idle      atomic.Pointer[time.Timer]
	watchdog  atomic.Pointer[time.Timer] // overflowWriteGrace; stopped when run returns

	// The close gate's view (awaitAnswersWritten): settling counts producers
	// between taking a request out of pending and queueing its answer;
	// holding says a hold waits for progress, which pokes it.
	settling atomic.Int32
	holding  atomic.Bool
	progress chan struct{} // cap 1

	sendDone chan struct{} // closed when sendLoop stops writing messages (stopSending)
	stopOnce sync.Once

	page     *pagerealm.Window // Static after construction: the window as the page backend sees it.
	refusals refusalLog        // Has its own lock (debuglog.go).

	// The Node session. Written only by readLoop (relay), except while a
	// watch-mode rebind replays the window's state into a new session that
	// is not yet published here (watch.go). Read by hostLoop, which is handed
	// each new session through next.
	hostMu    sync.Mutex            // Taken before mu; a leaf otherwise. Lock order: see docs/locks.md.
	host      *websocket.Conn       // Guarded by hostMu; nil while the host is down (watch mode only).
	hostIO    *hostnode.SessionIO   // Guarded by hostMu: host's socket below the library (relay), nil when not bound.
	direct    directRun             // Owned by hostLoop: its open run of direct writes (direct.go).
	downWhy   string                // Guarded by hostMu: why host is nil.
	next      *rebinding            // Guarded by hostMu: a new session for hostLoop to take (watch mode).
	loopDone  bool                  // Guarded by hostMu: hostLoop returned; a rebind closes its session instead.
	resetDone bool                  // Guarded by hostMu: hostLoop has told the window the host is gone (hostLost).
	lateNotes [][]byte              // Guarded by hostMu: Console lines about the gone host, queued after that reset.
	rebound   chan struct{}         // cap 1: next was set
	dtGone    chan struct{}         // closed when readLoop ends
	watch     *hostrealm.WatchState // Static after construction; nil without Options.Watch.

	mu         sync.Mutex       // Lock order: see docs/locks.md.
	pending    map[int64]string // Guarded by mu: request id → method, relayed to the host and not yet answered.
	hostClosed bool             // Guarded by mu.
	goneReason string           // Guarded by mu: why the host session ended.

	threads  *threadTable // Static after construction: the window's worker threads (threads.go).
	children *childTable  // Static after construction: the window's child processes (children.go).
	native   *nativeTable // Static after construction: the window's native pages (native.go).

	// scope: the page target the session is on (pagetarget.go); nil for
	// the combined target. Static after construction.
	scope *pageScope
}

// closeState is queued as the queue's close reason: sendLoop sends it as the
// WebSocket close frame after the last message.
type closeState struct {
	code   websocket.StatusCode
	reason string
}

func (c *closeState) Error() string { return c.reason }

func (s *Server) handleDevTools(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	pt, isPage := s.pageTarget(id)
	if id != s.targetID && !isPage {
		http.Error(w, "no target with id "+quoteShort(id)+"; see /json/list", http.StatusNotFound)
		return
	}
	if reason := originProblem(r.Header.Get("Origin")); reason != "" {
		s.logf("refused DevTools connection: %s", reason)
		http.Error(w, reason, http.StatusForbidden)
		return
	}
	if isPage {
		s.handlePageTarget(w, r, pt) // pagetarget.go
		return
	}
	host, batch, gen, status, reason := s.dialWindow(r.Context())
	if host == nil {
		s.logf("refused DevTools connection from %s: %s", r.RemoteAddr, reason)
		http.Error(w, reason, status)
		return
	}
	gate := &closeGate{ResponseWriter: w}
	dt, err := websocket.Accept(gate, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // originProblem checked it, with a reason the user can read
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		s.releaseWindow()
		hostnode.CloseSession(host)
		return
	}
	dt.SetReadLimit(maxDevToolsMessage)
	sess, closing := s.registerWindow(r.Context(), gen, &wsTransport{conn: dt}, dt, gate.conn, host, batch)
	if sess == nil {
		dt.Close(websocket.StatusGoingAway, truncate(closing, maxCloseReason))
		return
	}
	defer s.removeSession(sess)
	gate.holdCloseWith(sess.awaitAnswersWritten)
	s.logf("DevTools connection %d opened (%s)", sess.id, r.RemoteAddr)
	sess.run()
	s.logf("DevTools connection %d closed", sess.id)
}

// maxHostMessageLimit mirrors hostnode.MaxHostMessage for connections handed
// in by a Host implementation that did not set it.
const maxHostMessageLimit = 256 << 20

// overflowReason is the close reason a window gets when it stopped reading.
const overflowReason = "DevTools window stopped reading; closed so the host is not held back"

// hostReasonWait bounds how long a dropped host session waits for the host's
// own account of why (its exit code) before telling the window.
const hostReasonWait = 2 * time.Second

// overflowWriteGrace bounds how long sendLoop may stay blocked in a Write to
// a window closed for falling behind before the connection is dropped
// without a close frame. A window that reads at all drains what the kernel
// holds for it (a few MB on loopback) well within it and then reads the
// 1008 close frame; one that never reads would otherwise keep sendLoop, and
// the session, forever.
const overflowWriteGrace = 10 * time.Second

// closeDrainWait bounds how long a window's close frame is held back while
// the answers to its earlier requests are outstanding (see closegate.go).
// Node answers ordinary requests in milliseconds; a request that waits on the
// host (a long evaluation, a host paused at a breakpoint) must not keep a
// closing connection open, so after this the close goes through and such
// answers are lost, as the client asked.
const closeDrainWait = 2 * time.Second

func (sess *Session) run() {
	if sess.scope != nil {
		sess.runPage() // a page target's session has no Node session (pagetarget.go)
		return
	}
	var g errgroup.Group
	g.Go(func() error { sess.guard("sendLoop", true, sess.sendLoop); return nil })
	g.Go(func() error { sess.guard("hostLoop", false, sess.hostLoop); return nil })
	g.Go(func() error { sess.guard("readLoop", false, sess.readLoop); return nil })
	g.Wait()
	if t := sess.watchdog.Load(); t != nil {
		t.Stop()
	}
}

// guard runs one of the session's loops. A panic in it (a bug: requests and
// host messages recover their own) ends the window with 1011 and a reason
// instead of killing the worker. The writer's own guard also writes the close
// frame, since no one else may.
func (sess *Session) guard(loop string, writer bool, f func()) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		sess.srv.logf("DevTools connection %d: panic in %s: %v\n%s", sess.id, loop, p, debug.Stack())
		reason := fmt.Sprintf("inspector-worker failed (%s: %v); reopen DevTools", loop, p)
		sess.finish(websocket.StatusInternalError, reason)
		sess.closeHost()
		if writer {
			sess.stopSending()
			sess.closeDevTools(&closeState{websocket.StatusInternalError, reason})
		}
	}()
	f()
}

// readLoop reads DevTools requests until the window closes, then ends the
// host session.
func (sess *Session) readLoop() {
	ctx := context.Background()
	for {
		msg, err := sess.tr.read(ctx)
		if err != nil {
			if sess.hostHeld {
				sess.releaseHost()
			}
			sess.dtClosed.Store(true)
			close(sess.dtGone)
			sess.detachThreadsInNode() // threads.go
			sess.closeHost()
			sess.out.close(&closeState{websocket.StatusNormalClosure, "DevTools window closed"})
			return
		}
		// While the next request is already in hand, requests relayed to
		// Node are held and go out in one write (hostnode.SessionIO);
		// the last of them releases the lot. readLoop never waits on the
		// socket while holding: it holds only when a whole message is
		// buffered.
		sess.holdHost = sess.wire != nil && sess.wire.messageBuffered()
		sess.handle(msg)
		if !sess.holdHost && sess.hostHeld {
			sess.releaseHost()
		}
	}
}

// releaseHost writes the requests held for the current host session.
func (sess *Session) releaseHost() {
	sess.hostHeld = false
	sess.hostMu.Lock()
	b := sess.hostIO
	sess.hostMu.Unlock()
	if b.Release() != nil {
		sess.closeHost() // hostLoop sees the broken session too and answers what is pending
	}
}

// hostLoop relays Node's messages until the host session ends. In watch
// mode a session that ends while the window stays is followed by the next
// host's (hostLost, awaitRebind in watch.go).
func (sess *Session) hostLoop() {
	defer sess.hostLoopDone()
	sess.hostMu.Lock()
	conn, sio := sess.host, sess.hostIO
	sess.hostMu.Unlock()
	for {
		err := sess.readHost(conn, sio)
		if !sess.keepWindow() {
			if !sess.dtClosed.Load() {
				// The process exit that explains a dropped session usually
				// arrives a moment later: wait for it so the window is told
				// "exited with code N" rather than "EOF".
				if h, _ := sess.srv.currentHost(); h != nil {
					select {
					case <-h.Done():
					case <-time.After(hostReasonWait):
					}
				}
			}
			sess.endHost(fmt.Sprintf("lost the Node host session: %v", err), true)
			return
		}
		sess.hostLost(conn, fmt.Sprintf("the Node host session ended (%v)", err))
		next := sess.awaitRebind()
		if next == nil {
			return
		}
		conn, sio = next.conn, next.batch
		if next.note != nil {
			sess.enqueue(next.note)
		}
		sess.replayInto(next)
	}
}

// readHost relays one Node session's messages until it ends. sio is the
// session's (nil if not dialled through hostnode): it tells whether more of
// Node's messages follow at once (a direct run goes on, direct.go) and the
// size of a large one (msgReader).
func (sess *Session) readHost(conn *websocket.Conn, sio *hostnode.SessionIO) error {
	ctx := context.Background()
	rd := msgReader{size: sio.NextLen}
	for {
		if sess.direct.open() && !sio.MoreBuffered() {
			sess.endRun() // before a read that may wait
		}
		msg, err := rd.read(ctx, conn)
		if err != nil {
			sess.endRun()
			return err
		}
		sio.Took()
		if sess.retireTick() {
			continue
		}
		// An answer leaves pending before it is queued: settling covers the
		// gap for awaitAnswersWritten.
		sess.settling.Add(1)
		sess.fromHost(msg)
		sess.settling.Add(-1)
		sess.poke()
	}
}

// sendLoop writes to the DevTools socket; hostLoop does only while it holds
// the queue's writer token (direct.go).
func (sess *Session) sendLoop() {
	ctx := context.Background()
	var batch [][]byte
	for {
		batch, closed, why := sess.out.next(batch)
		if closed {
			sess.stopSending()
			if !errors.Is(why, errDevToolsWrite) { // else endRun's writeFailed ended it
				sess.closeDevTools(why)
			}
			return
		}
		written := 0
		corked := len(batch) > 1 && sess.wire != nil
		if corked {
			sess.wire.out.Cork()
		}
		for _, m := range batch {
			if sess.out.overflowed() {
				// The window is closed for falling behind: the rest of the
				// batch would only delay the close frame that says so.
				break
			}
			if err := sess.tr.write(ctx, m); err != nil {
				sess.writeFailed()
				return
			}
			written++
		}
		if corked && sess.wire.out.Uncork() != nil {
			sess.writeFailed()
			return
		}
		clear(batch)
		sess.out.written(written)
		sess.poke()
	}
}

// writeFailed ends a session whose DevTools socket is closed or broken, or
// has a frame half written: no close frame can follow.
func (sess *Session) writeFailed() {
	sess.stopSending()
	sess.tr.closeNow()
	sess.closeHost()
}

// stopSending tells a held close frame (awaitAnswersWritten) that nothing
// more will be written before sendLoop's own close.
func (sess *Session) stopSending() {
	sess.stopOnce.Do(func() { close(sess.sendDone) })
}

// closeDevTools writes the close frame with the queue's close reason (Close
// does the handshake, bounded by the library), then ends the host session.
// Only sendLoop calls it.
func (sess *Session) closeDevTools(why error) {
	var cs *closeState
	switch {
	case errors.As(why, &cs):
	case errors.Is(why, errQueueOverflow):
		cs = &closeState{websocket.StatusPolicyViolation, overflowReason}
	default:
		cs = &closeState{websocket.StatusInternalError, fmt.Sprint(why)}
	}
	sess.tr.close(cs.code, cs.reason)
	sess.closeHost()
}

// enqueue hands msg to sendLoop. On overflow the session ends (queue.go):
// sendLoop stops writing and sends the 1008 close frame itself, as the only
// writer; a concurrent Close could not get its frame past a blocked Write
// and would end in a dropped connection (an EOF for the window).
func (sess *Session) enqueue(msg []byte) {
	if err := sess.out.push(msg); errors.Is(err, errQueueOverflow) && sess.retire() {
		sess.srv.logf("DevTools connection %d: closed, it stopped reading (%d messages or %d MiB queued)",
			sess.id, sess.out.maxMessages, sess.out.maxBytes>>20)
		sess.watchdog.Store(time.AfterFunc(overflowWriteGrace, func() {
			select {
			case <-sess.sendDone: // the close is under way, bounded by the library
			default:
				sess.srv.logf("DevTools connection %d: dropped, it read nothing for %v", sess.id, overflowWriteGrace)
				sess.tr.closeNow()
			}
		}))
		sess.poke()
	}
}

// poke wakes a hold waiting in awaitAnswersWritten. It runs after the state
// change it reports; the hold sets holding before it first looks, so with
// sequentially consistent atomics no change is missed.
func (sess *Session) poke() {
	if sess.holding.Load() {
		select {
		case sess.progress <- struct{}{}:
		default:
		}
	}
}

// awaitAnswersWritten is the close gate's hold (closegate.go): it returns
// once every request read before the window's close frame is answered and
// the answer written, or sendLoop has stopped writing, or closeDrainWait has
// passed, or abort is closed (the connection is gone). It runs in readLoop,
// inside dt.Read, so no new request arrives while it waits.
//
// Answers to requests routed to client pages (script reads) are not tracked:
// they wait at most closeDrainWait like anything else the hold cannot see.
func (sess *Session) awaitAnswersWritten(abort <-chan struct{}) {
	sess.holding.Store(true)
	defer sess.holding.Store(false)
	timer := time.NewTimer(closeDrainWait)
	defer timer.Stop()
	target := int64(-1) // messages queued when the last answer was
	for {
		if target < 0 && sess.answersQueued() {
			target = sess.out.pushedCount()
		}
		if target >= 0 && sess.out.writtenCount() >= target {
			return
		}
		select {
		case <-sess.progress:
		case <-sess.sendDone:
			return
		case <-abort:
			return
		case <-timer.C:
			sess.srv.logf("DevTools connection %d: closing with answers outstanding after %v", sess.id, closeDrainWait)
			return
		}
	}
}

// answersQueued reports whether no relayed request is waiting on the host
// and no answer is between pending and the queue. The order of the two
// reads matters: see hostLoop and finish.
func (sess *Session) answersQueued() bool {
	sess.mu.Lock()
	n := len(sess.pending)
	sess.mu.Unlock()
	return n == 0 && sess.settling.Load() == 0
}

// Retiring a Node session. Closing one while Node is still writing a flood
// to it crashed Node 20 (SIGSEGV, exit 139, seen in the stuck-window test),
// taking every other window down with the host. So the session of a window
// closed for falling behind is drained and discarded until Node has been
// quiet for retireIdle (or retireMax has passed), and only then closed.
const (
	retireIdle = 500 * time.Millisecond
	retireMax  = 10 * time.Second
)

// retire reports whether this call retired the session (the first does).
func (sess *Session) retire() bool {
	if !sess.retiring.CompareAndSwap(false, true) {
		return false
	}
	sess.retiredAt.Store(time.Now().UnixNano())
	sess.idle.Store(time.AfterFunc(retireIdle, sess.closeHostNow))
	return true
}

// retireTick runs in hostLoop for each message of a retiring session; it
// reports whether the message is to be discarded.
func (sess *Session) retireTick() bool {
	if !sess.retiring.Load() {
		return false
	}
	if time.Since(time.Unix(0, sess.retiredAt.Load())) > retireMax {
		sess.closeHostNow()
	} else if t := sess.idle.Load(); t != nil {
		t.Reset(retireIdle)
	}
	return true
}

// endHost answers every request still waiting on the host with an error,
// then queues the close of the DevTools connection with a reason: the host's
// own (its exit code, when it reports one) if preferHost and the host is
// gone, else reason.
func (sess *Session) endHost(reason string, preferHost bool) {
	if h, _ := sess.srv.currentHost(); preferHost && h != nil {
		select {
		case <-h.Done():
			reason = h.Reason()
		default:
		}
	}
	sess.finish(websocket.StatusGoingAway, reason)
}

// finish answers every pending request with an error naming reason and
// queues the close (code, reason) after them. Requests that arrive afterwards
// are answered with an error by relay (hostClosed is set under the same lock
// that guards pending), so each request gets exactly one answer. Only the
// first call counts.
func (sess *Session) finish(code websocket.StatusCode, reason string) {
	sess.settling.Add(1) // pending empties before its answers are queued
	defer sess.poke()
	defer sess.settling.Add(-1)
	sess.mu.Lock()
	if sess.hostClosed {
		sess.mu.Unlock()
		return
	}
	sess.hostClosed = true
	sess.goneReason = reason
	pending := sess.pending
	sess.pending = nil
	sess.mu.Unlock()

	sess.answerUnanswered(pending, reason)
	sess.closeThreads(reason, false)
	sess.closeChildren(reason)
	sess.closeNative(reason, true)
	sess.out.close(&closeState{code, reason})
}

// hostFinishDrain bounds how long a window's Node session stays open after
// the host finished, for answers Node sent before it finished to reach the
// window. The answer to the Debugger.resume that let the script end is sent
// just before Node says the script finished (to the watcher session); closing
// the window's session at once let coder/websocket's close handshake discard
// it unread, and the window got "not answered: the host exited" (1 run in 5).
// Node, waiting for its sessions to disconnect, flushes them within
// milliseconds; a host that died answers nothing, and then this is the wait.
const hostFinishDrain = 250 * time.Millisecond

// closeHostAfterAnswers closes the Node session once no relayed request is
// waiting for Node (or after hostFinishDrain) and hostLoop has taken every
// message Node sent before it finished (awaitHostDrained).
func (sess *Session) closeHostAfterAnswers() {
	deadline := time.Now().Add(hostFinishDrain)
	for !sess.answersQueued() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	sess.hostMu.Lock()
	sio := sess.hostIO
	sess.hostMu.Unlock()
	sess.awaitHostDrained(sio)
	sess.closeHost()
}

// Draining a finished host's session. Node has written its last messages
// (the console lines of a script that logs and ends at once) to every
// session before it says the script finished, but hostLoop may not have
// read them yet, and the close handshake (coder/websocket's Close) reads and
// DISCARDS whatever is still unread: under load a window lost up to 37 of
// the last 50 lines (TestRunLastConsoleLinesReachTheWindow). So the session
// is closed once hostLoop has taken every message that had arrived
// (hostnode.SessionIO.Drained), seen twice hostDrainRecheck apart (a
// message still in Node's socket write when the first look found the
// queue empty lands in between).
const (
	// hostDrainRecheck: the second look after an empty queue.
	hostDrainRecheck = 5 * time.Millisecond
	// hostDrainStall: the reader took nothing for this long while messages
	// wait: it is not coming back for them (a retiring window, a stuck
	// relay); they are announced lost.
	hostDrainStall = time.Second
	// hostDrainMax bounds the wait for a reader that keeps taking (a flood
	// logged just before the end): past it the rest is announced lost.
	hostDrainMax = 10 * time.Second
)

// awaitHostDrained waits until hostLoop has taken every message Node sent
// on sio's session, or says in the window's Console that the last ones
// were lost (hostDrainStall, hostDrainMax). Where Drained cannot tell
// (outside Linux), it returns at once, as before the check existed.
func (sess *Session) awaitHostDrained(sio *hostnode.SessionIO) {
	start := time.Now()
	last, lastAt := sio.Taken(), start
	quiet := 0
	for {
		drained, known := sio.Drained()
		if !known {
			return
		}
		if drained {
			if quiet++; quiet == 2 {
				return
			}
		} else {
			quiet = 0
		}
		now := time.Now()
		if n := sio.Taken(); n != last {
			last, lastAt = n, now
		}
		if !drained && (now.Sub(lastAt) > hostDrainStall || now.Sub(start) > hostDrainMax) {
			sess.enqueue(logEntry("warning", "inspector-worker: the host ended before its last messages were relayed to this "+
				"window; some of its final console lines may be missing here (the terminal has them)", now))
			return
		}
		time.Sleep(hostDrainRecheck)
	}
}

// closeHost ends the Node session with a close handshake (see
// hostnode.CloseSession). It does not block. A retiring session is closed by
// its own idle timer instead (see retire).
func (sess *Session) closeHost() {
	if sess.retiring.Load() {
		return
	}
	sess.closeHostNow()
}

// hostConn is the window's current Node session (nil while the host is down
// in watch mode).
func (sess *Session) hostConn() *websocket.Conn {
	sess.hostMu.Lock()
	defer sess.hostMu.Unlock()
	return sess.host
}

// closeHostNow closes the current Node session, if any, with a handshake.
func (sess *Session) closeHostNow() {
	if c := sess.hostConn(); c != nil {
		hostnode.CloseSession(c)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		n--
	}
	return s[:n]
}

// answerUnanswered answers each request relayed to a host that is gone
// (id → method), in id order, with an error naming reason: every DevTools
// request is answered exactly once.
func (sess *Session) answerUnanswered(pending map[int64]string, reason string) {
	ids := make([]int64, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		e := &wireError{codeServerError, fmt.Sprintf("'%s' was not answered: %s", pending[id], reason)}
		sess.enqueue(appendError(nil, []byte(fmt.Sprint(id)), "", e))
	}
}
