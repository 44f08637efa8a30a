package main

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// realmsTreeScript is a host with two worker threads, a fork()ed child
// that ignores SIGTERM and a spawn()ed node child. It prints "pid N" and
// "REALMS fork spawn", then "THREADS up" once both threads run. On SIGUSR2
// it crashes with an uncaught exception; on SIGHUP it exits with code 0
// (not SIGUSR1: that opens Node's own inspector).
const realmsTreeScript = `
const { fork, spawn } = require("child_process");
const { Worker } = require("worker_threads");
if (process.argv[2] === "child") {
  if (process.argv[3] === "fork") process.on("SIGTERM", () => {});
  setInterval(() => {}, 1 << 30);
} else {
  process.on("SIGUSR2", () => { throw new Error("the host crashes"); });
  process.on("SIGHUP", () => process.exit(0));
  console.log("pid " + process.pid);
  let started = 0;
  for (let i = 0; i < 2; i++) {
    const w = new Worker("require('worker_threads').parentPort.postMessage('up'); setInterval(() => {}, 1 << 30);", { eval: true });
    w.once("message", () => { if (++started === 2) console.log("THREADS up"); });
  }
  const forked = fork(__filename, ["child", "fork"]);
  const spawned = spawn(process.execPath, [__filename, "child", "spawn"], { stdio: "inherit" });
  console.log("REALMS " + forked.pid + " " + spawned.pid);
  setInterval(() => {}, 1 << 30);
}
`

// realmsRuns is how many runs in a row must leave nothing behind.
const realmsRuns = 10

// realmsEndings are the ways a run ends, taken in turn by the runs.
var realmsEndings = []struct {
	name string
	end  func(w *workerProc, node int)
	code int // the worker's exit code; -1 = killed
}{
	{"Ctrl-C: SIGINT to the worker", func(w *workerProc, _ int) { _ = w.cmd.Process.Signal(syscall.SIGINT) }, 128 + 2},
	{"worker SIGKILLed", func(w *workerProc, _ int) { _ = w.cmd.Process.Signal(syscall.SIGKILL) }, -1},
	{"host crash: uncaught exception", func(_ *workerProc, node int) { _ = syscall.Kill(node, syscall.SIGUSR2) }, 1},
	{"host exits", func(_ *workerProc, node int) { _ = syscall.Kill(node, syscall.SIGHUP) }, 0},
}

// Ten runs in a row of a host with worker threads and Node children, all
// alive and attached to a window that asked them to wait at start (so the
// worker keeps its wait file beside the preload), each ended by Ctrl-C,
// SIGKILL of the worker, a host crash or a normal exit in turn: after each
// no process of the host, its children or the reaper is left, and the
// worker's TMPDIR is empty.
func TestRunRealmsLeaveNoProcessNorTempFile(t *testing.T) {
	tmp := t.TempDir()
	dir, script := writeScript(t, realmsTreeScript)
	took := map[string]time.Duration{}
	for i := range realmsRuns {
		tc := realmsEndings[i%len(realmsEndings)]
		t.Run(fmt.Sprintf("run %d: %s", i+1, tc.name), func(t *testing.T) {
			w := startCmdEnv(t, dir, []string{"TMPDIR=" + tmp, "INSPECTOR_WORKER_DEBUG=1"}, "run", "--port", "0", "--", "node", script)
			node := w.nodePID()
			var children []int
			for _, f := range strings.Fields(w.waitFor(w.stdout, `REALMS (\d+ \d+)`)) {
				pid, _ := strconv.Atoi(f)
				children = append(children, pid)
			}
			t.Cleanup(func() {
				for _, pid := range children {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					proctest.AssertGone(t, pid)
				}
			})
			w.waitFor(w.stdout, `THREADS up`)
			for _, pid := range children {
				w.waitFor(w.stderr, `following child .*\(pid `+strconv.Itoa(pid)+`\)`)
			}
			c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
			c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
			threads := 0
			for range 4 { // two threads, two children
				if a := c.ExpectAttached(); !strings.Contains(a.TargetInfo.Title, "(pid ") {
					threads++
				}
			}
			if threads != 2 {
				t.Fatalf("%d threads attached, want 2", threads)
			}
			if files := tempFiles(t, tmp); len(files) != 2 {
				t.Fatalf("TMPDIR holds %v, want the preload and the children's wait file", files)
			}
			reaper := reaperOf(t, w.cmd.Process.Pid, node)

			event := time.Now()
			tc.end(w, node)
			d := proctest.AssertGoneWithin(t, event, treeGoneWithin, node, children[0], children[1], reaper)
			took[tc.name] = max(took[tc.name], d)
			if got := w.wait(); got != tc.code {
				t.Errorf("worker exit code %d, want %d", got, tc.code)
			}
			checkNoTempFiles(t, tmp)
		})
	}
	if files := tempFiles(t, tmp); len(files) != 0 {
		t.Fatalf("%d runs left %v", realmsRuns, files)
	}
	for name, d := range took {
		t.Logf("%s: host, children and reaper gone at most %v after the event", name, d.Round(time.Millisecond))
	}
}
