package cdpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/hostrealm"
)

// The host's child Node processes as child targets of the window, beside
// its worker threads (threads.go) and presented the same way: a
// Target.attachedToTarget of type worker per child, flat sessions. Unlike a
// thread, a child has an inspector of its own (it registered with the run,
// childrealm): each window opens one Node session to each child, relays
// requests in the child's sessionId on it, and returns what the child sends
// with the sessionId added. The per-target bookkeeping (threadTarget: its
// unanswered requests, answered once; detachThread) is the threads'.
// docs/agent-note.md "Child processes" has the decisions.

// ChildRealm is one child process a window can attach to.
type ChildRealm interface {
	Key() string   // unique among the run's children (the pid)
	Title() string // its command line and pid
	OpenSession(ctx context.Context) (*websocket.Conn, error)
	Done() <-chan struct{} // closed when the child is gone or its script finished
	// EndReason says how the child ended ("exited with code 1"), and
	// whether that was a clean exit (code 0); it may wait briefly for the
	// child's report, so call it once the child's session ended.
	EndReason() (how string, clean bool)
	// Hold keeps a child that waits at its start from running until
	// release; ok is false when it does not wait (see childrealm.Child).
	Hold() (release func(), ok bool)
}

// ChildRealms is the run's followed children.
type ChildRealms interface {
	Children() []ChildRealm
	Changed() <-chan struct{} // closed at the next change; take it before Children
	// SetWaiters adds delta to the windows that asked children to wait at
	// their start (waitForDebuggerOnStart); with none, no child waits.
	SetWaiters(delta int)
}

// SetChildRealms makes every window that asks for flat auto-attach get each
// child as a target. Call it before the server serves.
func (s *Server) SetChildRealms(c ChildRealms) { s.children = c }

// childSessionPrefix starts the sessionIds the worker makes for children;
// Node's NodeWorker sessionIds are decimal numbers, so they never meet.
const childSessionPrefix = "child-"

// childAttachTimeout bounds opening a window's session to one child.
const childAttachTimeout = 5 * time.Second

// childTable is one window's child processes.
type childTable struct {
	mu       sync.Mutex            // Lock order: see docs/locks.md (only childrealm.Child.mu under it).
	watching bool                  // Guarded by mu: watchChildren runs.
	wait     bool                  // Guarded by mu: the window asked waitForDebuggerOnStart (counted in ChildRealms.SetWaiters).
	closed   bool                  // Guarded by mu: the window is closing; nothing more is attached.
	closeBy  string                // Guarded by mu: why.
	bySess   map[string]*childConn // Guarded by mu: by the window's sessionId.
	byKey    map[string]*childConn // Guarded by mu: by ChildRealm.Key; nil value while attaching.
}

// childConn is one attached child: the window's Node session to it.
type childConn struct {
	conn    *websocket.Conn
	th      *threadTarget // targetID and unanswered requests, as for a thread
	release func()        // Static after construction: ends the window's hold on the child's start (idempotent).
}

func newChildTable() *childTable {
	return &childTable{bySess: map[string]*childConn{}, byKey: map[string]*childConn{}}
}

// watchChildren attaches every child, now and later, until the window
// closes. Started at most once per window, by a flat
// Target.setAutoAttach{autoAttach: true}; a later autoAttach false does not
// detach children (as for threads, the frontend never sends it). wait is
// the request's waitForDebuggerOnStart: while a window asks it, children
// that start wait until it let them run (Runtime.runIfWaitingForDebugger in
// their session), so their first lines are seen and can be stopped at.
func (sess *Session) watchChildren(wait bool) {
	src := sess.srv.children
	ct := sess.children
	if src == nil {
		return
	}
	ct.mu.Lock()
	start := !ct.watching && !ct.closed
	ct.watching = true
	delta := 0
	if !ct.closed && wait != ct.wait {
		ct.wait = wait
		delta = 1
		if !wait {
			delta = -1
		}
	}
	ct.mu.Unlock()
	if delta != 0 {
		src.SetWaiters(delta)
	}
	if !start {
		return
	}
	go func() {
		for {
			changed := src.Changed()
			for _, c := range src.Children() {
				if release, waiting, ok := sess.reserveChild(c); ok {
					sess.connectChild(c, release, waiting)
				}
			}
			select {
			case <-changed:
			case <-sess.dtGone:
				return
			}
		}
	}()
}

