package cdpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/hostrealm"
	"github.com/inspector-worker/inspector-worker/internal/cdpwire"
	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/realm"
)

// handle answers or routes one DevTools request by its entry in the method
// table (methods.go): one lookup, one switch. Every path ends in exactly one
// answer: a local result, a local error, or a relay whose answer comes from
// the host (or from endHost when the host goes away first).
func (sess *Session) handle(msg []byte) {
	var req request
	defer func() {
		if p := recover(); p != nil {
			sess.srv.logf("panic while handling %q: %v\n%s", req.Method, p, debug.Stack())
			sess.enqueue(appendError(nil, req.ID, req.SessionID,
				&wireError{codeInternal, fmt.Sprintf("inspector-worker failed on '%s': %v", req.Method, p)}))
		}
	}()
	req, werr := parseRequest(msg)
	if werr != nil {
		sess.refuse(req, werr)
		return
	}
	if sess.scope != nil {
		sess.handleInPage(req) // pagetarget_dispatch.go
		return
	}
	if req.SessionID != "" {
		// The sessionId is the realm key (methods.go, keySessionID): a
		// thread or child answers every method itself, so the table is
		// not asked.
		if sess.toNative(req, msg) { // native.go: a page of the browser
			return
		}
		if isChildSession(req.SessionID) {
			sess.toChild(req) // children.go
			return
		}
		sess.toThread(req)
		return
	}
	e, ok := lookupMethod(req.Method)
	if !ok {
		sess.refuse(req, notFound(req.Method))
		return
	}
	sess.answer(req, e, func() { sess.route(req, msg, e) })
}

// answer gives req the one answer its entry decides, for the combined
// target and a page target alike (handleInPage); routed serves an
// answerRouted entry, the one case where the two differ.
func (sess *Session) answer(req request, e methodEntry, routed func()) {
	switch e.kind {
	case answerLocal:
		e.local(sess, req)
	case answerNoop:
		sess.enqueue(appendResult(nil, req.ID, []byte(e.result)))
	case answerRefusal:
		sess.refuse(req, &wireError{codeServerError, e.reason})
	case answerRouted:
		routed()
	default:
		panic(fmt.Sprintf("method table entry for %q has no kind", req.Method)) // answered -32603 by handle
	}
}

// route sends a request to the realm that owns it (methods.go, realmKey),
// refusing there what the realm's column of the table refuses.
func (sess *Session) route(req request, msg []byte, e methodEntry) {
	if e.before != nil {
		e.before(sess, req)
	}
	if e.keys&keyScriptID != 0 && sess.srv.clients.ScriptRequest(sess.page, toPage(req), e.page) {
		return
	}
	r, err := sess.realmFor(req, e.keys)
	if err != nil {
		sess.refuse(req, &wireError{codeServerError, err.Error()})
		return
	}
	if r.Kind == realm.KindClient && e.page.Answer == pageRefusal {
		err := &realm.UnsupportedError{Realm: r.ID, Method: req.Method, Reason: e.page.Reason}
		sess.refuse(req, &wireError{codeServerError, err.Error()})
		return
	}
	sess.srv.backend(r.Kind).serve(sess, req, msg, e, r)
}

// hostAnswered runs the table's hook for a relayed request on the host's
// answer, before that answer is queued, and returns the entry's after hook
// for the caller to run once the answer is queued (nil when none). Error
// answers run no hook.
func (sess *Session) hostAnswered(method string, answer []byte) (after func(*Session)) {
	e, ok := methods[method]
	if !ok || (e.hook == nil && e.after == nil) {
		return nil
	}
	if _, _, isError := cdpwire.FindMember(answer, "error"); isError {
		return nil
	}
	if e.hook != nil {
		e.hook(sess, method)
	}
	return e.after
}

// realmFor finds the realm a request addresses. With the Runtime keys
// (byContext): by objectId (table ids belong to client realms; V8 ids to
// the host), by uniqueContextId, or by executionContextId/contextId.
// Requests naming none, and other keys, go to the host.
func (sess *Session) realmFor(req request, keys realmKey) (*realm.Realm, error) {
	reg := sess.srv.registry
	if keys&byContext == 0 || req.Params == nil {
		return reg.Host(), nil
	}
	p := scanRoutingParams(req.Params)
	if p.objectID != "" {
		if !object.Owns(p.objectID) {
			return reg.Host(), nil // a V8 objectId
		}
		h, ok := sess.objects.Lookup(p.objectID)
		if !ok {
			return nil, errors.New("could not find object with given id")
		}
		if r, ok := reg.Get(h.Realm); ok {
			return r, nil
		}
		return nil, fmt.Errorf("the realm of object %s is gone", p.objectID)
	}
	return reg.Route(p.contextID, p.uniqueID)
}

type routingParams struct {
	objectID  string
	uniqueID  string
	contextID *int
}

