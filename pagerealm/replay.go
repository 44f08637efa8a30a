package pagerealm

import (
	"fmt"
	"time"
)

// The replay: what a window that enables Runtime gets of the client pages'
// past (their execution contexts, their kept console messages, the host's
// observations), and how it is kept.
//
// Kept once, shared: a console event is encoded once, and the same bytes
// go to the replay buffer and to every window's queue, and from the buffer
// into every later window's queue. Nothing that queues or writes a message
// may modify it in place (sendLoop writes it as it is; rewrites make new
// slices). A buffer keeps the last maxReplayPerContext messages and at most
// maxReplayBytes of them: 20 pages are then 20 MiB at most, however many
// windows replay them.
//
// After the answer, in chunks: the replay goes after the Runtime.enable
// answer (an after hook, methods.go), in chunks of replayChunk messages,
// each queued when the window has written all but the last one. Queued
// ahead of the answer, 20 pages × 1,000 messages kept the answer 5–6 s
// from 8 windows opening at once (docs/performance.md, MemReplay), and a window's whole
// replay sat in its queue at once. Order: execution contexts first, then
// the host's observations, then each page's messages.
//
// Order with live events: from the answer on, the window is enabled, and
// what the hub would queue for it while its replay runs is held behind the
// replay (windowReplay.held), so the window sees each event once and after
// the history it follows (a context's destruction after its creation and
// messages). Held observations (console, app) are bounded by
// maxHeldObservations; past it they are dropped and counted, and the count
// is announced after the replay, as for a window that falls behind
// (observeLocked). Held structural events (frames attached and detached,
// contexts) are never dropped: they are bounded by the pages' lifecycle,
// not their output, and the window's picture would be wrong without them.
// What follows a page's output but is state (its title and URL, its
// scripts, loss reports) is owed instead and queued after the replay
// (owed.go).
//
// A replay overtaken by Runtime.disable (or the window's close) stops: on
// Runtime.disable what it held is queued at once, ahead of the answer; a
// later Runtime.enable starts a new replay.

const (
	// maxReplayBytes bounds the bytes of each replay buffer (a page's
	// console messages, the host's observations) besides its count: 1,000
	// messages of 64 KiB objects would otherwise keep 64 MiB per page.
	maxReplayBytes = 1 << 20
	// replayChunk is how many replayed messages are queued at once: enough
	// to keep the window's socket busy, few enough that the queue never
	// holds a whole replay.
	replayChunk = 256
	// maxHeldObservations bounds the live console and app messages held
	// behind a replay (~1 s of a fast page flood).
	maxHeldObservations = 10_000
	// replayPoll is how often a replay looks whether the window has
	// written its previous chunk (the queue has no wake-up for writes, and
	// its owner, session.go, is kept lean). The wait doubles up to
	// maxReplayPoll while a window writes nothing: a stuck window costs a
	// few wake-ups a second until its close, not a thousand.
	replayPoll    = time.Millisecond
	maxReplayPoll = 64 * time.Millisecond
)

// replayBuffer is the newest messages of one producer, oldest first.
// Guarded by Hub.mu. Its slice is shared with replays in progress
// (windowReplay.parts): elements are never modified, only appended, and
// the prefix of evicted ones is dropped by copying into a new array.
type replayBuffer struct {
	msgs    [][]byte
	bytes   int
	dropped int // messages evicted, announced at the start of a replay
	evicted int // evicted since the last copy: the dead prefix of the array
}

func (b *replayBuffer) keep(msg []byte) {
	b.msgs = append(b.msgs, msg)
	b.bytes += len(msg)
	for len(b.msgs) > 1 && (len(b.msgs) > maxReplayPerContext || b.bytes > maxReplayBytes) {
		b.bytes -= len(b.msgs[0])
		b.msgs = b.msgs[1:]
		b.dropped++
		b.evicted++
	}
	if b.evicted > len(b.msgs) {
		// A new array, not a copy in place: a replay may be reading this one.
		b.msgs = append(make([][]byte, 0, len(b.msgs)+len(b.msgs)/4), b.msgs...)
		b.evicted = 0
	}
}

// windowReplay is one window's replay in progress. Guarded by Hub.mu.
type windowReplay struct {
	parts   [][][]byte // what is left to queue, in order; shared, never modified
	held    [][]byte   // live messages for the window, queued after the replay
	heldObs int        // observations among held
}

func (r *windowReplay) add(part [][]byte) {
	if len(part) > 0 {
		r.parts = append(r.parts, part)
	}
}

// next returns up to n messages to queue, in order.
func (r *windowReplay) next(n int) [][]byte {
	var out [][]byte
	for len(r.parts) > 0 && len(out) < n {
		p := r.parts[0]
		k := min(len(p), n-len(out))
		out = append(out, p[:k]...)
		if k == len(p) {
			r.parts = r.parts[1:]
		} else {
			r.parts[0] = p[k:]
		}
	}
	return out
}

