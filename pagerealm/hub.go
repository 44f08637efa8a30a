package pagerealm

import (
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/realm"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Client realms (browser pages) reach the worker through sourceproto; the hub
// is the sourceproto.Consumer that turns each client source into what a
// DevTools window expects of a page with child frames:
//
//   - one synthetic child frame per source id (stable across reloads),
//     announced with Page.frameAttached/frameNavigated and listed in
//     Page.getResourceTree; Page.frameDetached when the page is gone;
//   - one execution context per source generation: negative id, own uniqueId,
//     auxData {isDefault:true, frameId} (isDefault:false would make the
//     frontend treat it as an extension content script);
//   - its console messages as Runtime.consoleAPICalled, replayed (bounded) to
//     every window after its Runtime.enable answer, then live
//     (replay.go);
//   - its scripts as Debugger.scriptParsed (ids "c<n>"), with sources read
//     from the page on demand (scripts.go).
//
// Every projection to sessions happens under hub.mu, and so does every
// session's switch of its enable flags, so a window gets each event exactly
// once: either in its replay or live, never both, never neither (live
// events wait behind a replay in progress, replay.go). Answers to
// a window's own requests may be queued after hub.mu is released.

// maxReplayPerContext bounds the console messages kept per client context
// for windows that open (or enable Runtime) later; maxReplayBytes bounds
// their bytes. The oldest go first; the replay then starts with a warning
// saying how many were dropped.
const maxReplayPerContext = 1000

// frameDetachGrace is how long a page's frame outlives its connection: a
// reload reconnects within it and keeps its frame (and the window's place in
// Sources); a page that is really gone is detached after it.
const frameDetachGrace = 3 * time.Second

// Hub's goroutines, each taking mu itself: a pageSendLoop per page
// while the page has frames it may be sent (flow.go), a replay
// pump per window whose replay runs (replay.go), and timer
// functions (deadlines, frame detach, loss reports).
type Hub struct {
	host           Host            // Static after construction.
	targetID       string          // Static after construction.
	registry       *realm.Registry // Static after construction.
	runtimeTimeout time.Duration   // Static after construction.
	served         []string        // Static after construction: Config.Served.

	// mu guards the hub's state and serializes every projection to the
	// sessions. Lock order: docs/locks.md (mu → Server.mu → sendQueue.mu,
	// realm.Registry.mu, object.Table.mu).
	//
	// The sourceproto.Consumer callbacks (SourceOpened … Response) arrive
	// holding no registry lock and take mu. Holding mu, never call into
	// sourceproto (Registry.Send, Source.Close, Registry.Open): a full
	// outbox makes Send end the page's connection and deliver its
	// SourceClosed on the caller's goroutine, which takes mu again. Nor
	// write to a socket or call another package's callback: decide under
	// mu, release it, then act (ScriptRequest, sendRead; runtime and
	// console frames are queued in the page's flow under mu and written by
	// its pageSendLoop goroutine, flow.go). Holding mu
	// the hub may: queue messages to sessions (Session.enqueue never
	// blocks; on overflow it retires the session with timers only), take
	// Server.mu (sessionsLocked), update the realm registry, and arm or
	// stop timers (their functions take mu on their own goroutine).
	// Session.mu is never held together with mu. Options.Logf can run
	// under mu (a session's overflow is logged), so it must not call back
	// into the Server.
	mu         sync.Mutex                               // Lock order: see docs/locks.md.
	reg        *sourceproto.Registry                    // Guarded by mu: set once by SetSourceRegistry.
	frames     map[string]*clientFrame                  // Guarded by mu: by source id.
	order      []string                                 // Guarded by mu: source ids in attach order.
	byRef      map[sourceproto.SourceRef]*clientContext // Guarded by mu.
	scripts    map[string]*clientScript                 // Guarded by mu: by scriptId.
	nextCtx    int                                      // Guarded by mu: last context id handed out (negative).
	nextFrame  int                                      // Guarded by mu.
	nextScript int                                      // Guarded by mu.
	reads      scriptReads                              // Guarded by mu.
	nextRead   uint64                                   // Guarded by mu: last script read id.
	lossTimer  *time.Timer                              // Guarded by mu: a pending reportLosses, nil when none.
	calls      runtimeCalls                             // Guarded by mu: runtime commands in flight (runtime.go).
	nextCall   uint64                                   // Guarded by mu: last runtime command id.
	app        replayBuffer                             // Guarded by mu: the host's observations (app.go).
	nextNS     uint64                                   // Guarded by mu: last DOM namespace handed out (dom.go).
	nextSearch uint64                                   // Guarded by mu: last DOM search id (dom_search.go).
	// Page targets (pagetarget.go).
	targets     chan struct{} // Guarded by mu: closed at the next change of the page targets; nil until asked.
	navigations []*navigation // Guarded by mu: Page.navigate requests waiting for their page's next load.
	nextNewDoc  uint64        // Guarded by mu: last new-document script identifier.
}

type clientFrame struct {
	sourceID string
	id       string
	url      string
	title    string
	ctx      *clientContext // nil while disconnected
	detach   *time.Timer
}

type clientContext struct {
	ref      sourceproto.SourceRef
	frame    *clientFrame
	realm    *realm.Realm
	id       int
	uniqueID string
	console  replayBuffer           // Runtime.consoleAPICalled messages, shared with every window
	msgSize  int                    // the length of the last one, to size the next
	scripts  pageScripts            // the page's scripts, bounded and indexed (scriptstore.go)
	caps     sourceproto.Capability // what the page's hello offered
	// consoleSessions are the windows (wire session ids) the page was told
	// to serialize console calls for (console.enable), in that order. The
	// first one's events feed the replay buffer: the page sends one event
	// per call per session.
	consoleSessions []string
	// navigated: this load is a reload whose Console divider is not shown
	// yet (navigatedLocked).
	navigated bool
	// welcomed: the page sent its initial replace, so it has its welcome and
	// takes worker frames; until then Runtime commands wait in flow and no
	// console frame is queued (consoleEnableWelcomed sends what is due).
	welcomed bool
	flow     pageFlow // the worker's frames to the page (flow.go)
	// worlds are the load's named worlds, by name (pageworld.go).
	worlds map[string]*worldAlias
}

type clientScript struct {
	id  string
	url string
	ctx *clientContext
}

// New returns the page backend of a worker. Create the
// sourceproto.Registry with it as a Consumer, then hand the registry back
// with SetRegistry (the hub sends worker → page frames through it).
func New(host Host, cfg Config) *Hub {
	return &Hub{
		host:           host,
		targetID:       cfg.TargetID,
		registry:       cfg.Registry,
		runtimeTimeout: cfg.RuntimeTimeout,
		served:         cfg.Served,
		frames:         map[string]*clientFrame{},
		byRef:          map[sourceproto.SourceRef]*clientContext{},
		scripts:        map[string]*clientScript{},
		reads:          scriptReads{},
		calls:          runtimeCalls{},
	}
}

// SetRegistry gives the hub the registry it sends worker → page frames
// through.
func (h *Hub) SetRegistry(reg *sourceproto.Registry) {
	h.mu.Lock()
	h.reg = reg
	h.mu.Unlock()
}

// SourceOpened creates the context of a new page generation (and its frame
// when the source id is new).
func (h *Hub) SourceOpened(info sourceproto.SourceInfo) {
	if info.Ref.Role != sourceproto.RoleClient {
		return // the host channel has no DevTools projection yet
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f, known := h.frames[info.Ref.ID]
	if !known {
		h.nextFrame++
		f = &clientFrame{sourceID: info.Ref.ID, id: fmt.Sprintf("%s.client-%d", h.targetID, h.nextFrame)}
		h.frames[info.Ref.ID] = f
		h.order = append(h.order, info.Ref.ID)
	}
	if f.detach != nil {
		f.detach.Stop()
		f.detach = nil
	}
	if info.Page != nil {
		f.url, f.title = info.Page.URL, info.Page.Title
	}
	if f.ctx != nil { // superseded generation not closed yet
		h.destroyLocked(f.ctx, "the page reconnected before it sent the script")
	}
	h.nextCtx--
	c := &clientContext{
		ref: info.Ref, frame: f, id: h.nextCtx, caps: info.Capabilities,
		uniqueID: fmt.Sprintf("iw-client.%s.%d", info.Ref.ID, info.Ref.Gen),
		realm:    realm.NewClientRealm(info.Ref.ID, f.displayName()),
	}
	f.ctx = c
	h.byRef[info.Ref] = c
	reg := h.registry
	reg.Remove(c.realm.ID)
	if err := reg.Add(c.realm); err == nil {
		_ = reg.BindContext(c.realm, c.id, c.uniqueID)
	}
	c.navigated = known
	h.broadcastLocked(f, func(ss *sessionState) [][]byte {
		if ss.target != "" {
			return h.mainFrameLoaded(f, c, ss) // pagetarget.go: with the context, in Chrome's order
		}
		var out [][]byte
		if ss.pageEnabled {
			if !known {
				out = append(out, h.frameAttached(f))
			}
			out = append(out, h.documentOpened(f, c))
		}
		if ss.runtimeEnabled {
			out = append(out, h.contextCreated(c))
		}
		return out
	})
	h.pageOpenedDOMLocked(c)
	h.targetLoadedLocked(c) // pagetarget.go
	// console.enable for the windows that have Runtime enabled waits for the
	// page's initial replace (Replaced): sent from here it raced the welcome
	// that Open's caller sends after this callback, and a page drops frames
	// that come before its welcome, so load-time console objects had no
	// objectIds.
}

// navigatedLocked shows the Console's divider for a page reload, once, with
// the new load's first items. Chrome clears the Console on a main-frame
// navigation (or prints "Navigated to <url>" with Preserve log) and does
// neither for a child frame; a client page is a child frame here, but to its
// developer it is a whole page, so the window gets Chrome's words as an info
// line. Nothing is cleared: the Console also holds the host's messages, and
// the frontend offers no way to clear one frame's messages. New windows get
// only the new load's messages (the replay is per page load).
//
// The Console orders messages by timestamp, and the page's clock is not
// the worker's (a page message sent 25 ms after the worker's "now" was
// stamped 25 ms before it): so the divider waits for the new load's first
// console message and takes the earliest page timestamp of that batch (the
// frontend puts a message with the same stamp after it). A reloaded page
// that never logs gets no divider: there is nothing of it to divide.
func (h *Hub) navigatedLocked(c *clientContext, items []sourceproto.Item) {
	if !c.navigated {
		return
	}
	at := 0.0
	for i := range items {
		if ev := items[i].Console; ev != nil && ev.Timestamp > 0 && (at == 0 || ev.Timestamp < at) {
			at = ev.Timestamp
		}
	}
	if at == 0 {
		return
	}
	c.navigated = false
	msg := logEntryAt("info", "Navigated to "+c.frame.url, at)
	h.broadcastLocked(c.frame, func(ss *sessionState) [][]byte {
		// A page target's page is its main frame: its new load is told by
		// Page.frameNavigated and the lifecycle events, not a divider.
		if !ss.runtimeEnabled || ss.target != "" {
			return nil
		}
		return [][]byte{msg}
	})
}

// SourceClosed destroys the generation's context and, after a grace period
// without a reconnect, the page's frame.
func (h *Hub) SourceClosed(ref sourceproto.SourceRef, code sourceproto.CloseCode) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.byRef[ref]
	if c == nil {
		return
	}
	h.destroyLocked(c, closedBeforeSending(code))
	h.targetsChangedLocked()
	f := c.frame
	f.detach = time.AfterFunc(frameDetachGrace, func() { h.detachFrame(f) })
}

// closedBeforeSending is the error answer of a script read whose page went
// away; a page closed for policy-violation most likely stopped taking the
// worker's frames (its outbox overflowed).
func closedBeforeSending(code sourceproto.CloseCode) string {
	why := fmt.Sprintf("the page's connection closed (%s) before it sent the script", code)
	if code == sourceproto.ClosePolicy {
		why += "; the page stopped taking the worker's messages or broke the protocol"
	}
	return why
}

// destroyLocked ends a page generation's context; its script reads in
// flight are answered with why.
func (h *Hub) destroyLocked(c *clientContext, why string) {
	delete(h.byRef, c.ref)
	if c.frame.ctx == c {
		c.frame.ctx = nil
	}
	for _, s := range c.scripts.list {
		delete(h.scripts, s.id)
	}
	h.reads.failRef(c.ref, why)
	h.failCallsLocked(c.ref, c.frame.displayName())
	h.pageClosedDOMLocked(c)
	h.worldsDestroyedLocked(c) // pageworld.go
	for _, s := range h.sessionsLocked() {
		s.objects.DropRealm(c.realm.ID, c.ref.Gen)
		delete(s.client.fullTold, c.uniqueID)
	}
	h.registry.UnbindContext(c.id, c.uniqueID)
	h.registry.Remove(c.realm.ID)
	h.broadcastLocked(c.frame, func(ss *sessionState) [][]byte {
		if !ss.runtimeEnabled {
			return nil
		}
		return [][]byte{cdpproject.ExecutionContextDestroyed(c.id, c.uniqueID)}
	})
}

func (h *Hub) detachFrame(f *clientFrame) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f.ctx != nil || h.frames[f.sourceID] != f {
		return // reconnected meanwhile
	}
	delete(h.frames, f.sourceID)
	h.targetEndedLocked(f) // pagetarget.go
	for i, id := range h.order {
		if id == f.sourceID {
			h.order = append(h.order[:i], h.order[i+1:]...)
			break
		}
	}
	h.broadcastLocked(f, func(ss *sessionState) [][]byte {
		// A page target's main frame does not detach: the target ends
		// (its window is closed, pagetarget.go).
		if !ss.pageEnabled || ss.target != "" {
			return nil
		}
		return [][]byte{cdpproject.FrameDetached(f.id)}
	})
}

