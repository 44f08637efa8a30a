package cdpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/inspector-worker/inspector-worker/browserrealm"
)

// Pages of a Chromium-family browser, natively: each page the browser
// shows of the app is a child target of the window, of type page, whose
// flat session is the window's own session on the browser's page target
// (browserrealm). Routing follows threads and children: the window's
// Target.setAutoAttach{flatten} attaches every page with a
// Target.attachedToTarget; requests carrying the page's sessionId (or one
// nested in it) go to the browser as they are; what the browser sends in
// them is relayed as it is (it already carries the sessionId). The
// per-target bookkeeping (threadTarget: unanswered requests, answered
// once; detachThread) is the threads'. docs/agent-note.md "Native pages".

// nativeTargetType is what a joined page is announced as. The stock
// frontend makes `page` and `iframe` children the same kind of target
// (SDK.Target Type.FRAME: DOM, JS, Network, ... capabilities); an
// `iframe` child's main frame is expected under a frame of the parent's
// tree (it is an out-of-process frame of the parent page), which a
// browser's top-level page is not, while a `page` child is a frame tree of
// its own named by its URL (ChildTargetManager.attachedToTarget).
const nativeTargetType = "page"

// nativeAttachTimeout bounds the attach of one window to one page.
const nativeAttachTimeout = 10 * time.Second

// SetNativeBrowser makes every window that asks for flat auto-attach get
// the browser's joined pages as targets. Call it before the server serves.
func (s *Server) SetNativeBrowser(b *browserrealm.Browser) { s.native = b }

// nativeTable is one window's native pages.
type nativeTable struct {
	mu       sync.Mutex             // Lock order: see docs/locks.md (browserrealm.Browser.mu under it).
	watching bool                   // Guarded by mu: watchNative runs.
	closed   bool                   // Guarded by mu: the window is closing; nothing more is attached.
	closeBy  string                 // Guarded by mu: why.
	byTarget map[string]*nativeConn // Guarded by mu: by browser target id; nil value while attaching.
}

// nativeConn is one attached page: the window's browser session on it.
type nativeConn struct {
	s   *browserrealm.Session // Static after construction.
	th  *threadTarget         // Guarded by nativeTable.mu: unanswered requests.
	url string                // Static after construction.
}

func newNativeTable() *nativeTable { return &nativeTable{byTarget: map[string]*nativeConn{}} }

// watchNative attaches every joined page, now and later, until the window
// closes or the browser goes away. Started once per window by a flat
// Target.setAutoAttach{autoAttach: true}.
func (sess *Session) watchNative() {
	b := sess.srv.native
	nt := sess.native
	if b == nil {
		return
	}
	nt.mu.Lock()
	start := !nt.watching && !nt.closed
	nt.watching = true
	nt.mu.Unlock()
	if !start {
		return
	}
	go func() {
		for {
			changed := b.Changed()
			for _, p := range b.Pages() {
				if sess.reserveNative(p.TargetID) {
					sess.attachNative(p)
				}
			}
			select {
			case <-changed:
			case <-b.Done():
				return // each session was told (nativeGone)
			case <-sess.dtGone:
				sess.closeNative("the DevTools window closed", true)
				return
			}
		}
	}()
}

func (sess *Session) reserveNative(targetID string) bool {
	nt := sess.native
	nt.mu.Lock()
	defer nt.mu.Unlock()
	if _, ok := nt.byTarget[targetID]; ok || nt.closed {
		return false
	}
	nt.byTarget[targetID] = nil
	return true
}

// attachNative opens the window's session on a reserved page and tells
// the window.
func (sess *Session) attachNative(p browserrealm.Page) {
	nc := &nativeConn{th: newThreadTarget(p.TargetID), url: p.URL}
	deliver := func(msg []byte, sessionID string, isResponse bool, id int64) {
		sess.fromNative(nc, msg, isResponse, id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), nativeAttachTimeout)
	s, err := sess.srv.native.Attach(ctx, p.TargetID, deliver, func(why string) { sess.nativeGone(p.TargetID, why) })
	cancel()
	if err != nil {
		sess.srv.logf("DevTools connection %d: page %s not attached: %v", sess.id, p.URL, err)
		return // the reservation stays: a page that refused once is not retried
	}
	nc.s = s
	nt := sess.native
	nt.mu.Lock()
	if nt.closed {
		nt.mu.Unlock()
		s.Detach()
		return
	}
	nt.byTarget[p.TargetID] = nc
	nt.mu.Unlock()
	ev, _ := json.Marshal(map[string]any{"method": "Target.attachedToTarget", "params": map[string]any{
		"sessionId": s.ID(),
		"targetInfo": map[string]any{"targetId": p.TargetID, "type": nativeTargetType, "title": p.Title, "url": p.URL,
			"attached": true, "canAccessOpener": false},
		"waitingForDebugger": false,
	}})
	sess.enqueue(ev)
}

