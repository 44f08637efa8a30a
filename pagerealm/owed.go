package pagerealm

import (
	"fmt"
	"slices"
	"time"
)

// The loss policy for what pages send besides console messages: page
// state (title and URL: Page.frameNavigated), their scripts
// (Debugger.scriptParsed) and their loss reports (a Console warning).
// Like console messages, these follow a page's output, not a window's
// requests, so a window that falls behind a page's flood must not be
// closed for it; unlike console messages, they are state, so they are
// not dropped but owed: above half the window's queue (the point where
// console messages are dropped, sendQueue.pushLossy) the window is owed
// them, coalesced, and they are queued when it has room again.
//
//   - page state: only the latest counts, so a window is owed each frame
//     at most once, and gets its state as it is when queued;
//   - scripts: owed in order, each once; a page's scripts are bounded
//     (scriptstore.go), so what a window is owed is too;
//   - loss reports: counts, added up per producer.
//
// Owed state is queued before the window's next observation (so it is not
// overtaken by what follows it), when its replay ends, or by the hub's
// loss timer (lossReportDelay), which keeps looking while a window is owed
// anything. Before, a 2 s title flood closed (1008) a window that paused
// reading for 2 s, while the same window survived a 15 s console flood.
//
// Structural events (frames attached and detached, contexts created and
// destroyed, the reload divider) stay on the strict path: they follow the
// pages' connections, not their output, and the window's picture is wrong
// without them.

// owedState is what a window is owed. Guarded by Hub.mu.
type owedState struct {
	frames  []*clientFrame  // frames whose current state the window has not been sent
	scripts []*clientScript // scripts not announced to the window yet, in order
	gaps    []owedGap       // loss reports not sent yet, by producer
}

// owedGap is the unsent loss reports of one producer.
type owedGap struct {
	source           string // the page's source id; "" for the host
	count, explained uint64
}

func (o *owedState) empty() bool {
	return len(o.frames) == 0 && len(o.scripts) == 0 && len(o.gaps) == 0
}

// owePageLocked owes s the current state of frame f.
func (h *Hub) owePageLocked(s *Window, f *clientFrame) {
	if o := &s.client.owed; !slices.Contains(o.frames, f) {
		o.frames = append(o.frames, f)
	}
	h.settleLocked(s)
}

// oweScriptLocked owes s the announcement of sc.
func (h *Hub) oweScriptLocked(s *Window, sc *clientScript) {
	s.client.owed.scripts = append(s.client.owed.scripts, sc)
	h.settleLocked(s)
}

// oweGapLocked owes s a loss report of a page (source) or the host ("").
func (h *Hub) oweGapLocked(s *Window, source string, count, explained uint64) {
	o := &s.client.owed
	i := slices.IndexFunc(o.gaps, func(g owedGap) bool { return g.source == source })
	if i < 0 {
		o.gaps = append(o.gaps, owedGap{source: source})
		i = len(o.gaps) - 1
	}
	o.gaps[i].count += count
	o.gaps[i].explained += explained
	h.settleLocked(s)
}

// settleLocked queues what s is owed while its queue has room (below
// half), and arms the loss timer for the rest. A window in its replay is
// settled when the replay ends (endReplayLocked).
func (h *Hub) settleLocked(s *Window) {
	o := &s.client.owed
	if o.empty() || s.client.replay != nil {
		return
	}
	for len(o.frames) > 0 {
		f := o.frames[0]
		// A frame detached meanwhile is not brought back; one whose page
		// is between connections gets its state with its next load.
		if f.ctx != nil && h.frames[f.sourceID] == f && s.client.pageEnabled && !s.sink.PushLossy(h.frameNavigated(f, f.ctx)) {
			h.armLossTimerLocked()
			return
		}
		o.frames[0] = nil
		o.frames = o.frames[1:]
	}
	for len(o.scripts) > 0 {
		sc := o.scripts[0]
		// A script of a page load that ended is not announced.
		if h.scripts[sc.id] == sc && s.client.debuggerEnabled && !s.sink.PushLossy(h.scriptParsed(sc)) {
			h.armLossTimerLocked()
			return
		}
		o.scripts[0] = nil
		o.scripts = o.scripts[1:]
	}
	for len(o.gaps) > 0 {
		if !s.sink.PushLossy(h.gapWarning(o.gaps[0])) {
			h.armLossTimerLocked()
			return
		}
		o.gaps = o.gaps[1:]
	}
	*o = owedState{} // let go of the emptied arrays
}

// gapWarning names the producer as it is called now (a page's title
// changes; its source id does not).
func (h *Hub) gapWarning(g owedGap) []byte {
	from := "the host"
	if g.source != "" {
		from = "client " + g.source
		if f := h.frames[g.source]; f != nil {
			from = f.displayName()
		}
	}
	text := fmt.Sprintf("[inspector-worker] %d observations from %s were lost", g.count, from)
	if g.explained == g.count {
		text += " (the page's queue overflowed)"
	}
	return logEntry("warning", text, time.Now())
}

// armLossTimerLocked makes sure reportLosses runs within lossReportDelay.
func (h *Hub) armLossTimerLocked() {
	if h.lossTimer == nil {
		h.lossTimer = time.AfterFunc(lossReportDelay, h.reportLosses)
	}
}
