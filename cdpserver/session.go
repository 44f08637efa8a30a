package cdpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/sync/errgroup"

	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/object"
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
// sendLoop is the only writer to the DevTools connection. Nothing but
// sendLoop ever blocks on the DevTools socket, so a stuck window holds back
// neither Node nor another window (see queue.go for the overflow policy).
type Session struct {
	srv     *Server         // Static after construction.
	id      int64           // Static after construction.
	dt      *websocket.Conn // Static after construction. Written only by sendLoop.
	host    *websocket.Conn // Static after construction. Written only by readLoop.
	out     *sendQueue      // Static after construction.
	objects *object.Table   // Static after construction.

	dtClosed  atomic.Bool // the DevTools side ended first
	retiring  atomic.Bool // the window was closed for falling behind (retire)
	retiredAt atomic.Int64
	idle      atomic.Pointer[time.Timer]

	client   sessionState // Guarded by srv.clients.mu.
	refusals refusalLog   // Has its own lock (debuglog.go).

	mu         sync.Mutex
	pending    map[int64]string // Guarded by mu: request id → method, relayed to the host and not yet answered.
	hostClosed bool             // Guarded by mu.
	goneReason string           // Guarded by mu: why the host session ended.
}

// closeState is queued as the queue's close reason: sendLoop sends it as the
// WebSocket close frame after the last message.
type closeState struct {
	code   websocket.StatusCode
	reason string
}

func (c *closeState) Error() string { return c.reason }

func (s *Server) handleDevTools(w http.ResponseWriter, r *http.Request) {
	if id := r.PathValue("id"); id != s.targetID {
		http.Error(w, "no target with id "+quoteShort(id)+"; see /json/list", http.StatusNotFound)
		return
	}
	if reason := originProblem(r.Header.Get("Origin")); reason != "" {
		s.logf("refused DevTools connection: %s", reason)
		http.Error(w, reason, http.StatusForbidden)
		return
	}
	if reason := s.reserveWindow(); reason != "" {
		s.logf("refused DevTools connection from %s: %s", r.RemoteAddr, reason)
		http.Error(w, reason, http.StatusServiceUnavailable)
		return
	}
	host, err := s.host.OpenSession(r.Context())
	if err != nil {
		s.releaseWindow()
		http.Error(w, "cannot open a session to the Node host: "+err.Error(), http.StatusBadGateway)
		return
	}
	host.SetReadLimit(maxHostMessageLimit)
	dt, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // originProblem checked it, with a reason the user can read
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		s.releaseWindow()
		hostnode.CloseSession(host)
		return
	}
	dt.SetReadLimit(maxDevToolsMessage)
	sess, closing := s.addSession(func(id int64) *Session {
		return &Session{
			srv: s, id: id, dt: dt, host: host,
			out:     newSendQueue(s.opts.MaxQueuedMessages, s.opts.MaxQueuedBytes),
			objects: object.NewTable(),
			pending: map[int64]string{},
		}
	})
	if sess == nil {
		hostnode.CloseSession(host)
		dt.Close(websocket.StatusGoingAway, truncate(closing, maxCloseReason))
		return
	}
	defer s.removeSession(sess)
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

func (sess *Session) run() {
	var g errgroup.Group
	g.Go(func() error { sess.sendLoop(); return nil })
	g.Go(func() error { sess.hostLoop(); return nil })
	g.Go(func() error { sess.readLoop(); return nil })
	g.Wait()
}

// readLoop reads DevTools requests until the window closes, then ends the
// host session.
func (sess *Session) readLoop() {
	ctx := context.Background()
	for {
		_, msg, err := sess.dt.Read(ctx)
		if err != nil {
			sess.dtClosed.Store(true)
			sess.closeHost()
			sess.out.close(&closeState{websocket.StatusNormalClosure, "DevTools window closed"})
			return
		}
		sess.handle(msg)
	}
}

