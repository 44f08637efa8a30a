package cdpserver

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/realm"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The client Runtime backend: a window's Runtime request routed to a page
// (by objectId, uniqueContextId or executionContextId) becomes a
// runtime.command to that page (docs/protocol.md "Runtime"), correlated by
// command id when the page's runtime.result comes back through the
// Consumer's Response. Returned handles become objectIds in the window's
// object table, and the page is told with runtime.ack whether they were
// kept. Every request is answered exactly once: by the page's result, by
// the deadline (Options.ClientRuntimeTimeout, the page gets runtime.cancel),
// by the page's close, or by a failed send.
//
// Commands are sent outside hub.mu (see the lock order at clientHub.mu).
// Frames the hub must send from inside a Consumer callback (acks, a new
// page's console.enable) go on their own goroutine (sendAsync): the
// callback holds its source's lock, and a full outbox closes that source
// inside Send.

// maxAsyncSends bounds the worker → page frames in flight on their own
// goroutines. Each is one small frame that Send queues without blocking, so
// the bound is only reached by a page flooding results nobody asked for;
// past it such acks are dropped (counted in the log): a page frees
// unacknowledged handles with its session anyway.
const maxAsyncSends = 256

// consoleGroup is the object group of console arguments, as V8 names it:
// DevTools releases it when the Console is cleared.
const consoleGroup = "console"

// runtimeCall is one runtime.command in flight. Guarded by clientHub.mu.
type runtimeCall struct {
	ref    sourceproto.SourceRef
	page   string // the page's name, for messages
	realm  string
	sess   *Session
	wire   string         // the session's id on the wire
	reqID  jsontext.Value // nil: the worker's own command (a release)
	method sourceproto.RuntimeMethod
	cdp    string // the CDP method, for messages
	ctxID  int
	group  string // the object group returned handles join
	timer  *time.Timer
}

// runtimeCalls are the commands in flight, by command id. Guarded by
// clientHub.mu.
type runtimeCalls map[uint64]*runtimeCall

// callStart is a registered command still to be sent (outside hub.mu).
type callStart struct {
	reg *sourceproto.Registry
	ref sourceproto.SourceRef
	cmd *sourceproto.RuntimeCommand
}

// wireSession is a window's DevTools session id in the page protocol.
func wireSession(s *Session) string { return "w" + strconv.FormatInt(s.id, 10) }

// runtimeRequest answers a Runtime request routed to the client realm r.
func (h *clientHub) runtimeRequest(s *Session, req request, r *realm.Realm) {
	// throwOnSideEffect (completions, the eager preview) goes to the page
	// too: the agent reads property paths without running page code
	// (client/js/sideeffect.mjs) and refuses the rest with V8's EvalError.
	h.mu.Lock()
	start, answer, werr := h.startCallLocked(s, req, r)
	held := false
	if werr == nil && answer == nil {
		held = h.holdUntilWelcomedLocked(r, start)
	}
	h.mu.Unlock()
	switch {
	case werr != nil:
		s.refuse(req, werr)
	case answer != nil:
		s.enqueue(answer)
	case !held:
		h.sendCall(start)
	}
}

// holdUntilWelcomedLocked keeps a command for a page that has not sent its
// initial replace yet, and reports whether it did. Windows learn of a page's
// context at its hello, before the carrier has sent the page its welcome, and
// a page drops frames that come before its welcome: a window that evaluated
// at once (a loaded machine made that likely) got the deadline error 10 s
// later. Held commands keep their deadline; sendHeld sends them in order.
func (h *clientHub) holdUntilWelcomedLocked(r *realm.Realm, cs callStart) bool {
	c := h.contextOfLocked(r)
	if c == nil || c.welcomed {
		return false
	}
	c.held = append(c.held, cs)
	return true
}

// sendHeld sends the commands held for a page until its welcome, in order,
// on its own goroutine: the caller is a consumer callback that holds the
// source's lock (a full outbox closes the source inside Send).
func (h *clientHub) sendHeld(held []callStart) {
	if len(held) == 0 {
		return
	}
	go func() {
		for _, cs := range held {
			h.sendCall(cs)
		}
	}()
}

