package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// treeGoneWithin is the acceptance bound for "no process of the host's tree
// remains" after the event that ends the run; the kills themselves are
// immediate, 2 s leaves room for a loaded machine.
const treeGoneWithin = 2 * time.Second

// treeScript is a host that starts a child shell and, through it, a
// grandchild sleep, both ignoring SIGTERM, plus a detached sleep (setsid, the
// documented exception). It prints "pid N" and "TREE child grandchild
// detached", and exits with code 0 on SIGUSR2.
const treeScript = `
const { spawn } = require("child_process");
process.on("SIGUSR2", () => process.exit(0));
console.log("pid " + process.pid);
const detached = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
const child = spawn("/bin/sh", ["-c", 'trap "" TERM; sleep 60 & echo $!; wait'], { stdio: ["ignore", "pipe", "ignore"] });
child.stdout.once("data", d => console.log("TREE " + child.pid + " " + String(d).trim() + " " + detached.pid));
setInterval(() => {}, 1 << 30);
`

// reaperOf finds hostnode's orphan reaper among the worker's children.
func reaperOf(t *testing.T, worker, node int) int {
	t.Helper()
	for _, pid := range proctest.Children(worker) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if pid != node && strings.Contains(string(cmdline), "hostnode-reaper") {
			return pid
		}
	}
	t.Fatalf("worker %d has no orphan reaper among its children %v", worker, proctest.Children(worker))
	return 0
}

// treePIDs reads the TREE line and makes sure every pid is killed at the end
// whatever happens (a no-op for those already gone).
func treePIDs(t *testing.T, w *workerProc) (child, grandchild, detached int) {
	t.Helper()
	var pids []int
	for _, f := range strings.Fields(w.waitFor(w.stdout, `TREE (\d+ \d+ \d+)`)) {
		pid, _ := strconv.Atoi(f)
		pids = append(pids, pid)
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			proctest.AssertGone(t, pid)
		}
	})
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err != nil {
			t.Fatalf("tree process %d is not running: %v", pid, err)
		}
	}
	return pids[0], pids[1], pids[2]
}

// tempFiles lists dir, which the worker got as TMPDIR.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// checkNoTempFiles fails unless dir is empty. Call it once the worker and the
// orphan reaper are gone: one of them removed the preload before exiting.
func checkNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	if files := tempFiles(t, dir); len(files) != 0 {
		t.Errorf("temp files left in TMPDIR: %v", files)
	}
}

// No process of the host's tree survives `run`, however the run ends; the
// grandchild and child ignore SIGTERM. Only the detached (setsid) child
// lives on, as documented. The preload temp file goes too.
func TestRunLeavesNoProcess(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(w *workerProc, node int)
		code int // the worker's exit code; -1 = killed
	}{
		{"worker SIGKILLed", func(w *workerProc, _ int) { _ = w.cmd.Process.Signal(syscall.SIGKILL) }, -1},
		{"host SIGKILLed", func(_ *workerProc, node int) { _ = syscall.Kill(node, syscall.SIGKILL) }, 128 + 9},
		{"Ctrl-C: SIGINT to the worker", func(w *workerProc, _ int) { _ = w.cmd.Process.Signal(syscall.SIGINT) }, 128 + 2},
		{"host exits", func(_ *workerProc, node int) { _ = syscall.Kill(node, syscall.SIGUSR2) }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, script := writeScript(t, treeScript)
			tmp := t.TempDir()
			w := startCmdEnv(t, dir, []string{"TMPDIR=" + tmp}, "run", "--port", "0", "--", "node", script)
			node := w.nodePID()
			child, grandchild, detached := treePIDs(t, w)
			reaper := reaperOf(t, w.cmd.Process.Pid, node)
			if files := tempFiles(t, tmp); len(files) != 1 || !strings.HasPrefix(files[0], "inspector-worker-preload-") {
				t.Fatalf("TMPDIR holds %v, want the preload", files)
			}

			event := time.Now()
			tc.end(w, node)
			// Measured before the worker's own exit, which is not part of the
			// tree (and takes up to a second longer after a normal host exit:
			// the endpoint's shutdown).
			took := proctest.AssertGoneWithin(t, event, treeGoneWithin, node, child, grandchild, reaper)
			t.Logf("host, child, grandchild and reaper gone %v after the event", took.Round(time.Millisecond))
			if got := w.wait(); got != tc.code {
				t.Errorf("worker exit code %d, want %d", got, tc.code)
			}
			checkNoTempFiles(t, tmp)
			if err := syscall.Kill(detached, 0); err != nil {
				t.Errorf("the detached (setsid) child %d was killed: %v", detached, err)
			}
			_ = syscall.Kill(detached, syscall.SIGKILL)
			proctest.AssertGone(t, detached)
		})
	}
}

