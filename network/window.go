package network

import (
	"context"
	"fmt"
	"sync"
	"time"

	cdplog "github.com/chromedp/cdproto/log"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/fetchcapture"
)

// Output is a window's way out: cdpserver queues on the session's writer.
type Output interface {
	// Event queues an observation. It returns false when the window has
	// fallen behind and the message was dropped (it never blocks, and never
	// closes the window): the Window counts the loss and says so.
	Event(msg []byte) bool
	// Notice queues a small message ahead of the window's backlog: the
	// news of a loss must not wait behind the messages it is about.
	Notice(msg []byte)
}

// Domain is the Network domain over one journal; one per server.
type Domain struct {
	j *fetchcapture.Journal // Static after construction; nil: nothing is captured.
	// scriptID names the script of a stack frame by its URL for the
	// Initiator column (the frontend links a frame by scriptId; without one
	// the column stays empty). Static after construction; nil: none.
	scriptID ScriptIDFunc
	// subscriberQueue bounds a window's journal subscription; Static.
	subscriberQueue int
}

// ScriptIDFunc returns the scriptId the windows know for url in the realm
// that made r, or "".
type ScriptIDFunc func(r *fetchcapture.Request, url string) string

// New returns the domain over j (nil: every window sees an empty log);
// scriptID may be nil.
func New(j *fetchcapture.Journal, scriptID ScriptIDFunc) *Domain {
	return &Domain{j: j, scriptID: scriptID}
}

// Journal is the journal the domain reads (nil when none).
func (d *Domain) Journal() *fetchcapture.Journal { return d.j }

// maxWarned bounds the set of requests a window was warned about (truncated
// bodies); past it the set starts over, so a body may be warned about twice.
const maxWarned = 65536

// Window is one DevTools window's Network state.
//
// Goroutines: the window's drain loop (from Enable until Disable/Close)
// takes journal steps and queues their events. Enable, Disable, Close and
// the body methods run on the session's dispatcher.
type Window struct {
	d   *Domain // Static after construction.
	out Output  // Static after construction.
	// keep says which requests the window is shown; nil: all of them.
	// Static after construction (NewWindowOf).
	keep func(*fetchcapture.Request) bool

	mu      sync.Mutex                 // Lock order: see docs/locks.md.
	enabled bool                       // Guarded by mu.
	sub     *fetchcapture.Subscription // Guarded by mu.
	stop    context.CancelFunc         // Guarded by mu.
	done    chan struct{}              // Guarded by mu: closed when the drain loop returned.
	warned  map[string]struct{}        // Guarded by mu: request ids warned about truncation.
	closed  bool                       // Guarded by mu.
}

// NewWindow returns a window with Network disabled.
func (d *Domain) NewWindow(out Output) *Window {
	return &Window{d: d, out: out, warned: map[string]struct{}{}}
}

// NewWindowOf returns a window shown only the requests keep accepts (a
// page target's window: its page's). The journal's notices, which are
// about other sources, are not shown to it.
func (d *Domain) NewWindowOf(out Output, keep func(*fetchcapture.Request) bool) *Window {
	w := d.NewWindow(out)
	w.keep = keep
	return w
}

// Enable replays the journal to the window and starts its live stream.
// The snapshot and the subscription are taken together under the journal's
// lock (fetchcapture.Subscribe), and the replay is queued before the drain
// loop starts, so each step reaches the window once, in order: live steps
// wait in the subscription meanwhile. The replay is projected and queued
// after w.mu is released (projecting a page's step takes the client hub's
// lock, through ScriptIDFunc): w.mu only guards the window's state. A
// Disable meanwhile waits for the replay (the loop's done). A second
// Enable while enabled does nothing (Chrome's behaviour).
func (w *Window) Enable() {
	w.mu.Lock()
	if w.enabled || w.closed {
		w.mu.Unlock()
		return
	}
	w.enabled = true
	if w.d.j == nil {
		w.mu.Unlock()
		return
	}
	snap, sub := w.d.j.Subscribe(w.d.subscriberQueue)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	w.sub, w.stop, w.done = sub, cancel, done
	w.mu.Unlock()
	d := &drain{w: w, states: map[string]*entryState{}}
	for i := range snap {
		if ctx.Err() != nil {
			break // disabled or closed meanwhile: the rest would be dropped
		}
		for k := range snap[i].Steps {
			d.step(&snap[i].Steps[k])
		}
	}
	d.flushLosses()
	go d.loop(ctx, sub, done)
}

// Disable stops the stream; a later Enable replays the journal again.
func (w *Window) Disable() {
	w.mu.Lock()
	sub, stop, done := w.sub, w.stop, w.done
	w.enabled, w.sub, w.stop, w.done = false, nil, nil, nil
	w.mu.Unlock()
	if sub != nil {
		sub.Close()
		stop()
		<-done
	}
}

// Close is Disable for a window that is gone; later calls do nothing.
func (w *Window) Close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.Disable()
}

// drain converts steps for one window: owned by Enable's replay, then by
// the loop goroutine (never both at once).
type drain struct {
	w       *Window
	states  map[string]*entryState // per request id: current URL, start
	dropped int                    // events the window did not take, not announced yet
}

func (d *drain) step(s *fetchcapture.Step) {
	if k := d.w.keep; k != nil && (s.Request == nil || !k(s.Request)) {
		return
	}
	if s.Kind == fetchcapture.StepNotice {
		// The journal dropped a source's requests for another's: said
		// once per source, in the window's Console.
		if !d.w.out.Event(logEntry("warning", s.Notice)) {
			d.dropped++
		}
		return
	}
	st := d.states[s.RequestID]
	if st == nil {
		st = &entryState{}
		d.states[s.RequestID] = st
	}
	for _, m := range messages(s, st, d.w.d.scriptID) {
		if !d.w.out.Event(m) {
			d.dropped++
		}
	}
	if s.Kind == fetchcapture.StepFinished || s.Kind == fetchcapture.StepFailed {
		delete(d.states, s.RequestID)
	}
}

func (d *drain) flushLosses() {
	if d.dropped > 0 {
		d.w.out.Notice(lossWarning(d.dropped))
		d.dropped = 0
	}
}

func (d *drain) loop(ctx context.Context, sub *fetchcapture.Subscription, done chan struct{}) {
	defer close(done)
	var buf []fetchcapture.Step
	for {
		steps, lost, err := sub.Next(ctx, buf[:0])
		if err != nil {
			return // closed (Disable) or ctx (Disable)
		}
		d.dropped += lost
		for i := range steps {
			d.step(&steps[i])
		}
		clear(steps) // the steps' pointers are the journal's; do not keep them alive
		buf = steps
		d.flushLosses()
		if len(d.states) > 4*fetchcapture.DefaultMaxEntries+len(steps) {
			// Entries whose end the window never saw (it lost them) would
			// otherwise stay here for the window's lifetime.
			d.states = map[string]*entryState{}
		}
	}
}

func lossWarning(n int) []byte {
	return logEntry("warning", fmt.Sprintf("[inspector-worker] %d Network events were dropped for this window: it fell behind "+
		"the captured traffic (requests may show without their response or end; the journal still has them: "+
		"disable and enable recording to see it again)", n))
}

// logEntry is a Log.entryAdded message for the window's Console.
func logEntry(level cdplog.EntryLevel, text string) []byte {
	return cdpproject.LogEntry(cdpproject.SourceNetwork, level, text, cdpproject.Millis(time.Now()))
}