// startCallLocked turns req into a registered command. It returns a local
// answer or an error instead when the page cannot take it.
func (h *clientHub) startCallLocked(s *Session, req request, r *realm.Realm) (callStart, []byte, *wireError) {
	c := h.contextOfLocked(r)
	if c == nil {
		return callStart{}, nil, &wireError{codeServerError, fmt.Sprintf("the page %q is gone (it closed or reloaded); its objects went with it", r.Name)}
	}
	if !c.caps.Has(sourceproto.CapRuntime) || h.reg == nil {
		if req.Method == "Runtime.globalLexicalScopeNames" {
			return callStart{}, appendResult(nil, req.ID, []byte(`{"names":[]}`)), nil
		}
		return callStart{}, nil, &wireError{codeServerError, fmt.Sprintf(
			"%s in the page %q is not available: the page's client agent did not offer the runtime capability "+
				"(update client/js, or the page blocks evaluation)", req.Method, r.Name)}
	}
	res := handleResolver{t: s.objects, realm: r.ID, gen: c.ref.Gen, page: r.Name}
	cmd, group, err := runtimeCommand(req.Method, req.Params, &res)
	if err != nil {
		return callStart{}, nil, &wireError{codeServerError, err.Error()}
	}
	if cmd.Method == sourceproto.MethodReleaseObject {
		// Forgotten now: the window will not use it again, whatever the
		// page answers.
		s.objects.Release(res.lastObjectID)
	}
	call := &runtimeCall{ref: c.ref, page: r.Name, realm: r.ID, sess: s, wire: wireSession(s), reqID: req.ID,
		method: cmd.Method, cdp: req.Method, ctxID: c.id, group: group}
	return h.registerLocked(call, cmd), nil, nil
}

// registerLocked numbers cmd, records the call and arms its deadline, before
// the command is sent, so an answer that comes back at once finds it.
func (h *clientHub) registerLocked(call *runtimeCall, cmd *sourceproto.RuntimeCommand) callStart {
	h.nextCall++
	id := h.nextCall
	cmd.ID, cmd.Session = id, call.wire
	call.timer = time.AfterFunc(h.srv.opts.ClientRuntimeTimeout, func() { h.runtimeDeadline(id) })
	h.calls[id] = call
	return callStart{reg: h.reg, ref: call.ref, cmd: cmd}
}

// contextOfLocked is the live context of a client realm.
func (h *clientHub) contextOfLocked(r *realm.Realm) *clientContext {
	f := h.frames[strings.TrimPrefix(r.ID, "client:")]
	if f == nil || f.ctx == nil || f.ctx.realm != r {
		return nil
	}
	return f.ctx
}

// sendCall sends a registered command; it runs without hub.mu. When the
// send fails the page's close may already have answered the call (a full
// outbox ends the connection right here), so failCallLocked is a no-op then.
func (h *clientHub) sendCall(cs callStart) {
	err := cs.reg.Send(cs.ref, cs.cmd)
	if err == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failCallLocked(cs.cmd.ID, "cannot send the command to the page: "+err.Error())
}

// failCallLocked answers a call with an error and forgets it.
func (h *clientHub) failCallLocked(id uint64, why string) *runtimeCall {
	call := h.calls[id]
	if call == nil {
		return nil
	}
	delete(h.calls, id)
	call.timer.Stop()
	if call.reqID != nil {
		call.sess.enqueue(appendError(nil, call.reqID, "", &wireError{codeServerError, call.cdp + ": " + why}))
	}
	return call
}

// runtimeDeadline answers a call the page did not answer in time and
// withdraws it from the page.
func (h *clientHub) runtimeDeadline(id uint64) {
	h.mu.Lock()
	reg := h.reg
	d := h.srv.opts.ClientRuntimeTimeout
	var call *runtimeCall
	if c := h.calls[id]; c != nil {
		call = h.failCallLocked(id, fmt.Sprintf("the page %q did not answer within %v "+
			"(the client Runtime deadline, cdpserver.Options.ClientRuntimeTimeout); the command was cancelled in the page", c.page, d))
	}
	h.mu.Unlock()
	if call != nil && reg != nil {
		_ = reg.Send(call.ref, &sourceproto.RuntimeCancel{Session: call.wire, ID: id, Method: call.method})
	}
}

