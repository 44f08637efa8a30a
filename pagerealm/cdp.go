package pagerealm

import (
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// sessionState is what the hub knows of one DevTools session. Guarded by
// Hub.mu.
type sessionState struct {
	pageEnabled     bool
	runtimeEnabled  bool
	debuggerEnabled bool
	dropped         int             // client observations dropped because the window fell behind
	replay          *windowReplay   // the window's replay in progress, nil when none (replay.go)
	owed            owedState       // page state, scripts and loss reports not queued yet (owed.go)
	fullTold        map[string]bool // page loads (context unique ids) told their console objects are refused
	dom             domState        // the window's DOM of the pages (dom.go)
	// target is the source id of the page whose own target the window is
	// on (pagetarget.go); "" for the combined target, which sees every
	// page and the host. Static after construction.
	target string
	// lifecycle: Page.setLifecycleEventsEnabled (a page target's window).
	lifecycle bool
	// newDoc: Page.addScriptToEvaluateOnNewDocument sources kept for the
	// page's next loads (a page target's window).
	newDoc []newDocScript
	// worlds: the named worlds a page target's window asked for
	// (pageworld.go), made in each load of its page.
	worlds []string
}

// sees reports whether the window is shown page f: every window of the
// combined target is; a page target's window only its own page.
func (ss *sessionState) sees(f *clientFrame) bool { return ss.target == "" || ss.target == f.sourceID }

// broadcastLocked enqueues what build returns for each session that sees
// frame f (pagetarget.go).
func (h *Hub) broadcastLocked(f *clientFrame, build func(*sessionState) [][]byte) {
	for _, s := range h.sessionsLocked() {
		if !s.client.sees(f) {
			continue
		}
		for _, m := range build(&s.client) {
			h.queueLocked(s, m)
		}
	}
}

func (h *Hub) frameJSON(f *clientFrame, c *clientContext) cdpproject.Frame {
	loader := f.id
	if c != nil {
		loader = fmt.Sprintf("%s.%d", f.id, c.ref.Gen)
	}
	return cdpproject.Frame{
		ID: cdp.FrameID(f.id), ParentID: cdp.FrameID(h.targetID), LoaderID: cdp.LoaderID(loader), Name: f.displayName(),
		URL: f.url, SecurityOrigin: f.origin(), MimeType: "text/html",
	}
}

func (h *Hub) frameAttached(f *clientFrame) []byte {
	return cdpproject.FrameAttached(f.id, h.targetID)
}

func (h *Hub) frameNavigated(f *clientFrame, c *clientContext) []byte {
	return cdpproject.FrameNavigated(h.frameJSON(f, c))
}

// documentOpened announces a page load. It is Page.frameNavigated plus the
// frame's Document resource: on Page.frameNavigated alone the frontend drops
// the frame's resources of the previous load (another loaderId), so after a
// reload the page's "(index)" left Sources; on Page.documentOpened it adds
// the Document back.
func (h *Hub) documentOpened(f *clientFrame, c *clientContext) []byte {
	return cdpproject.DocumentOpened(h.frameJSON(f, c))
}

func (h *Hub) contextCreated(c *clientContext) []byte {
	return cdpproject.ExecutionContextCreated(c.description())
}

// description names the context for the projector.
func (c *clientContext) description() cdpproject.Context {
	return cdpproject.Context{ID: c.id, UniqueID: c.uniqueID, Origin: c.frame.origin(), Name: c.frame.displayName(), FrameID: c.frame.id}
}

// childFramesLocked lists the client frames for Page.getResourceTree.
func (h *Hub) childFramesLocked() []cdpproject.FrameTree {
	var out []cdpproject.FrameTree
	for _, id := range h.order {
		f := h.frames[id]
		out = append(out, cdpproject.FrameTree{Frame: h.frameJSON(f, f.ctx), Resources: []cdpproject.FrameResource{}})
	}
	return out
}

// consoleLocked projects one client console call, keeps it for replay and
// sends it to every window with Runtime enabled. It is encoded once: the
// replay buffer and every window share the bytes (replay.go).
//
// An event with a session is that window's copy of the call (the page
// sends one per call per enabled window, docs/protocol.md "Console"): it
// goes to that window only, its handles mapped to objectIds in the window's
// table (group "console"). The first enabled window's copy, without
// objectIds, feeds the replay buffer; an event without a session (no window
// enabled in the page) goes to every window and to the replay.
func (h *Hub) consoleLocked(c *clientContext, ev *sourceproto.ConsoleEvent) {
	// Sized like the page's last message: a page's messages are alike, and
	// append's doubling left kept messages a quarter empty on average.
	msg := appendConsoleMessage(make([]byte, 0, c.msgSize+64), c, ev, nil)
	c.msgSize = len(msg)
	if ev.Session == "" || (len(c.consoleSessions) > 0 && ev.Session == c.consoleSessions[0]) {
		c.console.keep(msg)
	}
	if ev.Session != "" {
		s := h.sessionByWireLocked(ev.Session)
		if s == nil || !s.client.runtimeEnabled {
			return // closed or disabled meanwhile: the page frees the handles (console.disable)
		}
		ids, refused := consoleObjectIDs(s, c, ev)
		if ids != nil {
			msg = appendConsoleMessage(make([]byte, 0, len(msg)+16*len(ids)), c, ev, ids)
		}
		if refused && !s.client.fullTold[c.uniqueID] {
			h.tellFullLocked(s, c)
		}
		if !h.observeLocked(s, msg) {
			// The window never sees these ids; the page frees the handles
			// with the console group.
			for _, id := range ids {
				s.objects.Release(id)
			}
		}
		return
	}
	for _, s := range h.sessionsLocked() {
		if s.client.runtimeEnabled && s.client.sees(c.frame) {
			h.observeLocked(s, msg)
		}
	}
}

// consoleObjectIDs maps an event's handles into the window's table; nil
// when it has none. An argument the table refuses (the page holds its
// share of it, or it is full) is shown by its preview alone; refused says
// whether one was.
func consoleObjectIDs(s *Window, c *clientContext, ev *sourceproto.ConsoleEvent) (ids []string, refused bool) {
	for i := range ev.Args {
		hd := ev.Args[i].Handle
		if hd == "" {
			continue
		}
		if ids == nil {
			ids = make([]string, len(ev.Args))
		}
		var ok bool
		ids[i], ok = s.objects.Add(object.Handle{Realm: c.realm.ID, Generation: c.ref.Gen, ID: hd}, consoleGroup)
		refused = refused || !ok
	}
	return ids, refused
}

// tellFullLocked tells a window, once per page load, that the page's
// console objects no longer get objectIds in it.
func (h *Hub) tellFullLocked(s *Window, c *clientContext) {
	if s.client.fullTold == nil {
		s.client.fullTold = map[string]bool{}
	}
	s.client.fullTold[c.uniqueID] = true
	why := "its share of this window's objects"
	if fe := s.objects.Full(c.realm.ID); fe != nil && !fe.Share {
		why = "the window's object table is full"
	}
	h.observeLocked(s, logEntry("warning", fmt.Sprintf("[inspector-worker] the page %s holds %d objects in this window (%s): "+
		"its console messages show previews without objectIds until the Console is cleared", c.frame.displayName(), s.objects.Held(c.realm.ID), why), time.Now()))
}

// sessionByWireLocked finds the window of a wire session id.
func (h *Hub) sessionByWireLocked(wire string) *Window {
	for _, s := range h.sessionsLocked() {
		if wireSession(s) == wire {
			return s
		}
	}
	return nil
}

func (h *Hub) sessionsLocked() []*Window {
	return h.host.Windows()
}

// lossReportDelay bounds how long a window waits to hear that client
// observations were dropped for it when no later observation reaches it
// (the page went quiet at the end of a flood): losses are never silent.
const lossReportDelay = 250 * time.Millisecond

// observeLocked queues a client observation for one window, dropping it
// (counted, then announced) when the window has fallen behind. The
// announcement goes before the next observation the window takes, so it
// marks where the gap is, or at the latest after lossReportDelay.
// It reports whether msg was queued. While the window's replay runs, msg
// is held behind it instead (replay.go).
func (h *Hub) observeLocked(s *Window, msg []byte) bool {
	if r := s.client.replay; r != nil {
		return r.holdLocked(s, msg)
	}
	h.settleLocked(s)
	if s.client.dropped > 0 {
		if !s.sink.PushLossy(droppedWarning(s.client.dropped)) {
			s.client.dropped++
			return false
		}
		s.client.dropped = 0
	}
	if !s.sink.PushLossy(msg) {
		s.client.dropped++
		h.armLossTimerLocked()
		return false
	}
	return true
}

// reportLosses tells every window that still has unannounced drops how many,
// and queues what windows are owed where they have room (settleLocked arms
// the timer again for the rest).
// The warning goes ahead of the window's backlog (pushFront): the window is
// behind by definition, and up to half a queue of older messages would
// otherwise keep the news from it for seconds. It is one small message
// every lossReportDelay at most, so it does not count against the bounds.
func (h *Hub) reportLosses() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lossTimer = nil
	for _, s := range h.sessionsLocked() {
		// A window in its replay hears of its losses after it (endReplayLocked).
		if s.client.dropped > 0 && s.client.replay == nil && s.sink.PushFront(droppedWarning(s.client.dropped)) == nil {
			s.client.dropped = 0
		}
		h.settleLocked(s)
	}
}