// fromNative relays one browser message of a window's page session; an
// answer is relayed only while its request is unanswered (a detach may
// have answered it).
func (sess *Session) fromNative(nc *nativeConn, msg []byte, isResponse bool, id int64) {
	if isResponse {
		nt := sess.native
		nt.mu.Lock()
		_, pending := nc.th.pending[id]
		delete(nc.th.pending, id)
		nt.mu.Unlock()
		if !pending {
			return
		}
	}
	sess.enqueue(msg)
}

// toNative sends a request whose sessionId is one of the window's page
// sessions (or nested in one) to the browser as it is, and reports
// whether it was one. Answered exactly once: by the browser, or here, or
// by nativeGone or closeNative.
func (sess *Session) toNative(req request, msg []byte) bool {
	nt := sess.native
	nt.mu.Lock()
	var nc *nativeConn
	for _, c := range nt.byTarget {
		if c != nil && c.s.Owns(req.SessionID) {
			nc = c
			break
		}
	}
	if nc == nil {
		nt.mu.Unlock()
		return false
	}
	id, err := strconv.ParseInt(string(req.ID), 10, 64)
	var refusal *wireError
	switch {
	case err != nil:
		refusal = &wireError{codeInvalidRequest, "Message must have integer 'id' property"}
	case len(nc.th.pending) >= maxThreadPending:
		refusal = &wireError{codeServerError, fmt.Sprintf("page %s has %d requests unanswered (is it paused or busy?); "+
			"this one was not sent", nc.url, len(nc.th.pending))}
	case nc.th.pending[id] != "":
		refusal = &wireError{codeInvalidRequest, fmt.Sprintf("request id %d is already in flight; ids must be unique", id)}
	}
	if refusal != nil {
		nt.mu.Unlock()
		sess.refuse(req, refusal)
		return true
	}
	nc.th.pending[id] = req.Method
	nt.mu.Unlock()
	if err := nc.s.Send(msg); err != nil {
		nt.mu.Lock()
		_, still := nc.th.pending[id]
		delete(nc.th.pending, id)
		nt.mu.Unlock()
		if still {
			sess.enqueue(threadError(req.SessionID, id, req.Method, "the browser did not take it: "+err.Error()))
		}
	}
	return true
}

// nativeGone answers what the page left unanswered, detaches it from the
// window and says so in the window's Console.
func (sess *Session) nativeGone(targetID, why string) {
	nt := sess.native
	nt.mu.Lock()
	nc := nt.byTarget[targetID]
	delete(nt.byTarget, targetID)
	var th *threadTarget
	if nc != nil {
		th = nc.th
		nc.th = newThreadTarget(targetID)
	}
	nt.mu.Unlock()
	if nc == nil {
		return
	}
	sess.detachThread(nc.s.ID(), th, why, sess.enqueue)
	sess.enqueue(logEntry("warning", "Page "+nc.url+" detached: "+why, time.Now()))
}

// closeNative detaches every page when the window closes or its host
// ends: their requests are answered with why, their browser sessions
// detached (inBrowser; the window's sessions only, the pages run on).
func (sess *Session) closeNative(why string, inBrowser bool) {
	nt := sess.native
	nt.mu.Lock()
	gone := nt.byTarget
	nt.byTarget = map[string]*nativeConn{}
	nt.closed, nt.closeBy = true, why
	ths := make(map[string]*threadTarget, len(gone))
	for id, nc := range gone {
		if nc != nil {
			ths[id] = nc.th
			nc.th = newThreadTarget(id)
		}
	}
	nt.mu.Unlock()
	ids := make([]string, 0, len(ths))
	for id := range ths {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		sess.detachThread(gone[id].s.ID(), ths[id], why, sess.enqueue)
		if inBrowser {
			go gone[id].s.Detach() // a browser call: not on the window's goroutine
		}
	}
}