// runtimeResultLocked settles the call a runtime.result answers and returns
// the ack to send. A result nobody waits for (late, cancelled, its window
// gone) is not accepted: the page frees its handles.
func (h *clientHub) runtimeResultLocked(ref sourceproto.SourceRef, res *sourceproto.RuntimeResult) *sourceproto.RuntimeAck {
	ack := &sourceproto.RuntimeAck{Session: res.Session, ID: res.ID, Method: res.Method}
	call := h.calls[res.ID]
	if call == nil || call.ref != ref || call.wire != res.Session || call.method != res.Method {
		return ack
	}
	delete(h.calls, res.ID)
	call.timer.Stop()
	ack.Accepted = true
	if call.reqID == nil {
		return ack // the worker's own release
	}
	if res.Error != nil {
		call.sess.enqueue(appendError(nil, call.reqID, "", &wireError{codeServerError,
			fmt.Sprintf("%s: the page %q answered %s: %s", call.cdp, call.page, res.Error.Code, res.Error.Message)}))
		return ack
	}
	m := &objectMapper{t: call.sess.objects, realm: call.realm, gen: call.ref.Gen, group: call.group,
		ctxID: call.ctxID, scriptID: h.scriptIDLocked(ref)}
	var body []byte
	var err error
	if call.cdp == "Runtime.compileScript" {
		m.noHandles, ack.Accepted = true, false // a syntax check keeps no object
		body, err = compileScriptAnswer(res, m)
	} else {
		body, err = projectRuntimeResult(res, m)
	}
	if err == nil && m.full {
		err = h.objectsFullLocked(call.sess, call.realm, call.page)
	}
	if err != nil {
		m.rollback()
		ack.Accepted = false
		call.sess.enqueue(appendError(nil, call.reqID, "", &wireError{codeServerError, call.cdp + ": " + err.Error()}))
		return ack
	}
	call.sess.enqueue(appendResult(nil, call.reqID, body))
	return ack
}

// scriptIDLocked maps a page script URL to its "c<n>" id for stack traces.
func (h *clientHub) scriptIDLocked(ref sourceproto.SourceRef) func(string) string {
	c := h.byRef[ref]
	return func(u string) string {
		if c == nil {
			return ""
		}
		return c.scriptIDFor(u)
	}
}

// failCallsLocked answers every call to a source generation that went away.
func (h *clientHub) failCallsLocked(ref sourceproto.SourceRef, page string) {
	for id, call := range h.calls {
		if call.ref == ref {
			h.failCallLocked(id, fmt.Sprintf("the page %q closed before it answered", page))
		}
	}
}

// sendAsync sends one frame on its own goroutine, for callers inside a
// Consumer callback (see the top of this file).
func (h *clientHub) sendAsync(reg *sourceproto.Registry, ref sourceproto.SourceRef, b sourceproto.Body) {
	if reg == nil {
		return
	}
	if h.asyncSends.Add(1) > maxAsyncSends {
		h.asyncSends.Add(-1)
		h.srv.logf("client %s: dropped a %s to the page: %d sends in flight already", ref.ID, b.FrameType(), maxAsyncSends)
		return
	}
	go func() {
		defer h.asyncSends.Add(-1)
		_ = reg.Send(ref, b)
	}()
}

// pageSend is one frame for a page, collected under hub.mu and sent after.
type pageSend struct {
	ref  sourceproto.SourceRef
	body sourceproto.Body
}

func (h *clientHub) sendAll(reg *sourceproto.Registry, sends []pageSend) {
	if reg == nil {
		return
	}
	for _, ps := range sends {
		_ = reg.Send(ps.ref, ps.body)
	}
}