// Replaced and Appended deliver items; a replacement is a snapshot of the
// page's state, so its items are handled like appended ones (page and script
// items are idempotent; console items in it are the producer's backlog).
func (h *Hub) Replaced(ref sourceproto.SourceRef, _ uint64, r *sourceproto.Replace) {
	if r.Reason == sourceproto.ReplaceInitial {
		h.consoleEnableWelcomed(ref)
	}
	h.items(ref, r.Items)
}

// consoleEnableWelcomed runs when a page sends its initial replace (so it
// has its welcome and takes worker frames): the windows that want its
// console objects are told (console.enable), and the Runtime commands
// that waited for it go. The page's items in this replace were serialized
// before it knew: they carry previews only.
func (h *Hub) consoleEnableWelcomed(ref sourceproto.SourceRef) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.byRef[ref]; c != nil {
		c.welcomed = true
		h.consoleEnableLocked(c)
		h.kickLocked(c)
	}
}

func (h *Hub) Appended(ref sourceproto.SourceRef, _ uint64, a *sourceproto.Append) {
	h.items(ref, a.Items)
}

func (h *Hub) items(ref sourceproto.SourceRef, items []sourceproto.Item) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ref.Role == sourceproto.RoleHost {
		h.hostItemsLocked(items)
		return
	}
	c := h.byRef[ref]
	if c == nil {
		return
	}
	h.navigatedLocked(c, items)
	// Page items are state: of a run of them only the last one counts, and
	// windows are owed it (owed.go).
	changed := false
	for i := range items {
		it := &items[i]
		if it.Page != nil {
			c.frame.url, c.frame.title = it.Page.URL, it.Page.Title
			changed = true
			continue
		}
		if changed {
			h.pageChangedLocked(c.frame)
			changed = false
		}
		switch {
		case it.Console != nil:
			h.consoleLocked(c, it.Console)
		case it.Script != nil:
			h.scriptLocked(c, it.Script)
		}
	}
	if changed {
		h.pageChangedLocked(c.frame)
	}
}