// AttachChild makes every window that watches children reserve c now, and
// take its hold on c's start if it asked children to wait, before it
// returns; the sessions are opened in the background. The run calls it as
// a child registers (childrealm.Options.OnAdd), so that no window's hold
// comes after the child was let run.
func (s *Server) AttachChild(c ChildRealm) {
	for _, sess := range s.openSessions() {
		if release, waiting, ok := sess.reserveChild(c); ok {
			go sess.connectChild(c, release, waiting)
		}
	}
}

// reserveChild marks c as being attached to the window unless it is (or
// the window does not watch children), and takes the window's hold on c's
// start when the window asked children to wait. Lock order: childTable.mu,
// then the child's own (Hold).
func (sess *Session) reserveChild(c ChildRealm) (release func(), waiting, ok bool) {
	ct := sess.children
	key := c.Key()
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if _, ok := ct.byKey[key]; ok || ct.closed || !ct.watching {
		return nil, false, false
	}
	ct.byKey[key] = nil // attaching: a second change does not attach it twice
	release = func() {}
	if ct.wait {
		release, waiting = c.Hold()
	}
	return release, waiting, true
}

// connectChild opens the window's session to a reserved child and tells
// the window; waiting says the window holds the child's start.
func (sess *Session) connectChild(c ChildRealm, release func(), waiting bool) {
	ctx, cancel := context.WithTimeout(context.Background(), childAttachTimeout)
	conn, err := c.OpenSession(ctx) // network I/O: outside mu
	cancel()
	if err != nil {
		release()
		sess.srv.logf("DevTools connection %d: child %s not attached: %v", sess.id, c.Title(), err)
		return // the key stays: a child that refused once is gone or going
	}
	key := c.Key()
	sessionID := childSessionPrefix + key
	cc := &childConn{conn: conn, th: &threadTarget{targetID: "node-child-" + key, pending: map[int64]string{}}, release: release}
	ct := sess.children
	ct.mu.Lock()
	if ct.closed {
		ct.mu.Unlock()
		release()
		hostnode.CloseSession(conn)
		return
	}
	ct.byKey[key], ct.bySess[sessionID] = cc, cc
	ct.mu.Unlock()
	ev, _ := json.Marshal(map[string]any{"method": "Target.attachedToTarget", "params": map[string]any{
		"sessionId": sessionID,
		"targetInfo": map[string]any{"targetId": cc.th.targetID, "type": threadTargetType, "title": c.Title(), "url": "",
			"attached": true, "canAccessOpener": false},
		"waitingForDebugger": waiting,
	}})
	sess.enqueue(ev)
	go sess.readChild(sessionID, c, cc)
}

// readChild relays what the child sends until its session ends: the child
// exited or finished, or the window closed.
func (sess *Session) readChild(sessionID string, c ChildRealm, cc *childConn) {
	stop := make(chan struct{})
	go func() {
		select {
		case <-c.Done():
		case <-sess.dtGone:
		case <-stop:
		}
		hostnode.CloseSession(cc.conn)
	}()
	defer close(stop)
	for {
		_, msg, err := cc.conn.Read(context.Background())
		if err == nil {
			sess.fromChild(sessionID, cc, msg)
			continue
		}
		select {
		case <-sess.dtGone:
			return // closeChildren detaches it, with the window's reason
		default:
		}
		how, clean := c.EndReason()
		sess.childGone(sessionID, "child process "+c.Title()+" "+how)
		// The window is told in its main Console (a Log entry, as for the
		// host's restarts): the child's own context is gone with its
		// target, and a stock frontend shows Log entries whatever the
		// context selector says.
		level := "info"
		if !clean {
			level = "warning"
		}
		sess.enqueue(logEntry(level, "Child process "+c.Title()+" "+how, time.Now()))
		return
	}
}

// fromChild relays one message of a child to the window, in its session.
func (sess *Session) fromChild(sessionID string, cc *childConn, msg []byte) {
	hm, err := parseHostMessage(msg)
	if err != nil {
		sess.srv.logf("DevTools connection %d: dropped an unparseable child message: %v", sess.id, err)
		return
	}
	ct := sess.children
	ct.mu.Lock()
	attached := ct.bySess[sessionID] == cc
	answered := false
	if attached && hm.IsResponse {
		_, answered = cc.th.pending[hm.ID]
		delete(cc.th.pending, hm.ID)
	}
	ct.mu.Unlock()
	if !attached || (hm.IsResponse && !answered) {
		return // a detached child's, or an answer already given
	}
	if hm.Method == "Debugger.scriptParsed" && sess.srv.hidden(msg) {
		return // the run preload runs in every child too (Options.HideScripts)
	}
	sess.enqueue(hostrealm.RewriteFileURLs(withSessionID(msg, sessionID)))
}

