package cdpserver

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// resumeFloodBound: Debugger.resume is answered by Node in milliseconds;
// under -race on a loaded machine the slowest of 5 took up to 0.95 s (20
// runs: 63–945 ms); the bound leaves room for that, not for waiting on the
// page's flood.
const resumeFloodBound = 5 * time.Second

// TestDebuggerResumeUnderPageFlood: with the host paused, a page streams
// console events to the window as fast as the worker takes them; each
// Debugger.resume (and the pause that follows) is answered promptly.
// Debugger methods that name no client script are the host's and do not
// wait for the hub's lock, which the page's ingest takes per frame.
func TestDebuggerResumeUnderPageFlood(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{})
	ag := openAgent(t, reg, token, "page-1", "Shop")
	a := w.dial("A")
	a.SetTimeout(time.Minute) // hang bound under -race
	_, wire := windowOn(t, a, ag, "Shop")
	a.MustCall("Debugger.enable", nil)

	const batch = 100
	var stop atomic.Bool
	flooded := make(chan int)
	go func() {
		frames := 0
		for !stop.Load() {
			items := make([]sourceproto.Item, batch)
			for k := range items {
				items[k] = consoleItem(&sourceproto.ConsoleEvent{Session: wire, Type: sourceproto.ConsoleLog,
					Timestamp: 1.7e12, Args: []sourceproto.RemoteObject{str("flood")}})
			}
			ag.pg.ingest(ag.pg.p.Append(t, items...))
			frames++
		}
		flooded <- frames
	}()
	var worst time.Duration
	const rounds = 5
	for range rounds {
		a.MustCall("Runtime.evaluate", map[string]any{"expression": "pauseSoon()"})
		a.ExpectEvent("Debugger.paused", nil)
		start := time.Now()
		a.MustCall("Debugger.resume", nil)
		worst = max(worst, time.Since(start))
		a.ExpectEvent("Debugger.resumed", nil)
	}
	stop.Store(true)
	frames := <-flooded
	t.Logf("slowest of %d Debugger.resume answers: %v, while a page sent %d frames of %d console events",
		rounds, worst, frames, batch)
	if worst > resumeFloodBound {
		t.Errorf("Debugger.resume took %v under a page flood (bound %v)", worst, resumeFloodBound)
	}
	if frames == 0 {
		t.Errorf("the page sent nothing during the test")
	}
}