// scanRoutingParams reads the top-level members that decide routing, in one
// pass: an objectId wins over a uniqueContextId, which wins over a numeric id.
func scanRoutingParams(params []byte) routingParams {
	var p routingParams
	dec := jsontext.NewDecoder(bytes.NewReader(params), cdpwire.DecodeOpts...)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return p
	}
	for dec.PeekKind() == '"' {
		name, err := cdpwire.ReadName(dec)
		if err != nil {
			return p
		}
		val, err := dec.ReadValue()
		if err != nil {
			return p
		}
		switch name {
		case "objectId", "promiseObjectId":
			p.objectID = cdpwire.Unquote(val)
		case "uniqueContextId":
			p.uniqueID = cdpwire.Unquote(val)
		case "contextId", "executionContextId":
			if id, err := strconv.Atoi(string(val)); err == nil {
				p.contextID = &id
			}
		}
	}
	return p
}

// relay forwards msg to the host session, recording the request as pending
// first so the answer can never outrun the bookkeeping.
func (sess *Session) relay(req request, msg []byte) {
	id, _ := strconv.ParseInt(string(req.ID), 10, 64)
	// hostMu first: a watch-mode swap (detachHost) takes the pending
	// requests of the old session under both, so a request is either in
	// its sweep or sent to the session that is current here.
	sess.hostMu.Lock()
	conn, downWhy, batch := sess.host, sess.downWhy, sess.hostIO
	sess.mu.Lock()
	if sess.hostClosed {
		reason := sess.goneReason
		sess.mu.Unlock()
		sess.hostMu.Unlock()
		sess.enqueue(appendError(nil, req.ID, "", &wireError{codeServerError, "the Node host session is closed: " + reason}))
		return
	}
	if conn == nil {
		sess.mu.Unlock()
		sess.hostMu.Unlock()
		sess.enqueue(appendError(nil, req.ID, "", &wireError{codeServerError,
			fmt.Sprintf("'%s' was not sent: the Node host is not running (%s)", req.Method, downWhy)}))
		return
	}
	if _, dup := sess.pending[id]; dup {
		sess.mu.Unlock()
		sess.hostMu.Unlock()
		sess.refuse(req, &wireError{codeInvalidRequest,
			fmt.Sprintf("request id %d is already in flight; ids must be unique", id)})
		return
	}
	sess.pending[id] = req.Method
	if sess.watch != nil {
		msg = sess.watch.Request(id, req.Method, msg)
	}
	sess.mu.Unlock()
	sess.hostMu.Unlock()
	if sess.holdHost {
		batch.Hold() // readLoop releases it (session.go)
		sess.hostHeld = true
	}
	if err := conn.Write(context.Background(), websocket.MessageText, msg); err != nil {
		// The host session is broken; hostLoop will see it too and endHost
		// answers this request along with every other pending one.
		sess.closeHost()
	}
}

// fromHost relays one message from Node to DevTools, rewriting where the
// worker must (hostrealm/rewrite.go). A response settles its pending request.
func (sess *Session) fromHost(msg []byte) {
	raw := msg
	defer func() {
		if p := recover(); p != nil {
			sess.srv.logf("panic while relaying a host message: %v\n%s", p, debug.Stack())
			sess.enqueue(raw) // relay it untouched rather than lose it
		}
	}()
	var after func(*Session) // the answered request's after hook
	hm, err := parseHostMessage(msg)
	if err != nil {
		sess.srv.logf("DevTools connection %d: relaying an unparseable host message: %v", sess.id, err)
		sess.enqueue(msg)
		return
	}
	if hm.IsResponse {
		if sess.watch != nil && sess.watch.InternalAnswer(hm.ID, msg) {
			return // a replayed request's answer (watch.go)
		}
		if isRelayID(hm.ID) && sess.relayAnswered(hm.ID, msg) {
			return // a request relayed to a thread (threads.go)
		}
		sess.mu.Lock()
		method, ok := sess.pending[hm.ID]
		delete(sess.pending, hm.ID)
		sess.mu.Unlock()
		if !ok {
			sess.srv.logf("DevTools connection %d: dropped a host answer to unknown request %d", sess.id, hm.ID)
			return
		}
		sess.logHostRefusal(method, msg)
		after = sess.hostAnswered(method, msg)
		if sess.watch != nil {
			sess.watch.Answered(hm.ID, msg)
		}
	} else if hostnode.IsThreadEvent(hm.Method) {
		sess.threadEvent(hm.Method, msg) // the window's threads (threads.go)
		return
	} else if sess.watch != nil && !sess.watch.Event(hm.Method, &msg) {
		return
	} else if hm.Method == "Runtime.executionContextCreated" {
		msg = hostrealm.RewriteContextCreated(hostrealm.RenameHostContext(msg, sess.srv.hostContextName()), sess.srv.targetID)
	} else if hm.Method == "Debugger.scriptParsed" {
		if sess.srv.hidden(msg) {
			return
		}
		sess.srv.hostScripts.Note(msg)
	}
	sess.enqueueFromHost(hostrealm.RewriteFileURLs(msg))
	if after != nil {
		sess.runAfter(after)
	}
}

// runAfter runs an after hook once its answer is queued. A panic in it is
// logged, not recovered by fromHost: the answer is queued already and must
// not be relayed twice.
func (sess *Session) runAfter(after func(*Session)) {
	defer func() {
		if p := recover(); p != nil {
			sess.srv.logf("panic after a host answer: %v\n%s", p, debug.Stack())
		}
	}()
	after(sess)
}
