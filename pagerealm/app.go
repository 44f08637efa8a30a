package pagerealm

import (
	"time"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Host observations: inspectorWorker.observe(name, data) in the host (the
// run preload, or embed.mjs) sends an "app" item over the host channel. The
// hub shows each one in every window's Console as a Log.entryAdded info line
//
//	observe("ready") {"pid":4242}
//
// and keeps the last maxReplayPerContext of them (at most maxReplayBytes) for
// windows that enable Runtime later, like a page's console messages.
//
// Why Log.entryAdded: the worker has no host execution context of its own to
// name (context ids belong to each window's Node session) and no object ids
// to hand out for the data, which is plain JSON anyway; a log entry needs
// neither and the frontend shows it with its timestamp in the Console.
// Rejected: Runtime.consoleAPICalled with a made-up context id (the
// frontend would file it under no context, or under a wrong one).

// hostItemsLocked projects the host channel's items; only "app" items have
// a projection (the host's console and scripts reach DevTools through Node's
// inspector, not this channel).
func (h *Hub) hostItemsLocked(items []sourceproto.Item) {
	for i := range items {
		if ev := items[i].App; ev != nil {
			h.appLocked(ev)
		}
	}
}

func (h *Hub) appLocked(ev *sourceproto.AppEvent) {
	msg := appEntry(ev)
	h.app.keep(msg)
	for _, s := range h.sessionsLocked() {
		if s.client.runtimeEnabled && s.client.target == "" { // a page target does not see the host
			h.observeLocked(s, msg)
		}
	}
}

// appEntry renders one observation.
func appEntry(ev *sourceproto.AppEvent) []byte { return cdpproject.AppObservation(ev, time.Now()) }
