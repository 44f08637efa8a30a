package pagerealm

import (
	"container/list"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/cdpproject"
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
// the deadline (Options.ClientRuntimeTimeout, from the request's arrival;
// a page that was sent the command gets runtime.cancel), by the page's
// close, by a full backlog, or by a failed send.
//
// Commands, acks and cancels reach the page through its flow
// (flow.go): a window of commands in flight, a bounded FIFO behind
// it, and one sender goroutine per page that writes outside hub.mu (see
// the lock order at Hub.mu; Consumer callbacks hold their source's
// lock, and a full outbox closes that source inside Send).

// consoleGroup is the object group of console arguments, as V8 names it:
// DevTools releases it when the Console is cleared.
const consoleGroup = "console"

// runtimeCall is one runtime.command, from its registration until it is
// answered or withdrawn. Guarded by Hub.mu.
type runtimeCall struct {
	ref    sourceproto.SourceRef
	ctx    *clientContext // the page generation's context: its flow
	page   string         // the page's name, for messages
	realm  string
	sess   *Window
	wire   string         // the session's id on the wire
	reqID  jsontext.Value // nil: the worker's own command (a release)
	method sourceproto.RuntimeMethod
	cdp    string   // the CDP method, for messages
	rt     *Runtime // its handler (renders the answer); nil for the worker's own commands
	ctxID  int
	group  string // the object group returned handles join
	timer  *time.Timer
	cmd    *sourceproto.RuntimeCommand
	size   int           // estimated bytes on the wire (pageWindowBytes, pageBacklogBytes)
	elem   *list.Element // in ctx.flow.waiting while it waits; nil once sent
	sent   bool          // in flight: handed to the page's sender, not answered nor withdrawn
	// dom renders a DOM request's answer (dom_wire.go); domNS is the
	// window's namespace of the page it went to.
	dom   domRender
	domNS uint64
	// own is told how one of the worker's own commands ended: with its
	// page's result, or why not (a DOM search's part, dom_search.go).
	own func(res *sourceproto.RuntimeResult, why string)
}

// release reports whether the call frees objects in the page: the worker's
// own releases and a window's Runtime.releaseObject. They are never refused
// for a full backlog (pageReleaseBacklog): the window forgot the object
// already, so a refused release would leave it in the page.
func (c *runtimeCall) release() bool {
	return c.method == sourceproto.MethodReleaseObject || c.method == sourceproto.MethodReleaseObjectGroup ||
		c.method == sourceproto.MethodDOMDisable
}

// runtimeCalls are the commands in flight, by command id. Guarded by
// Hub.mu.
type runtimeCalls map[uint64]*runtimeCall

// wireSession is a window's DevTools session id in the page protocol.
func wireSession(s *Window) string { return "w" + strconv.FormatInt(s.id, 10) }

// RuntimeRequest answers a Runtime request routed to the client realm r,
// by the method's handler rt (nil: the agent does not serve it).
func (h *Hub) RuntimeRequest(s *Window, req Request, r *realm.Realm, rt *Runtime) {
	// throwOnSideEffect (completions, the eager preview) goes to the page
	// too: the agent reads property paths without running page code
	// (client/js/sideeffect.mjs) and refuses the rest with V8's EvalError.
	h.mu.Lock()
	answer, werr := h.startCallLocked(s, req, r, rt)
	h.mu.Unlock()
	switch {
	case werr != nil:
		s.refuse(req, werr)
	case answer != nil:
		s.enqueue(answer)
	}
}

// startCallLocked turns req into a registered command queued for its
// page. It returns a local answer or an error instead when the page cannot
// take it. Commands for a page that has not sent its initial replace wait
// in its flow: windows learn of a page's context at its hello, before the
// carrier has sent the page its welcome, and a page drops frames that come
// before its welcome (a window that evaluated at once got the deadline
// error 10 s later).
func (h *Hub) startCallLocked(s *Window, req request, r *realm.Realm, rt *Runtime) ([]byte, *wireError) {
	c := h.contextOfLocked(r)
	if c == nil {
		return nil, &wireError{codeServerError, fmt.Sprintf("the page %q is gone (it closed or reloaded); its objects went with it", r.Name)}
	}
	if !c.caps.Has(sourceproto.CapRuntime) || h.reg == nil {
		if rt != nil && rt.withoutAgent != "" {
			return appendResult(nil, req.ID, []byte(rt.withoutAgent)), nil
		}
		return nil, &wireError{codeServerError, fmt.Sprintf(
			"%s in the page %q is not available: the page's client agent did not offer the runtime capability "+
				"(update client/js, or the page blocks evaluation)", req.Method, r.Name)}
	}
	res := handleResolver{t: s.objects, realm: r.ID, gen: c.ref.Gen, page: r.Name}
	cmd, group, err := runtimeCommand(rt, req.Method, req.Params, &res, h.served)
	if err != nil {
		return nil, &wireError{codeServerError, err.Error()}
	}
	if cmd.Method == sourceproto.MethodReleaseObject {
		// Forgotten now: the window will not use it again, whatever the
		// page answers.
		s.objects.Release(res.lastObjectID)
	}
	call := &runtimeCall{ref: c.ref, ctx: c, page: r.Name, realm: r.ID, sess: s, wire: wireSession(s), reqID: req.ID,
		method: cmd.Method, cdp: req.Method, rt: rt, ctxID: c.id, group: group, size: len(req.Params) + commandOverhead}
	h.registerLocked(call, cmd)
	if werr := h.admitLocked(c, call); werr != nil {
		h.forgetCallLocked(cmd.ID)
		return nil, werr
	}
	return nil, nil
}

// registerLocked numbers cmd, records the call and arms its deadline: the
// deadline runs from the request's arrival, whether the command waits
// behind the page's window or not.
func (h *Hub) registerLocked(call *runtimeCall, cmd *sourceproto.RuntimeCommand) {
	h.nextCall++
	id := h.nextCall
	cmd.ID, cmd.Session = id, call.wire
	call.cmd = cmd
	call.timer = time.AfterFunc(h.runtimeTimeout, func() { h.runtimeDeadline(id) })
	h.calls[id] = call
}

// contextOfLocked is the live context of a client realm.
func (h *Hub) contextOfLocked(r *realm.Realm) *clientContext {
	f := h.frames[strings.TrimPrefix(r.ID, "client:")]
	if f == nil || f.ctx == nil || f.ctx.realm != r {
		return nil
	}
	return f.ctx
}

// forgetCallLocked ends a call: out of the table, its deadline stopped, out
// of its page's flow. It returns the call (nil if it had ended already) and
// whether the page had been sent the command.
func (h *Hub) forgetCallLocked(id uint64) (call *runtimeCall, wasSent bool) {
	call = h.calls[id]
	if call == nil {
		return nil, false
	}
	delete(h.calls, id)
	call.timer.Stop()
	return call, h.unlinkLocked(call)
}

// failCallLocked answers a call with an error and forgets it. It is a
// no-op for a call already answered (a failed send after the page's close
// answered it).
func (h *Hub) failCallLocked(id uint64, why string) *runtimeCall {
	call, _ := h.forgetCallLocked(id)
	if call != nil && call.reqID != nil {
		call.sess.enqueue(appendError(nil, call.reqID, "", &wireError{codeServerError, call.cdp + ": " + why}))
	}
	if call != nil && call.own != nil {
		call.own(nil, why)
	}
	return call
}

// runtimeDeadline answers a call the page did not answer in time. A
// command the page was sent is withdrawn (runtime.cancel, which also frees
// the handles of an answer still on its way); one still waiting behind the
// window never reaches the page.
func (h *Hub) runtimeDeadline(id uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	call := h.calls[id]
	if call == nil {
		return
	}
	d := h.runtimeTimeout
	why := fmt.Sprintf("the page %q did not answer within %v (the client Runtime deadline, "+
		"cdpserver.Options.ClientRuntimeTimeout); the command was cancelled in the page", call.page, d)
	if !call.sent {
		why = fmt.Sprintf("the page %q did not answer within %v (the client Runtime deadline, "+
			"cdpserver.Options.ClientRuntimeTimeout); the command never reached the page: it waited behind "+
			"%d commands in flight to it (at most %d run at once)", call.page, d, call.ctx.flow.inFlight, pageWindow)
	}
	if _, wasSent := h.forgetCallLocked(id); wasSent {
		h.controlLocked(call.ctx, &sourceproto.RuntimeCancel{Session: call.wire, ID: id, Method: call.method})
	}
	if call.reqID != nil {
		call.sess.enqueue(appendError(nil, call.reqID, "", &wireError{codeServerError, call.cdp + ": " + why}))
	}
	if call.own != nil {
		call.own(nil, why)
	}
}

// runtimeResultLocked settles the call a runtime.result answers and
// returns the ack to queue, or nil. A result nobody waits for (late,
// cancelled, its window gone) gets no ack: the command was withdrawn with
// runtime.cancel, which frees that answer's handles in the page whether it
// arrives before or after the answer.
func (h *Hub) runtimeResultLocked(ref sourceproto.SourceRef, res *sourceproto.RuntimeResult) (*clientContext, *sourceproto.RuntimeAck) {
	call := h.calls[res.ID]
	if call == nil || !call.sent || call.ref != ref || call.wire != res.Session || call.method != res.Method {
		return nil, nil
	}
	h.forgetCallLocked(res.ID)
	ack := &sourceproto.RuntimeAck{Session: res.Session, ID: res.ID, Method: res.Method, Accepted: true}
	if call.own != nil {
		switch {
		case res.Rejected != nil:
			ack.Accepted = false
			call.own(nil, fmt.Sprintf("the worker refused the page's answer (%s): %s", res.Rejected.Code, res.Rejected.Reason))
		case res.Error != nil:
			call.own(nil, fmt.Sprintf("the page %q answered %s: %s", call.page, res.Error.Code, res.Error.Message))
		default:
			call.own(res, "")
		}
		return call.ctx, ack
	}
	if res.Rejected != nil {
		// The worker refused the answer (over a limit, invalid): the
		// window hears why now, and the page frees what it made for it.
		ack.Accepted = false
		if call.reqID != nil {
			call.sess.enqueue(appendError(nil, call.reqID, "", &wireError{codeServerError, fmt.Sprintf(
				"%s: the page %q answered, but the worker refused the answer (%s): %s", call.cdp, call.page, res.Rejected.Code, res.Rejected.Reason)}))
		}
		return call.ctx, ack
	}
	if call.reqID == nil {
		return call.ctx, ack // the worker's own release
	}
	if res.Error != nil {
		call.sess.enqueue(appendError(nil, call.reqID, "", &wireError{codeServerError,
			fmt.Sprintf("%s: the page %q answered %s: %s", call.cdp, call.page, res.Error.Code, res.Error.Message)}))
		return call.ctx, ack
	}
	ack.Accepted = h.deliverResultLocked(ref, call, res)
	return call.ctx, ack
}

// deliverResultLocked maps a successful result's handles into the window's
// table and answers the window. It reports whether the handles were kept.
func (h *Hub) deliverResultLocked(ref sourceproto.SourceRef, call *runtimeCall, res *sourceproto.RuntimeResult) bool {
	m := &objectMapper{t: call.sess.objects, realm: call.realm, gen: call.ref.Gen, group: call.group,
		ctxID: call.ctxID, scriptID: h.scriptIDLocked(ref)}
	if call.dom != nil {
		return h.deliverDOMLocked(call, res, m)
	}
	kept := true
	var body []byte
	var err error
	if call.rt != nil && call.rt.keepsNoObjects {
		m.noHandles, kept = true, false
	}
	if call.rt != nil {
		body, err = call.rt.render(res, m)
	} else {
		body, err = cdpproject.RuntimeResult(res, m.values())
	}
	if err == nil && m.full {
		err = h.objectsFullLocked(call.sess, call.realm, call.page)
	}
	if err != nil {
		m.rollback()
		call.sess.enqueue(appendError(nil, call.reqID, "", &wireError{codeServerError, call.cdp + ": " + err.Error()}))
		return false
	}
	call.sess.enqueue(appendResult(nil, call.reqID, body))
	return kept
}

// scriptIDLocked maps a page script URL to its "c<n>" id for stack traces.
func (h *Hub) scriptIDLocked(ref sourceproto.SourceRef) func(string) string {
	c := h.byRef[ref]
	return func(u string) string {
		if c == nil {
			return ""
		}
		return c.scriptIDFor(u)
	}
}

// failCallsLocked answers every call to a source generation that went away.
func (h *Hub) failCallsLocked(ref sourceproto.SourceRef, page string) {
	for id, call := range h.calls {
		if call.ref == ref {
			h.failCallLocked(id, fmt.Sprintf("the page %q closed before it answered", page))
		}
	}
}