// runtimeEnabled runs once a window's Runtime.enable answer is queued: the
// window takes client events from now on, and its replay starts.
//
// The replay carries previews only, never objectIds: the pages' handles
// belong to the window that was enabled when the call happened (one event
// per call per window), so a later window cannot expand a replayed object.
// From its Runtime.enable on, the pages send it its own events, with
// handles (console.enable).
func (h *Hub) RuntimeEnabled(s *Window) {
	h.mu.Lock()
	if s.client.runtimeEnabled {
		h.mu.Unlock()
		return
	}
	s.client.runtimeEnabled = true
	for _, id := range h.order {
		if c := h.frames[id].ctx; c != nil && s.client.sees(c.frame) {
			h.addConsoleSessionLocked(c, wireSession(s))
		}
	}
	r := h.snapshotLocked(&s.client)
	s.client.replay = r
	h.mu.Unlock()
	go h.pump(s, r)
}

// snapshotLocked is the replay of the hub's current state, as the window
// ss sees it (a page target's window: its page alone, no host).
func (h *Hub) snapshotLocked(ss *sessionState) *windowReplay {
	r := &windowReplay{}
	var created [][]byte
	for _, id := range h.order {
		if c := h.frames[id].ctx; c != nil && ss.sees(c.frame) {
			created = append(created, h.contextCreated(c))
			created = append(created, h.worldsCreatedLocked(ss, c)...) // a page target's named worlds
		}
	}
	r.add(created)
	if ss.target == "" && h.app.dropped > 0 {
		r.add([][]byte{logEntry("warning", fmt.Sprintf("[inspector-worker] %d older host observations are not replayed (the replay keeps the last %d, at most %d KiB)",
			h.app.dropped, maxReplayPerContext, maxReplayBytes>>10), time.Now())})
	}
	if ss.target == "" {
		r.add(h.app.msgs)
	}
	for _, id := range h.order {
		c := h.frames[id].ctx
		if c == nil || !ss.sees(c.frame) {
			continue
		}
		if c.console.dropped > 0 {
			r.add([][]byte{logEntry("warning", fmt.Sprintf("[inspector-worker] %d older console messages of %s are not replayed (the replay keeps the last %d, at most %d KiB)",
				c.console.dropped, c.frame.displayName(), maxReplayPerContext, maxReplayBytes>>10), time.Now())})
		}
		r.add(c.console.msgs)
	}
	return r
}

// pump queues r to s chunk by chunk until it is done, overtaken or the
// window is gone.
func (h *Hub) pump(s *Window, r *windowReplay) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	target := int64(-1)
	for {
		poll, seen := replayPoll, int64(-1)
		for target >= 0 {
			written := s.sink.Written()
			if written >= target {
				break
			}
			if written == seen {
				poll = min(2*poll, maxReplayPoll)
			} else {
				poll, seen = replayPoll, written
			}
			timer.Reset(poll)
			select {
			case <-s.done:
				return
			case <-timer.C:
			}
		}
		h.mu.Lock()
		if s.client.replay != r {
			h.mu.Unlock()
			return
		}
		// Wait next for what is queued now, before this chunk: one chunk
		// stays queued while the window writes the one before it.
		target = s.sink.Pushed()
		for _, m := range r.next(replayChunk) {
			s.enqueue(m)
		}
		if len(r.parts) == 0 {
			h.endReplayLocked(s)
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
	}
}

// endReplayLocked ends the window's replay, if one runs: what it held is
// queued, then the count of observations dropped meanwhile.
func (h *Hub) endReplayLocked(s *Window) {
	r := s.client.replay
	if r == nil {
		return
	}
	s.client.replay = nil
	for _, m := range r.held {
		s.enqueue(m)
	}
	if s.client.dropped > 0 {
		s.enqueue(droppedWarning(s.client.dropped))
		s.client.dropped = 0
	}
	h.settleLocked(s)
}

// queueLocked queues a message the hub builds for one window (not an
// answer): behind the window's replay while one runs.
func (h *Hub) queueLocked(s *Window, msg []byte) {
	if r := s.client.replay; r != nil {
		r.held = append(r.held, msg)
		return
	}
	s.enqueue(msg)
}

// holdLocked holds an observation behind the window's replay; it reports
// false (the observation is dropped and counted) past maxHeldObservations.
func (r *windowReplay) holdLocked(s *Window, msg []byte) bool {
	if r.heldObs >= maxHeldObservations {
		s.client.dropped++
		return false
	}
	r.heldObs++
	r.held = append(r.held, msg)
	return true
}
