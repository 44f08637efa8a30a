package pagerealm

import (
	"container/list"
	"fmt"

	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Flow control of the worker's own frames to a page. Everything the hub
// sends a page about Runtime and console objects — runtime.command,
// runtime.ack, runtime.cancel, console.enable/disable/discard — goes
// through the page's pageFlow and is written by one goroutine per page
// (pageSendLoop), in order, outside hub.mu:
//
//   - commands: at most pageWindow (and about pageWindowBytes) in flight to
//     a page, i.e. sent and neither answered nor withdrawn; the rest wait in
//     the page's FIFO (pageBacklog DevTools commands, pageBacklogBytes),
//     with their deadline running from the DevTools request's arrival. A
//     request past the backlog is answered at once with an error naming
//     the limit. Releases (the worker's own, and a window's
//     Runtime.releaseObject) wait in the same FIFO, in order, outside that
//     count (pageReleaseBacklog).
//   - control frames (acks, cancels, console.*) go out before any further
//     command and are never dropped: an ack follows a result of a command
//     in flight, a cancel withdraws one, so the two together are at most
//     pageWindow between two turns of the send loop; console frames are one
//     per window per Runtime.enable/disable/discardConsoleEntries.
//
// So the worker's own traffic to one page is at most pageWindow commands
// plus as many acks or cancels plus a few console frames: far inside the
// carrier's outgoing queue (1,024 frames, 8 MiB; sourceproto/carrier),
// which then only overflows for a page that really stopped reading. Before
// this, every command was sent at once and every ack on its own goroutine
// with a cap: 10,000 evaluations at once filled the carrier's queue (the
// page closed with 1008 "client too slow") or dropped acks past the cap,
// and the page freed their handles while the window held them.
//
// The page keeps no bound of its own on answers waiting for their ack (it
// would free handles a window holds): the worker's window bounds them.
const (
	// pageWindow bounds the commands in flight to one page. A page runs
	// them one at a time on its main thread; 64 keep it busy across a
	// loopback round trip while the worker's frames to the page stay under
	// a tenth of the carrier's queue. 10,000 ~1 KiB evaluations into
	// Chromium (2 shared cores): 8 in flight 6.8–7.4 s, 64 4.3–4.4 s, 256
	// 4.8–5.2 s.
	pageWindow = 64
	// pageWindowBytes bounds the estimated bytes of the commands in flight,
	// so a window of large expressions (up to a frame, 1 MiB, each) stays
	// far from the carrier's 8 MiB queue. One command is always allowed.
	pageWindowBytes = 1 << 20
	// pageBacklog bounds the DevTools commands waiting for one page behind
	// its window: a burst of 10,000 at once (a script driving the
	// Console) fits; past it a request gets an error at once rather than
	// a place in a queue that would outlive its deadline.
	pageBacklog = 16_384
	// pageBacklogBytes bounds their estimated bytes (a DevTools message may
	// be large): 64 MiB is the worst case of one page's backlog.
	pageBacklogBytes = 64 << 20
	// pageReleaseBacklog bounds the releases waiting for one page. Below
	// it a release is never refused: each stands for entries a window's
	// table let go of (at most object.MaxObjects per window at a time), so
	// an honest page never gets near it; past it (a page that has not
	// taken a release for that long) further releases are dropped and
	// logged, and the page frees those objects when it closes or reloads.
	pageReleaseBacklog = object.MaxObjects
	// commandOverhead is what a command costs beyond its DevTools params in
	// the size estimate (envelope, ids, member names; the syntax check's
	// wrapper).
	commandOverhead = 1 << 10
)

// pageFlow is one page generation's worker → page traffic. Guarded by
// Hub.mu.
type pageFlow struct {
	control  []sourceproto.Body // acks, cancels, console frames, in order; before any further command
	waiting  list.List          // *runtimeCall not yet sent, in arrival order
	backlog  int                // DevTools commands among waiting
	bytes    int                // their estimated bytes
	releases int                // releases among waiting (runtimeCall.release)
	inFlight int                // commands sent (or being sent), not answered nor withdrawn
	flyBytes int                // their estimated bytes
	sending  bool               // a pageSendLoop runs for this page
	dropped  int                // releases dropped past pageReleaseBacklog (logged)
}

// admitLocked queues a registered call for its page. It returns an error
// (and the call is not queued) when the page's backlog is full.
func (h *Hub) admitLocked(c *clientContext, call *runtimeCall) *wireError {
	f := &c.flow
	switch {
	case call.release() && f.releases >= pageReleaseBacklog:
		f.dropped++
		h.host.Logf("client %s: %d releases wait for the page %q already (it does not answer them); dropped one (%d so far)",
			c.ref.ID, f.releases, call.page, f.dropped)
		return &wireError{codeServerError, fmt.Sprintf("the page %q has %d releases waiting already and does not answer them; "+
			"it frees the object when it reloads or closes", call.page, f.releases)}
	case !call.release() && (f.backlog >= pageBacklog || f.bytes+call.size > pageBacklogBytes):
		return &wireError{codeServerError, fmt.Sprintf("the page %q has %d commands waiting already (%d KiB; at most %d commands "+
			"or %d MiB wait for one page behind the %d it runs): send fewer at once, or retry when it has answered",
			call.page, f.backlog, f.bytes>>10, pageBacklog, pageBacklogBytes>>20, pageWindow)}
	}
	if call.release() {
		f.releases++
	} else {
		f.backlog++
		f.bytes += call.size
	}
	call.elem = f.waiting.PushBack(call)
	h.kickLocked(c)
	return nil
}

// controlLocked queues a control frame for the page and starts its sender.
func (h *Hub) controlLocked(c *clientContext, b sourceproto.Body) {
	c.flow.control = append(c.flow.control, b)
	h.kickLocked(c)
}

// kickLocked starts the page's send loop unless it runs. Starting a
// goroutine under hub.mu is fine: it takes the lock itself.
func (h *Hub) kickLocked(c *clientContext) {
	if c.flow.sending || h.byRef[c.ref] != c {
		return
	}
	c.flow.sending = true
	go h.pageSendLoop(c)
}

// unlinkLocked takes a call out of its page's flow: out of the FIFO if it
// waits, out of the window if it was sent (a slot frees, so the sender is
// started). It reports whether the page had been sent the command.
func (h *Hub) unlinkLocked(call *runtimeCall) (wasSent bool) {
	c := call.ctx
	if c == nil {
		return false
	}
	f := &c.flow
	switch {
	case call.elem != nil:
		f.waiting.Remove(call.elem)
		call.elem = nil
		if call.release() {
			f.releases--
		} else {
			f.backlog--
			f.bytes -= call.size
		}
		return false
	case call.sent:
		call.sent = false
		f.inFlight--
		f.flyBytes -= call.size
		h.kickLocked(c)
		return true
	}
	return false
}

// takeLocked hands the send loop what it may send now: every control
// frame, then the commands the window has room for (once the page has its
// welcome), which count as in flight from here. A page that is gone gets
// nothing more; its calls were answered by destroyLocked.
func (h *Hub) takeLocked(c *clientContext, frames []sourceproto.Body, calls []*runtimeCall) ([]sourceproto.Body, []*runtimeCall) {
	f := &c.flow
	if h.byRef[c.ref] != c {
		return frames, calls
	}
	frames = append(frames, f.control...)
	clear(f.control)
	f.control = f.control[:0]
	for c.welcomed && f.inFlight < pageWindow {
		e := f.waiting.Front()
		if e == nil {
			break
		}
		call := e.Value.(*runtimeCall)
		if f.inFlight > 0 && f.flyBytes+call.size > pageWindowBytes {
			break
		}
		f.waiting.Remove(e)
		call.elem, call.sent = nil, true
		if call.release() {
			f.releases--
		} else {
			f.backlog--
			f.bytes -= call.size
		}
		f.inFlight++
		f.flyBytes += call.size
		calls = append(calls, call)
	}
	return frames, calls
}

// pageSendLoop writes a page's control frames and commands, in order,
// until there is nothing it may send; the next change to the flow starts
// it again. It is the only goroutine sending the hub's runtime and console
// frames to that page, so they reach it in the order they were queued.
// A failed Send means the page's connection ended (a full outbox ends it
// inside Send, and SourceClosed answers every call of the page; a call
// failed here first is answered once, SourceClosed then skips it).
func (h *Hub) pageSendLoop(c *clientContext) {
	var frames []sourceproto.Body
	var calls []*runtimeCall
	for {
		h.mu.Lock()
		frames, calls = h.takeLocked(c, frames[:0], calls[:0])
		reg := h.reg
		if reg == nil || (len(frames) == 0 && len(calls) == 0) {
			c.flow.sending = false
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		for _, b := range frames {
			_ = reg.Send(c.ref, b)
		}
		for _, call := range calls {
			if err := reg.Send(c.ref, call.cmd); err != nil {
				h.mu.Lock()
				h.failCallLocked(call.cmd.ID, "cannot send the command to the page: "+err.Error())
				h.mu.Unlock()
			}
		}
		clear(frames)
		clear(calls)
	}
}

// flowCounts is a page's flow state, for tests: commands in flight, waiting
// (DevTools and releases), control frames queued.
func (h *Hub) flowCounts(c *clientContext) (inFlight, waiting, control int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return c.flow.inFlight, c.flow.waiting.Len(), len(c.flow.control)
}