func droppedWarning(n int) []byte {
	return logEntry("warning", fmt.Sprintf("[inspector-worker] %d client console messages were dropped for this window: "+
		"it fell behind the pages' output", n), time.Now())
}

// appendConsoleMessage writes the whole Runtime.consoleAPICalled message:
// ids, when not nil, holds each argument's objectId in the receiving
// window ("" for none).
func appendConsoleMessage(b []byte, c *clientContext, ev *sourceproto.ConsoleEvent, ids []string) []byte {
	v := cdpproject.Values{ScriptID: c.scriptIDFor, ContextID: c.id}
	return v.AppendConsoleAPICalled(b, ev, ids)
}

// DebuggerDisabled runs on the host's answer to Debugger.disable: the
// window's page scripts stop.
func (h *Hub) DebuggerDisabled(s *Window) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.client.debuggerEnabled = false
	s.client.owed.scripts = nil
}

// PageDisable answers Page.disable: the window's frame events stop.
func (h *Hub) PageDisable(s *Window, req Request) {
	h.mu.Lock()
	s.client.pageEnabled = false
	s.client.owed.frames = nil
	h.mu.Unlock()
	s.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
}

// DiscardConsole forgets the replay buffers (Runtime.discardConsoleEntries:
// V8 does the same for the host, for every session) and the window's page
// console objects; the request then goes to the host, which discards its
// own.
func (h *Hub) DiscardConsole(s *Window) {
	h.discardConsole()
	h.discardConsoleFor(s)
}

// discardConsole forgets the replay buffers.
func (h *Hub) discardConsole() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.frames {
		if f.ctx != nil {
			f.ctx.console = replayBuffer{}
		}
	}
	h.app = replayBuffer{}
}

// PageEnable answers Page.enable under the hub's lock, so frame events and
// the tree agree.
func (h *Hub) PageEnable(s *Window, req Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.client.pageEnabled = true
	s.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
}

// ResourceTree answers Page.getResourceTree under the hub's lock, so frame
// events and the tree agree.
func (h *Hub) ResourceTree(s *Window, req Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.enqueue(appendResult(nil, req.ID, h.host.ResourceTree(h.childFramesLocked())))
}