// hostLoop relays Node's messages until the host session ends.
func (sess *Session) hostLoop() {
	ctx := context.Background()
	for {
		_, msg, err := sess.host.Read(ctx)
		if err != nil {
			if !sess.dtClosed.Load() {
				// The process exit that explains a dropped session usually
				// arrives a moment later: wait for it so the window is told
				// "exited with code N" rather than "EOF".
				select {
				case <-sess.srv.host.Done():
				case <-time.After(hostReasonWait):
				}
			}
			sess.endHost(fmt.Sprintf("lost the Node host session: %v", err), true)
			return
		}
		if sess.retireTick() {
			continue
		}
		sess.fromHost(msg)
	}
}

// sendLoop is the only writer to the DevTools socket.
func (sess *Session) sendLoop() {
	ctx := context.Background()
	var batch [][]byte
	for {
		batch, closed, why := sess.out.next(batch)
		if closed {
			sess.closeDevTools(why)
			return
		}
		for _, m := range batch {
			if err := sess.dt.Write(ctx, websocket.MessageText, m); err != nil {
				sess.dt.CloseNow()
				sess.closeHost()
				return
			}
		}
		clear(batch)
	}
}

func (sess *Session) closeDevTools(why error) {
	var cs *closeState
	switch {
	case errors.As(why, &cs):
	case errors.Is(why, errQueueOverflow):
		cs = &closeState{websocket.StatusPolicyViolation, overflowReason}
	default:
		cs = &closeState{websocket.StatusInternalError, fmt.Sprint(why)}
	}
	sess.dt.Close(cs.code, truncate(cs.reason, maxCloseReason))
	sess.closeHost()
}

// enqueue hands msg to sendLoop. On overflow the session ends (queue.go).
func (sess *Session) enqueue(msg []byte) {
	if err := sess.out.push(msg); errors.Is(err, errQueueOverflow) {
		sess.srv.logf("DevTools connection %d: closed, it stopped reading (%d messages or %d MiB queued)",
			sess.id, sess.out.maxMessages, sess.out.maxBytes>>20)
		// sendLoop may be blocked writing to the stuck window: Close gives up
		// on the close frame after its own timeout and then drops the
		// connection, which unblocks sendLoop.
		sess.retire()
		go sess.dt.Close(websocket.StatusPolicyViolation, overflowReason)
	}
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

func (sess *Session) retire() {
	if !sess.retiring.CompareAndSwap(false, true) {
		return
	}
	sess.retiredAt.Store(time.Now().UnixNano())
	sess.idle.Store(time.AfterFunc(retireIdle, func() { hostnode.CloseSession(sess.host) }))
}

// retireTick runs in hostLoop for each message of a retiring session; it
// reports whether the message is to be discarded.
func (sess *Session) retireTick() bool {
	if !sess.retiring.Load() {
		return false
	}
	if time.Since(time.Unix(0, sess.retiredAt.Load())) > retireMax {
		hostnode.CloseSession(sess.host)
	} else if t := sess.idle.Load(); t != nil {
		t.Reset(retireIdle)
	}
	return true
}

// endHost answers every request still waiting on the host with an error,
// then queues the close of the DevTools connection with a reason: the host's
// own (its exit code, when it reports one) if preferHost and the host is
// gone, else reason. Requests that arrive afterwards are answered with an
// error by relay (hostClosed is set under the same lock that guards
// pending), so each request gets exactly one answer.
func (sess *Session) endHost(reason string, preferHost bool) {
	if preferHost {
		select {
		case <-sess.srv.host.Done():
			reason = sess.srv.host.Reason()
		default:
		}
	}
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

	ids := make([]int64, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		e := &wireError{codeServerError, fmt.Sprintf("'%s' was not answered: %s", pending[id], reason)}
		sess.enqueue(appendError(nil, []byte(fmt.Sprint(id)), "", e))
	}
	sess.out.close(&closeState{websocket.StatusGoingAway, reason})
}

// closeHost ends the Node session with a close handshake (see
// hostnode.CloseSession). It does not block. A retiring session is closed by
// its own idle timer instead (see retire).
func (sess *Session) closeHost() {
	if sess.retiring.Load() {
		return
	}
	hostnode.CloseSession(sess.host)
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