// SIGKILLed workers leave no preload file behind: the orphan reaper removes
// it.
func TestRunKilledWorkersLeaveNoTempFiles(t *testing.T) {
	const runs = 10
	tmp := t.TempDir()
	dir, script := writeScript(t, waitingScript)
	var maxTook time.Duration
	for i := range runs {
		w := startCmdEnv(t, dir, []string{"TMPDIR=" + tmp}, "run", "--port", "0", "--", "node", script)
		node := w.nodePID()
		reaper := reaperOf(t, w.cmd.Process.Pid, node)
		if files := tempFiles(t, tmp); len(files) != 1 {
			t.Fatalf("run %d: TMPDIR holds %v while the host runs, want its preload", i, files)
		}
		event := time.Now()
		_ = w.cmd.Process.Signal(syscall.SIGKILL)
		w.wait()
		maxTook = max(maxTook, proctest.AssertGoneWithin(t, event, treeGoneWithin, node, reaper))
		checkNoTempFiles(t, tmp)
	}
	if files := tempFiles(t, tmp); len(files) != 0 {
		t.Fatalf("%d SIGKILLed workers left %v", runs, files)
	}
	t.Logf("%d SIGKILLed workers: 0 temp files left; host and reaper gone at most %v after the kill", runs, maxTook.Round(time.Millisecond))
}

// nodeTreeScript is a host with Node children, all followed: a fork()ed
// child that ignores SIGTERM, a spawn()ed node child, and a detached
// (setsid) node child. It prints "pid N" and "NODETREE fork spawn detached",
// and exits with code 0 on SIGUSR2.
const nodeTreeScript = `
const { fork, spawn } = require("child_process");
if (process.argv[2] === "child") {
  if (process.argv[3] === "fork") process.on("SIGTERM", () => {});
  setInterval(() => {}, 1 << 30);
} else {
  process.on("SIGUSR2", () => process.exit(0));
  console.log("pid " + process.pid);
  const forked = fork(__filename, ["child", "fork"]);
  const spawned = spawn(process.execPath, [__filename, "child", "spawn"], { stdio: "inherit" });
  const detached = spawn(process.execPath, [__filename, "child", "detached"], { detached: true, stdio: "ignore" });
  console.log("NODETREE " + forked.pid + " " + spawned.pid + " " + detached.pid);
  setInterval(() => {}, 1 << 30);
}
`

// The host's followed Node children die with it however the run ends; the
// detached one is followed but lives on, as documented. A window that asks
// children to wait makes the worker keep a wait file, which goes too.
func TestRunFollowedChildrenLeaveNoProcess(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(w *workerProc, node int)
		code int // the worker's exit code; -1 = killed
	}{
		{"worker SIGKILLed", func(w *workerProc, _ int) { _ = w.cmd.Process.Signal(syscall.SIGKILL) }, -1},
		{"host SIGKILLed", func(_ *workerProc, node int) { _ = syscall.Kill(node, syscall.SIGKILL) }, 128 + 9},
		{"Ctrl-C: SIGINT to the worker", func(w *workerProc, _ int) { _ = w.cmd.Process.Signal(syscall.SIGINT) }, 128 + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, script := writeScript(t, nodeTreeScript)
			tmp := t.TempDir()
			w := startCmdEnv(t, dir, []string{"TMPDIR=" + tmp, "INSPECTOR_WORKER_DEBUG=1"}, "run", "--port", "0", "--", "node", script)
			node := w.nodePID()
			var pids []int
			for _, f := range strings.Fields(w.waitFor(w.stdout, `NODETREE (\d+ \d+ \d+)`)) {
				pid, _ := strconv.Atoi(f)
				pids = append(pids, pid)
			}
			t.Cleanup(func() {
				for _, pid := range pids {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					proctest.AssertGone(t, pid)
				}
			})
			for _, pid := range pids {
				w.waitFor(w.stderr, `following child .*\(pid `+strconv.Itoa(pid)+`\)`)
			}
			c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
			c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
			for range pids {
				c.ExpectAttached()
			}
			if files := tempFiles(t, tmp); len(files) != 2 {
				t.Fatalf("TMPDIR holds %v, want the preload and the children's wait file", files)
			}
			reaper := reaperOf(t, w.cmd.Process.Pid, node)

			event := time.Now()
			tc.end(w, node)
			took := proctest.AssertGoneWithin(t, event, treeGoneWithin, node, pids[0], pids[1], reaper)
			t.Logf("host, its forked and spawned children and the reaper gone %v after the event", took.Round(time.Millisecond))
			if got := w.wait(); got != tc.code {
				t.Errorf("worker exit code %d, want %d", got, tc.code)
			}
			checkNoTempFiles(t, tmp)
			if err := syscall.Kill(pids[2], 0); err != nil {
				t.Errorf("the detached (setsid) child %d was killed: %v", pids[2], err)
			}
		})
	}
}
