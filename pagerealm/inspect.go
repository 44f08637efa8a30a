package pagerealm

import "github.com/inspector-worker/inspector-worker/sourceproto"

// What the transport's tests read of the hub: its bounds and a few counts,
// each taken under the hub's lock. Nothing here changes the hub.

// The page backend's bounds and names, for the transport's tests.
const (
	PageWindow          = pageWindow          // runtime commands in flight per page
	PageBacklog         = pageBacklog         // runtime commands waiting per page
	MaxReplayPerContext = maxReplayPerContext // console messages kept per page load
	MaxPageScripts      = maxPageScripts      // scripts kept per page load
	ConsoleGroup        = consoleGroup        // the object group of console arguments
	SyntaxCheck         = syntaxCheck         // the page-side check Runtime.compileScript sends
)

// WireSession is a window's session id in the page protocol.
func WireSession(w *Window) string { return wireSession(w) }

// Context is one page generation's execution context.
type Context = clientContext

// ContextOf is the live context of a page generation; nil when none.
func (h *Hub) ContextOf(ref sourceproto.SourceRef) *Context {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.byRef[ref]
}

// FlowCounts is what a page generation's flow holds: commands in flight,
// commands waiting, control frames waiting.
func (h *Hub) FlowCounts(c *Context) (inFlight, waiting, control int) { return h.flowCounts(c) }

// KeptConsole counts the console messages kept for replay, over every page.
func (h *Hub) KeptConsole() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, f := range h.frames {
		if f.ctx != nil {
			n += len(f.ctx.console.msgs)
		}
	}
	return n
}

// Replay is a window's console replay in progress.
type Replay = windowReplay

// ReplayOf is w's replay in progress (nil when none) and how many live
// events it holds back.
func (h *Hub) ReplayOf(w *Window) (r *Replay, held int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r = w.client.replay; r != nil {
		held = len(r.held)
	}
	return r, held
}

// DOMCounts is what the hub holds for the windows' Elements trees, summed
// over the open windows: the page generations in their documents, their
// namespaces, the namespaces a page was sent commands in, the searches
// kept, and the runtime commands in flight (DOM ones included).
type DOMCounts struct {
	Windows, Pages, Namespaces, Used, Searches, Calls int
}

// DOMCounts counts what the hub holds for the windows' DOM.
func (h *Hub) DOMCounts() DOMCounts {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := DOMCounts{Calls: len(h.calls)}
	for _, w := range h.sessionsLocked() {
		d := &w.client.dom
		n.Windows++
		n.Pages += len(d.pages)
		n.Namespaces += len(d.byNS)
		n.Used += len(d.used)
		n.Searches += len(d.searches)
	}
	return n
}
