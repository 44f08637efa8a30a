package main

import (
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// stuckRuns is how many times TestRunExitFromEvaluate repeats the exit: Node
// hangs in about one run of three to ten, so one run proves nothing.
const stuckRuns = 50

// stuckBound is the acceptance bound on the time from the evaluation that
// calls process.exit to the worker's own exit: stuckHostGrace plus the
// kill. It is a hang bound (a stuck host spins forever), not a speed check.
const stuckBound = 3 * time.Second

// A host that calls process.exit(3) inside a Runtime.evaluate from a
// session that never enabled Runtime sometimes spins forever in Node's
// teardown after its sessions close (a Node bug). The worker ends it and
// exits with the code the host asked for.
func TestRunExitFromEvaluate(t *testing.T) {
	dir, script := writeScript(t, "console.log('pid ' + process.pid); setInterval(() => {}, 1000);")
	var worst time.Duration
	ended := 0
	for i := range stuckRuns {
		w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
		pid := w.nodePID()
		c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
		start := time.Now()
		c.Send("Runtime.evaluate", map[string]any{"expression": "process.exit(3)"})
		var code int
		select {
		case <-w.done:
			code = w.code
		case <-time.After(stuckBound):
			t.Fatalf("run %d: the worker was still up %v after process.exit(3) (window: %v)\nstderr:\n%s", i, stuckBound, c.ExpectClosed(), w.stderr)
		}
		took := time.Since(start)
		worst = max(worst, took)
		if code != 3 {
			t.Fatalf("run %d: exit code %d, want 3\nstderr:\n%s", i, code, w.stderr)
		}
		if strings.Contains(w.stderr.String(), "did not exit") {
			ended++
		}
		proctest.AssertGone(t, pid)
		c.Conn().CloseNow()
	}
	t.Logf("%d runs: all exited 3; slowest %v; %d stuck hosts ended by the worker", stuckRuns, worst.Round(time.Millisecond), ended)
}

// A host that forks children (cluster, worker pools) must not hang: the
// children would inherit the worker's --inspect-wait through
// process.execArgv and wait for a debugger forever. They run free.
func TestRunHostForkDoesNotHang(t *testing.T) {
	dir, script := writeScript(t, `
const { fork } = require('child_process');
if (process.argv[2] === 'child') {
  console.log('child ran with execArgv ' + JSON.stringify(process.execArgv.filter((a) => a.startsWith('--inspect'))));
  process.exit(0);
}
console.log('pid ' + process.pid);
fork(__filename, ['child']).on('exit', (code) => { console.log('child exited ' + code); process.exitCode = 4; });
`)
	w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
	pid := w.nodePID()
	if got := w.wait(); got != 4 {
		t.Fatalf("exit code %d, want the host's 4", got)
	}
	if out := w.stdout.String(); !strings.Contains(out, "child ran with execArgv []") || !strings.Contains(out, "child exited 0") {
		t.Fatalf("the child did not run free; stdout:\n%s", out)
	}
	proctest.AssertGone(t, pid)
}
