package cdpserver

import (
	"testing"
)

// finishScript pauses at a debugger statement that is the last thing the
// script does: resuming lets it end at once.
const finishScript = `
const timer = setInterval(() => {}, 1 << 30);
globalThis.finishSoon = () => { setTimeout(() => { clearInterval(timer); debugger; }, 0); return 'armed'; };
process.stdout.write('host ready\n');
`

// Resuming a host whose script then finishes gets Node's own answer, not
// "not answered: the host exited": the answer Node sent before the script
// ended must reach the window before its Node session is closed. Repeated,
// because the race is between the window's hostLoop and the watcher's
// waitingForDisconnect (lost in about 1 run of 5 under -race before).
func TestResumeIntoFinishIsAnswered(t *testing.T) {
	const runs = 10
	for i := range runs {
		w := startWorker(t, finishScript, Options{Logf: func(string, ...any) {}})
		c := w.dial("A")
		c.MustCall("Debugger.enable", nil)
		c.MustCall("Runtime.evaluate", map[string]any{"expression": "finishSoon()"})
		c.ExpectEvent("Debugger.paused", nil)
		if m := c.Call("Debugger.resume", nil); m.Error != nil {
			t.Fatalf("run %d: Debugger.resume answered %d %q, want Node's answer", i, m.Error.Code, m.Error.Message)
		}
		c.ExpectClosed()
	}
}
