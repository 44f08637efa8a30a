package pagerealm

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/inspector-worker/inspector-worker/cdpproject"
)

// Named worlds on a page target (docs/agent-note.md "Page targets").
// Browser-style clients make a utility world per frame as they attach
// (Page.createIsolatedWorld, and a new-document script with its worldName so
// the browser makes it again in every load), and they evaluate their own
// helpers there: Puppeteer reads a page's title in it, and waits for it
// without end when it never appears. A JavaScript agent in the page cannot
// make a second world. So a named world is the page's own world under a
// context of its own, announced as Chrome announces an isolated world
// (auxData type "isolated", the world's name) and routed to the page like
// its main context: what a tool evaluates there runs, and sees the page's
// globals, as the page sees what it leaves. The README says so.

// worldAlias is a named world of one page load: the load's own world under
// another context id. Guarded by Hub.mu.
type worldAlias struct {
	id       int
	uniqueID string
	name     string
}

// worldLocked is page load c's world name, made on first use.
func (h *Hub) worldLocked(c *clientContext, name string) *worldAlias {
	if a := c.worlds[name]; a != nil {
		return a
	}
	if c.worlds == nil {
		c.worlds = map[string]*worldAlias{}
	}
	h.nextCtx--
	a := &worldAlias{id: h.nextCtx, uniqueID: c.uniqueID + "/" + strconv.Itoa(len(c.worlds)+1), name: name}
	c.worlds[name] = a
	_ = h.registry.BindContext(c.realm, a.id, a.uniqueID)
	return a
}

// worldCreated is a named world's Runtime.executionContextCreated.
func (h *Hub) worldCreated(c *clientContext, a *worldAlias) []byte {
	d := c.description()
	d.ID, d.UniqueID, d.Name, d.Isolated = a.id, a.uniqueID, a.name, true
	return cdpproject.ExecutionContextCreated(d)
}

// worldsCreatedLocked announces to a page target's window the worlds it
// asked for in page load c.
func (h *Hub) worldsCreatedLocked(ss *sessionState, c *clientContext) [][]byte {
	var out [][]byte
	for _, name := range ss.worlds {
		out = append(out, h.worldCreated(c, h.worldLocked(c, name)))
	}
	return out
}

// worldsDestroyedLocked ends load c's named worlds in the windows that
// were shown them (Hub.destroyLocked).
func (h *Hub) worldsDestroyedLocked(c *clientContext) {
	for _, a := range c.worlds {
		h.registry.UnbindContext(a.id, a.uniqueID)
		msg := cdpproject.ExecutionContextDestroyed(a.id, a.uniqueID)
		for _, w := range h.sessionsLocked() {
			if w.client.runtimeEnabled && w.client.target == c.frame.sourceID && slices.Contains(w.client.worlds, a.name) {
				h.queueLocked(w, msg)
			}
		}
	}
}

// addWorldLocked notes that w wants the world name in its page's loads.
func addWorldLocked(w *Window, name string) bool {
	if slices.Contains(w.client.worlds, name) {
		return false
	}
	w.client.worlds = append(w.client.worlds, name)
	return true
}

// CreateIsolatedWorld answers Page.createIsolatedWorld on a page target:
// the page's own world under the name (see above), announced before the
// answer when the window has Runtime enabled, and in each later load.
func (h *Hub) CreateIsolatedWorld(w *Window, req Request) {
	var p struct {
		FrameID   string `json:"frameId"`
		WorldName string `json:"worldName"`
	}
	_ = json.Unmarshal(req.Params, &p)
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.frames[w.client.target]
	switch {
	case f == nil || f.id != p.FrameID:
		w.refuse(req, &wireError{codeServerError, "Page.createIsolatedWorld: no frame " + strconv.Quote(p.FrameID) + " in this page target"})
		return
	case f.ctx == nil:
		w.refuse(req, &wireError{codeServerError, "Page.createIsolatedWorld: the page is between loads; retry once it is back"})
		return
	}
	added := addWorldLocked(w, p.WorldName)
	a := h.worldLocked(f.ctx, p.WorldName)
	if added && w.client.runtimeEnabled {
		h.queueLocked(w, h.worldCreated(f.ctx, a))
	}
	w.enqueue(appendResult(nil, req.ID, []byte(`{"executionContextId":`+strconv.Itoa(a.id)+`}`)))
}