// pageChangedLocked owes every window with Page enabled the frame's new
// state.
func (h *Hub) pageChangedLocked(f *clientFrame) {
	h.targetsChangedLocked() // pagetarget.go
	for _, s := range h.sessionsLocked() {
		// A page target's main frame keeps its loader: a new title or a
		// history URL is target info (Target.targetInfoChanged), not a
		// navigation.
		if s.client.pageEnabled && s.client.target == "" {
			h.owePageLocked(s, f)
		}
	}
}

// Gap tells every window that observations of a page or of the host channel
// were lost, and how many: loss is never silent.
func (h *Hub) Gap(ref sourceproto.SourceRef, g sourceproto.Gap) {
	h.mu.Lock()
	defer h.mu.Unlock()
	source := ""
	if ref.Role == sourceproto.RoleClient {
		if h.byRef[ref] == nil {
			return
		}
		source = ref.ID
	}
	// Owed, not queued at once: a page can report a loss with every
	// batch, and a window behind it must not be closed for that.
	for _, s := range h.sessionsLocked() {
		if s.client.target == "" || s.client.target == source {
			h.oweGapLocked(s, source, g.Count, g.Explained)
		}
	}
}

func (h *Hub) Response(ref sourceproto.SourceRef, b sourceproto.Body) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev, ok := b.(*sourceproto.DOMEvents); ok {
		h.domEventsLocked(ref, ev)
		return
	}
	res, ok := b.(*sourceproto.RuntimeResult)
	if !ok {
		h.reads.response(ref, b)
		return
	}
	// The ack goes through the page's flow: it is decided under mu, and a
	// Send under mu could deliver SourceClosed, which takes mu, on this
	// goroutine (flow.go).
	if c, ack := h.runtimeResultLocked(ref, res); ack != nil {
		h.controlLocked(c, ack)
	}
}