// withSessionID adds "sessionId" to the JSON object msg.
func withSessionID(msg []byte, sessionID string) []byte {
	quoted, _ := json.Marshal(sessionID)
	out := make([]byte, 0, len(msg)+len(quoted)+14)
	out = append(out, msg[:len(msg)-1]...)
	if len(msg) > 2 {
		out = append(out, ',')
	}
	return append(append(append(out, `"sessionId":`...), quoted...), '}')
}

// childGone answers what the child left unanswered, then detaches it.
func (sess *Session) childGone(sessionID, why string) {
	ct := sess.children
	ct.mu.Lock()
	cc := ct.bySess[sessionID]
	delete(ct.bySess, sessionID)
	ct.mu.Unlock()
	if cc != nil {
		cc.release()
		sess.detachThread(sessionID, cc.th, why, sess.enqueue)
	}
}

// toChild sends a request carrying a child's sessionId to the child. It is
// answered exactly once: by the child, or here, or by childGone or
// closeChildren.
func (sess *Session) toChild(req request) {
	id, err := strconv.ParseInt(string(req.ID), 10, 64)
	if err != nil {
		sess.refuse(req, &wireError{codeInvalidRequest, "Message must have integer 'id' property"})
		return
	}
	ct := sess.children
	ct.mu.Lock()
	cc := ct.bySess[req.SessionID]
	var refusal *wireError
	switch {
	case ct.closed:
		refusal = &wireError{codeServerError, "the window is closing: " + ct.closeBy}
	case cc == nil:
		refusal = &wireError{codeSessionUnknown, "Session with given id not found."}
	case len(cc.th.pending) >= maxThreadPending:
		refusal = &wireError{codeServerError, fmt.Sprintf("child %s has %d requests unanswered (is it paused or busy?); "+
			"this one was not sent", cc.th.targetID, len(cc.th.pending))}
	case cc.th.pending[id] != "":
		refusal = &wireError{codeInvalidRequest, fmt.Sprintf("request id %d is already in flight; ids must be unique", id)}
	}
	if refusal != nil {
		ct.mu.Unlock()
		sess.refuse(req, refusal)
		return
	}
	if result, ok := threadLiteral(req.Method); ok {
		ct.mu.Unlock()
		sess.enqueue(threadResult(req, result))
		return
	}
	if req.Method == "Runtime.runIfWaitingForDebugger" {
		// Never the child's: it would let the child run for every window.
		// The window ends its own hold; the child runs once all did.
		ct.mu.Unlock()
		cc.release()
		sess.enqueue(threadResult(req, `{}`))
		return
	}
	cc.th.pending[id] = req.Method
	ct.mu.Unlock()
	msg, _ := json.Marshal(struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params,omitempty"`
	}{json.RawMessage(req.ID), req.Method, json.RawMessage(req.Params)})
	if err := cc.conn.Write(context.Background(), websocket.MessageText, msg); err != nil {
		cc.conn.CloseNow() // readChild sees it: childGone answers what is pending
	}
}

// closeChildren detaches every child when the window closes: their
// requests are answered with why, their sessions closed, and nothing more
// is attached.
func (sess *Session) closeChildren(why string) {
	ct := sess.children
	ct.mu.Lock()
	gone := ct.bySess
	ct.bySess = map[string]*childConn{}
	ct.closed, ct.closeBy = true, why
	waited := ct.wait
	ct.wait = false
	ct.mu.Unlock()
	if waited && sess.srv.children != nil {
		sess.srv.children.SetWaiters(-1)
	}
	ids := make([]string, 0, len(gone))
	for id := range gone {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		gone[id].release()
		sess.detachThread(id, gone[id].th, why, sess.enqueue)
		hostnode.CloseSession(gone[id].conn)
	}
}

// isChildSession says whether a request's sessionId names a child.
func isChildSession(sessionID string) bool { return strings.HasPrefix(sessionID, childSessionPrefix) }
