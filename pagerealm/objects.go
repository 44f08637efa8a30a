package pagerealm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Page objects live as long as their window wants them: the window's object
// table (object.Table) holds its objectIds, and every way a window lets go
// of them tells the pages to free the handles behind them:
//
//   - Runtime.releaseObject / releaseObjectGroup → the same in the pages
//     holding them (releaseObjectGroup per page and group);
//   - Runtime.discardConsoleEntries → console.discard and the console group;
//   - Runtime.disable and closing the window → console.disable, and every
//     handle the window held is released in its page;
//   - a page that closes or reloads takes its handles with it: they are
//     dropped from every table (Hub.destroyLocked).

// consoleEnableLocked runs when a page has its welcome: the windows with
// Runtime enabled want console objects from its context c, and every window
// on its list is told (console.enable). Before that a page drops the
// worker's frames, so none was queued (addConsoleSessionLocked).
func (h *Hub) consoleEnableLocked(c *clientContext) {
	if !c.caps.Has(sourceproto.CapConsole) {
		return
	}
	for _, s := range h.sessionsLocked() {
		if w := wireSession(s); s.client.runtimeEnabled && s.client.sees(c.frame) && !slices.Contains(c.consoleSessions, w) {
			c.consoleSessions = append(c.consoleSessions, w)
		}
	}
	for _, w := range c.consoleSessions {
		h.controlLocked(c, &sourceproto.ConsoleEnable{Session: w})
	}
}

// addConsoleSessionLocked puts a window on a page's console list and tells
// the page, once it has its welcome.
func (h *Hub) addConsoleSessionLocked(c *clientContext, wire string) {
	if !c.caps.Has(sourceproto.CapConsole) || slices.Contains(c.consoleSessions, wire) {
		return
	}
	c.consoleSessions = append(c.consoleSessions, wire)
	if c.welcomed {
		h.controlLocked(c, &sourceproto.ConsoleEnable{Session: wire})
	}
}

// consoleOffLocked stops every page's console events for a window.
func (h *Hub) consoleOffLocked(wire string) {
	for _, f := range h.frames {
		c := f.ctx
		if c == nil {
			continue
		}
		if i := slices.Index(c.consoleSessions, wire); i >= 0 {
			c.consoleSessions = slices.Delete(c.consoleSessions, i, i+1)
			if c.welcomed {
				h.controlLocked(c, &sourceproto.ConsoleDisable{Session: wire})
			}
		}
	}
}

// SessionClosed forgets a window that closed: its calls are withdrawn (a
// page that was sent one gets runtime.cancel), their console events stop,
// and every page handle it held is released. All of it goes through the
// pages' flows, in that order.
func (h *Hub) SessionClosed(s *Window) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, call := range h.calls {
		if call.sess != s || call.reqID == nil {
			continue
		}
		if _, wasSent := h.forgetCallLocked(id); wasSent {
			h.controlLocked(call.ctx, &sourceproto.RuntimeCancel{Session: call.wire, ID: id, Method: call.method})
		}
	}
	h.consoleOffLocked(wireSession(s))
	h.targetWindowClosedLocked(s) // pagetarget.go
	h.dropDocumentLocked(s)       // the pages forget the window's nodes
	s.client.replay = nil         // stops its pump
	h.releaseEntriesLocked(s, s.objects.Drain())
}

// RuntimeDisabled runs on the host's answer to Runtime.disable: as V8 does
// for its own objects, the window's page objects are released. A replay in
// progress stops; what it held goes ahead of the answer.
func (h *Hub) RuntimeDisabled(s *Window) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.endReplayLocked(s)
	s.client.runtimeEnabled = false
	h.consoleOffLocked(wireSession(s))
	h.releaseEntriesLocked(s, s.objects.Drain())
}

// ReleaseObjectGroup releases a window's page objects of a group in their
// pages before Runtime.releaseObjectGroup goes to the host (the method
// table's before hook).
func (h *Hub) ReleaseObjectGroup(s *Window, req Request) {
	var p struct {
		ObjectGroup string `json:"objectGroup"`
	}
	if len(req.Params) == 0 || json.Unmarshal(req.Params, &p) != nil || p.ObjectGroup == "" {
		return // the host answers the malformed request
	}
	h.releaseGroup(s, p.ObjectGroup)
}