func (f *clientFrame) displayName() string {
	if f.title != "" {
		return f.title
	}
	if u, err := url.Parse(f.url); err == nil && u.Host != "" {
		return u.Host + u.Path
	}
	return "client " + f.sourceID
}

func (f *clientFrame) origin() string {
	u, err := url.Parse(f.url)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// HostRestarted queues msgs (the host's reset, hostrealm.WatchState.HostGone) and then
// announces the client pages' contexts and scripts again, which the reset
// cleared from the frontend. Under the hub lock, as every projection of
// client state: a page that opens meanwhile is announced exactly once. A
// replay in progress goes first: the reset clears what it announced.
func (h *Hub) HostRestarted(s *Window, msgs [][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range msgs {
		h.queueLocked(s, m)
	}
	if s.client.runtimeEnabled {
		for _, id := range h.order {
			if c := h.frames[id].ctx; c != nil {
				h.queueLocked(s, h.contextCreated(c))
			}
		}
	}
	if s.client.debuggerEnabled {
		// The list covers the scripts still owed to the window.
		s.client.owed.scripts = nil
		for _, m := range h.scriptsOnEnableLocked() {
			h.queueLocked(s, m)
		}
	}
}

// ScriptIDFor names the script of url in the page generation ref by the
// hub's "c<n>" ids; "" when the hub does not know the page. It takes the
// hub's lock: a caller may hold network.Window.mu (the order
// network.Window.mu → Hub.mu), never the reverse.
func (h *Hub) ScriptIDFor(ref sourceproto.SourceRef, url string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.byRef[ref]; c != nil {
		return c.scriptIDFor(url)
	}
	return ""
}

// FrameOf is the frame of the page generation ref; false when the hub does
// not know the page.
func (h *Hub) FrameOf(ref sourceproto.SourceRef) (cdpproject.Frame, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.byRef[ref]; c != nil {
		return h.frameJSON(c.frame, c), true
	}
	return cdpproject.Frame{}, false
}
