package hostnode

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// treeGoneWithin is the acceptance bound for "no process of the host's tree
// remains": after the event, not a speed target. The kills are immediate;
// 2 s leaves room for a loaded machine.
const treeGoneWithin = 2 * time.Second

// treeJS is a host that starts a child shell and, through it, a grandchild
// sleep, both ignoring SIGTERM, plus a detached sleep (setsid, the documented
// exception), and prints "TREE child grandchild detached". It exits with
// code 0 on SIGUSR2.
const treeJS = `
const { spawn } = require("child_process");
process.on("SIGUSR2", () => process.exit(0));
const detached = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
const child = spawn("/bin/sh", ["-c", 'trap "" TERM; sleep 60 & echo $!; wait'], { stdio: ["ignore", "pipe", "ignore"] });
child.stdout.once("data", d => console.log("TREE " + child.pid + " " + String(d).trim() + " " + detached.pid));
setInterval(() => {}, 1 << 30);
`

// hostTree is what treeJS reported.
type hostTree struct{ child, grandchild, detached int }

func parseTree(t *testing.T, line string) hostTree {
	t.Helper()
	var pids []int
	for _, f := range strings.Fields(strings.TrimPrefix(line, "TREE ")) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("bad tree line %q", line)
		}
		pids = append(pids, pid)
	}
	if len(pids) != 3 {
		t.Fatalf("bad tree line %q", line)
	}
	tr := hostTree{pids[0], pids[1], pids[2]}
	for _, pid := range pids {
		assertAlive(t, pid)
	}
	// Killed by pid whatever happens; a no-op for those already gone.
	t.Cleanup(func() {
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			proctest.AssertGone(t, pid)
		}
	})
	return tr
}

// checkTreeGone asserts the host's tree (and the other pids) died within
// treeGoneWithin after the event while the detached sleep lives on, then
// kills that.
func checkTreeGone(t *testing.T, event time.Time, tr hostTree, others ...int) {
	t.Helper()
	took := proctest.AssertGoneWithin(t, event, treeGoneWithin, append([]int{tr.child, tr.grandchild}, others...)...)
	t.Logf("child, grandchild and %v gone %v after the event", others, took.Round(time.Millisecond))
	if err := syscall.Kill(tr.detached, 0); err != nil {
		t.Errorf("the detached (setsid) child %d was killed: %v", tr.detached, err)
	}
	_ = syscall.Kill(tr.detached, syscall.SIGKILL)
	proctest.AssertGone(t, tr.detached)
}

// TestTreeDiesWithHost: whatever ends node, the group kill in waitLoop takes
// the host's children along, the ones ignoring SIGTERM included.
func TestTreeDiesWithHost(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(p *Process)
		code int
	}{
		{"host exits", func(p *Process) { _ = syscall.Kill(p.PID(), syscall.SIGUSR2) }, 0},
		{"host SIGKILLed", func(p *Process) { _ = syscall.Kill(p.PID(), syscall.SIGKILL) }, 137},
		{"host stops on a forwarded SIGINT", func(p *Process) { _ = p.Signal(syscall.SIGINT) }, 130},
		{"Kill", func(p *Process) { p.Kill() }, 137},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			stdout := newLineSink()
			p := startNode(t, ctx, Options{Argv: []string{"node", writeScript(t, treeJS)}, Stdout: stdout})
			tr := parseTree(t, stdout.waitLine(t, ctx, "TREE "))
			event := time.Now()
			tc.end(p)
			<-p.Done() // node and the reaper are reaped by waitLoop
			if got := p.ExitCode(); got != tc.code {
				t.Errorf("ExitCode = %d, want %d", got, tc.code)
			}
			checkTreeGone(t, event, tr, p.PID(), p.reaper.pid())
		})
	}
}

// startHelper re-executes this test binary as orphanHelper (see TestMain) on
// script and returns it with a reader of its (and node's) stdout.
func startHelper(t *testing.T, ctx context.Context, script string, remove ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	helper := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"=orphan", helperScriptEnv+"="+script,
		helperRemoveEnv+"="+strings.Join(remove, string(os.PathListSeparator)))
	helper.Stderr = os.Stderr
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = helper.Process.Kill()
		_ = helper.Wait()
	})
	return helper, bufio.NewReader(out)
}

// readLine returns the first line from r starting with prefix.
func readLine(t *testing.T, r *bufio.Reader, prefix string) string {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line)
		}
		if err != nil {
			t.Fatalf("no line starting with %q: %v", prefix, err)
		}
	}
}

func readPIDLine(t *testing.T, r *bufio.Reader, prefix string) int {
	t.Helper()
	line := readLine(t, r, prefix)
	pid, err := strconv.Atoi(strings.TrimPrefix(line, prefix))
	if err != nil {
		t.Fatalf("helper: %q", line)
	}
	return pid
}

// TestOrphan SIGKILLs a process that started node through Start (this test
// binary re-executed as a helper, see TestMain) and checks that node dies
// with it: the parent-death signal at work.
func TestOrphan(t *testing.T) {
	ctx := testCtx(t)
	helper, out := startHelper(t, ctx, writeScript(t, waitForeverJS))
	pid := readPIDLine(t, out, "PID ")
	assertAlive(t, pid)
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	proctest.AssertGone(t, pid)
}

// TestTreeDiesWithKilledCaller SIGKILLs the process that called Start: the
// parent-death signal kills node, and the orphan reaper kills node's
// children and removes Options.RemoveIfOrphaned, then exits itself.
func TestTreeDiesWithKilledCaller(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "preload.cjs")
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{file, filepath.Join(sub, "deeper", "x")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keep := filepath.Join(dir, "keep")
	if err := os.WriteFile(keep, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	helper, out := startHelper(t, ctx, writeScript(t, treeJS), file, sub)
	node := readPIDLine(t, out, "PID ")
	reaper := readPIDLine(t, out, "REAPER ")
	tr := parseTree(t, readLine(t, out, "TREE "))
	assertAlive(t, reaper)
	event := time.Now()
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	checkTreeGone(t, event, tr, node, reaper) // the reaper removes the paths before it exits
	for _, gone := range []string{file, sub} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s survived the killed caller: %v", gone, err)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a path not listed was removed: %v", err)
	}
}

// TestReaperMissing: without a shell for the orphan reaper Start fails with
// an error that says so, and leaves no node behind.
func TestReaperMissing(t *testing.T) {
	ctx := testCtx(t)
	saved := reaperShell
	reaperShell = "/nonexistent/sh"
	defer func() { reaperShell = saved }()
	exe, _ := fakeNode(t, "exec sleep 1000")
	p, err := Start(ctx, Options{Argv: []string{exe}})
	if err == nil {
		p.Kill()
		t.Fatal("Start succeeded without a shell for the orphan reaper")
	}
	se := checkStartError(t, err, ErrSpawn, -1, []string{"orphan reaper", "/nonexistent/sh", "POSIX shell"})
	if se.PID <= 0 {
		t.Fatalf("StartError.PID = %d", se.PID)
	}
	proctest.AssertGone(t, se.PID)
}