func (h *Hub) releaseGroup(s *Window, group string) {
	handles := s.objects.ReleaseGroup(group)
	if len(handles) == 0 {
		return
	}
	entries := make([]object.Entry, len(handles))
	for i, hd := range handles {
		entries[i] = object.Entry{Handle: hd, Group: group}
	}
	h.mu.Lock()
	h.releaseEntriesLocked(s, entries)
	h.mu.Unlock()
}

// releaseEntriesLocked queues the commands that free entries in their
// pages: one releaseObjectGroup per page and group, one releaseObject per
// handle outside any group. Pages that are gone hold nothing any more.
// The commands are the worker's own (no window waits for them); they go
// through each page's flow behind the commands queued before them, and
// their results are acknowledged and dropped.
func (h *Hub) releaseEntriesLocked(s *Window, entries []object.Entry) {
	if h.reg == nil {
		return
	}
	type pageGroup struct {
		ref   sourceproto.SourceRef
		group string
	}
	seen := map[pageGroup]bool{}
	for _, e := range entries {
		ref := sourceproto.SourceRef{ID: strings.TrimPrefix(e.Handle.Realm, "client:"), Gen: e.Handle.Generation, Role: sourceproto.RoleClient}
		c := h.byRef[ref]
		if c == nil || !c.caps.Has(sourceproto.CapRuntime) {
			continue
		}
		cmd := &sourceproto.RuntimeCommand{Method: sourceproto.MethodReleaseObject,
			ReleaseObject: &sourceproto.ReleaseObjectParams{Handle: e.Handle.ID}}
		size := len(e.Handle.ID) + commandOverhead
		if e.Group != "" {
			k := pageGroup{ref, e.Group}
			if seen[k] {
				continue
			}
			seen[k] = true
			cmd = &sourceproto.RuntimeCommand{Method: sourceproto.MethodReleaseObjectGroup,
				ReleaseObjectGroup: &sourceproto.ReleaseObjectGroupParams{ObjectGroup: e.Group}}
			size = len(e.Group) + commandOverhead
		}
		call := &runtimeCall{ref: ref, ctx: c, page: c.frame.displayName(), realm: e.Handle.Realm, sess: s,
			wire: wireSession(s), method: cmd.Method, cdp: "release", ctxID: c.id, size: size}
		h.registerLocked(call, cmd)
		if h.admitLocked(c, call) != nil {
			h.forgetCallLocked(cmd.ID) // dropped past pageReleaseBacklog, and logged
		}
	}
}

// discardConsoleFor is Runtime.discardConsoleEntries for one window's page
// objects: the pages release its console group and keep emitting.
func (h *Hub) discardConsoleFor(s *Window) {
	wire := wireSession(s)
	h.mu.Lock()
	for _, f := range h.frames {
		if c := f.ctx; c != nil && c.welcomed && slices.Contains(c.consoleSessions, wire) {
			h.controlLocked(c, &sourceproto.ConsoleDiscard{Session: wire})
		}
	}
	h.mu.Unlock()
	// Console evaluations' results share the group: release it all.
	h.releaseGroup(s, consoleGroup)
}

// objectCounts is what a window's page objects cost the worker: its table's
// entries and the runtime commands in flight (tests check both return to 0).
func (h *Hub) ObjectCounts(s *Window) (objects, calls int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return s.objects.Len(), len(h.calls)
}

// objectsFullLocked is the error of a page result whose objects the
// window's table refused (object.Table.Add): it names the page that holds
// the objects and what releases them. A page's share of a window's table
// is bounded (object.MaxRealmObjects), so a page that floods a window with
// handles fills its own share, and other pages' results keep working.
func (h *Hub) objectsFullLocked(s *Window, realm, page string) error {
	fe := s.objects.Full(realm)
	switch {
	case fe == nil: // released meanwhile
		return fmt.Errorf("the window's object table was full when the page %q answered; retry", page)
	case fe.Share:
		return fmt.Errorf("the page %q holds %d objects in this window, its share (object.MaxRealmObjects); "+
			"release them (clear the Console, or reload the page) and retry", page, fe.Held)
	}
	return fmt.Errorf("this window holds %d page objects (object.MaxObjects), the most (%d) from the page %q; "+
		"clear the Console, or reload that page, and retry", fe.Total, fe.TopHeld, h.realmNameLocked(fe.Top))
}

// realmNameLocked is the name of a client realm's page, for messages.
func (h *Hub) realmNameLocked(realmID string) string {
	if f := h.frames[strings.TrimPrefix(realmID, "client:")]; f != nil {
		return f.displayName()
	}
	return realmID
}
