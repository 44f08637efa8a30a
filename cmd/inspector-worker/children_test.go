package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// childrenScript is a host that fork()s one child and spawn()s `node` for
// another; each child prints "child KIND pid N" and exits once the file
// stop-KIND exists. The host stays until the file stop-host exists.
const childrenScript = `
const fs = require('fs');
const { fork, spawn } = require('child_process');
const stopWhen = (name, then) => {
  const t = setInterval(() => { if (fs.existsSync(name)) { clearInterval(t); then(); } }, 20);
};
if (process.argv[2] === 'child') {
  const kind = process.argv[3];
  console.log('child ' + kind + ' pid ' + process.pid);
  stopWhen('stop-' + kind, () => process.exit(0));
} else {
  console.log('pid ' + process.pid);
  fork(__filename, ['child', 'fork']);
  spawn('node', [__filename, 'child', 'spawn'], { stdio: 'inherit' });
  stopWhen('stop-host', () => process.exit(0));
}
`

// Under run, a fork()ed child and a spawn()ed `node` child of the host each
// open their own inspector and register with the worker, which follows each
// by pid until it exits. With --no-children neither registers.
func TestRunFollowsChildProcesses(t *testing.T) {
	t.Run("followed", func(t *testing.T) {
		dir, script := writeScript(t, childrenScript)
		w := startCmdEnv(t, dir, []string{"INSPECTOR_WORKER_DEBUG=1"}, "run", "--port", "0", "--", "node", script)
		host := w.nodePID()
		forked, _ := strconv.Atoi(w.waitFor(w.stdout, `child fork pid (\d+)`))
		spawned, _ := strconv.Atoi(w.waitFor(w.stdout, `child spawn pid (\d+)`))
		w.waitFor(w.stderr, `following child \S+ \S+host\.js child fork \(pid `+strconv.Itoa(forked)+`\)`)
		w.waitFor(w.stderr, `following child \S+ \S+host\.js child spawn \(pid `+strconv.Itoa(spawned)+`\)`)
		if strings.Contains(w.stderr.String(), "(pid "+strconv.Itoa(host)+")") {
			t.Errorf("the host itself registered as a child:\n%s", w.stderr)
		}
		// A window that asks for flat auto-attach gets each child as a
		// target whose session evaluates in that child.
		c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
		c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
		sessions := map[int]string{}
		for range 2 {
			a := c.ExpectAttached()
			v, threw := c.EvaluateIn(a.SessionID, "process.pid", false)
			pid, _ := strconv.Atoi(string(v))
			if threw || (pid != forked && pid != spawned) || !strings.Contains(a.TargetInfo.Title, "(pid "+string(v)+")") {
				t.Fatalf("session %s (%q) evaluates process.pid to %s, want %d or %d named in the title", a.SessionID, a.TargetInfo.Title, v, forked, spawned)
			}
			sessions[pid] = a.SessionID
		}
		if len(sessions) != 2 {
			t.Fatalf("sessions by pid %v, want one per child", sessions)
		}
		// A request the child never answers is answered once, when it
		// exits; the detached session then refuses requests.
		never := c.SendTo(sessions[forked], "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
		touch(t, dir, "stop-fork")
		w.waitFor(w.stderr, `child pid `+strconv.Itoa(forked)+` ended`)
		c.ExpectEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool {
			return strings.Contains(string(m.Params), `"sessionId":"`+sessions[forked]+`"`)
		})
		t.Logf("the pending request's answer: %.200s", c.ExpectResponse(never).Raw)
		if m := c.CallIn(sessions[forked], "Runtime.evaluate", map[string]any{"expression": "1"}); m.Error == nil {
			t.Errorf("a detached child's session answered: %s", m.Raw)
		}
		answers := 0
		for _, m := range c.All() {
			if m.ID != nil && *m.ID == never && m.SessionID == sessions[forked] {
				answers++
			}
		}
		if answers != 1 {
			t.Errorf("the pending request got %d answers, want 1", answers)
		}
		proctest.AssertGone(t, forked)
		touch(t, dir, "stop-spawn")
		w.waitFor(w.stderr, `child pid `+strconv.Itoa(spawned)+` ended`)
		touch(t, dir, "stop-host")
		if got := w.wait(); got != 0 {
			t.Fatalf("exit code %d, want 0", got)
		}
		proctest.AssertGone(t, spawned)
		proctest.AssertGone(t, host)
	})
	t.Run("no-children", func(t *testing.T) {
		dir, script := writeScript(t, childrenScript)
		w := startCmdEnv(t, dir, []string{"INSPECTOR_WORKER_DEBUG=1"}, "run", "--port", "0", "--no-children", "--", "node", script)
		host := w.nodePID()
		w.waitFor(w.stdout, `child fork pid (\d+)`)
		w.waitFor(w.stdout, `child spawn pid (\d+)`)
		touch(t, dir, "stop-fork")
		touch(t, dir, "stop-spawn")
		touch(t, dir, "stop-host")
		if got := w.wait(); got != 0 {
			t.Fatalf("exit code %d, want 0", got)
		}
		if s := w.stderr.String(); strings.Contains(s, "following child") || strings.Contains(s, "Debugger listening") {
			t.Errorf("a child was followed or opened its inspector with --no-children:\n%s", s)
		}
		proctest.AssertGone(t, host)
	})
	t.Run("max-children", func(t *testing.T) {
		dir, script := writeScript(t, childrenScript)
		w := startCmdEnv(t, dir, []string{"INSPECTOR_WORKER_DEBUG=1"}, "run", "--port", "0", "--max-children", "1", "--", "node", script)
		w.nodePID()
		w.waitFor(w.stderr, `following child `)
		refused := w.waitFor(w.stderr, `child (\d+) not followed: already following 1 child processes \(the limit\); this one runs unobserved`)
		w.waitFor(w.stdout, `child \w+ pid `+refused) // it runs on
		touch(t, dir, "stop-fork")
		touch(t, dir, "stop-spawn")
		touch(t, dir, "stop-host")
		if got := w.wait(); got != 0 {
			t.Fatalf("exit code %d, want 0", got)
		}
		if n := strings.Count(w.stderr.String(), "following child "); n != 1 {
			t.Errorf("%d children followed, want 1:\n%s", n, w.stderr)
		}
	})
}

func touch(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// nodeBanners are the lines Node's inspector prints on a process's stderr;
// none may reach the terminal of a run, whichever process printed them.
var nodeBanners = []string{"Debugger listening", "For help, see", "Debugger attached.", "Waiting for the debugger", "Debugger ending"}

// The children's inspectors print nothing on the terminal: not at start,
// not for each session the worker and each window open to them, not when a
// window leaves while they run, not when they exit with a window attached.
// Their own lines still pass.
func TestRunChildBannersStayOffTerminal(t *testing.T) {
	dir, script := writeScript(t, childrenScript)
	w := startCmdEnv(t, dir, []string{"INSPECTOR_WORKER_DEBUG=1"}, "run", "--port", "0", "--", "node", script)
	host := w.nodePID()
	forked := w.waitFor(w.stdout, `child fork pid (\d+)`)
	spawned := w.waitFor(w.stdout, `child spawn pid (\d+)`)
	w.waitFor(w.stderr, `following child .*\(pid `+forked+`\)`)
	w.waitFor(w.stderr, `following child .*\(pid `+spawned+`\)`)
	stays := cdptest.Dial(t, "stays", pageURL(t, w.addr()), nil)
	leaves := cdptest.Dial(t, "leaves", pageURL(t, w.addr()), nil)
	for _, c := range []*cdptest.Client{stays, leaves} {
		c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
		for range 2 {
			a := c.ExpectAttached()
			c.CallIn(a.SessionID, "Runtime.enable", nil)
		}
	}
	leaves.Conn().Close(1000, "")
	time.Sleep(200 * time.Millisecond) // Node prints "Debugger ending" as the session goes
	touch(t, dir, "stop-fork")
	touch(t, dir, "stop-spawn")
	for _, pid := range []string{forked, spawned} {
		if how := w.waitFor(w.stderr, `child pid `+pid+` ended: ([^\n]*)`); how != "exited with code 0" {
			t.Errorf("child %s ended: %s, want exited with code 0", pid, how)
		}
	}
	touch(t, dir, "stop-host")
	if got := w.wait(); got != 0 {
		t.Fatalf("exit code %d, want 0", got)
	}
	proctest.AssertGone(t, host)
	terminal := w.stdout.String() + w.stderr.String()
	for _, b := range nodeBanners {
		if n := strings.Count(terminal, b); n > 0 {
			t.Errorf("%q reached the terminal %d times", b, n)
		}
	}
	for _, kind := range []string{"fork", "spawn"} {
		if !strings.Contains(w.stdout.String(), "child "+kind+" pid ") {
			t.Errorf("the %s child's own line is missing", kind)
		}
	}
}

// acceptanceScript is a host with a fork()ed child and a
// spawn(process.execPath) child, and a third child it forks once the file
// start-late exists. A child logs "said by KIND" when say-KIND exists and
// exits with code 3 when stop-KIND exists.
const acceptanceScript = `
const fs = require('fs');
const { fork, spawn } = require('child_process');
const when = (name, then) => {
  const t = setInterval(() => { if (fs.existsSync(name)) { clearInterval(t); then(); } }, 20);
};
if (process.argv[2] === 'child') {
  const kind = process.argv[3];
  console.log('child ' + kind + ' pid ' + process.pid);
  when('say-' + kind, () => console.log('said by ' + kind));
  when('stop-' + kind, () => process.exit(3));
} else {
  console.log('pid ' + process.pid);
  fork(__filename, ['child', 'fork']);
  spawn(process.execPath, [__filename, 'child', 'spawn'], { stdio: 'inherit' });
  when('start-late', () => fork(__filename, ['child', 'late']));
  when('stop-host', () => process.exit(0));
}
`

// Two raw CDP windows under run each get every child of the host as a
// target titled with its command line and pid, evaluate in it, receive its
// console messages in its session, see it detached at its end with how it
// ended in the Console, and get a child started later.
func TestRunChildProcessesTwoWindows(t *testing.T) {
	dir, script := writeScript(t, acceptanceScript)
	w := startCmdEnv(t, dir, []string{"INSPECTOR_WORKER_DEBUG=1"}, "run", "--port", "0", "--", "node", script)
	w.nodePID()
	pids := map[string]string{
		"fork":  w.waitFor(w.stdout, `child fork pid (\d+)`),
		"spawn": w.waitFor(w.stdout, `child spawn pid (\d+)`),
	}
	for _, pid := range pids {
		w.waitFor(w.stderr, `following child .*\(pid `+pid+`\)`)
	}
	windows := []*cdptest.Client{
		cdptest.Dial(t, "A", pageURL(t, w.addr()), nil),
		cdptest.Dial(t, "B", pageURL(t, w.addr()), nil),
	}
	sessions := make([]map[string]string, len(windows)) // window → kind → sessionId
	attach := func(i int, kinds ...string) {
		t.Helper()
		c := windows[i]
		for range kinds {
			a := c.ExpectAttached()
			kind := ""
			for _, k := range kinds {
				if strings.Contains(a.TargetInfo.Title, "host.js child "+k+" (pid "+pids[k]+")") {
					kind = k
				}
			}
			if kind == "" || sessions[i][kind] != "" {
				t.Fatalf("window %d: attached %q, want one of %v with its pid", i, a.TargetInfo.Title, kinds)
			}
			sessions[i][kind] = a.SessionID
			c.CallIn(a.SessionID, "Runtime.enable", nil)
			if v, threw := c.EvaluateIn(a.SessionID, "process.pid", false); threw || string(v) != pids[kind] {
				t.Fatalf("window %d: process.pid in %s's session is %s, want %s", i, kind, v, pids[kind])
			}
		}
	}
	for i, c := range windows {
		sessions[i] = map[string]string{}
		c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
		attach(i, "fork", "spawn")
	}
	for _, kind := range []string{"fork", "spawn"} {
		touch(t, dir, "say-"+kind)
		for i, c := range windows {
			c.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool {
				return m.SessionID == sessions[i][kind] && strings.Contains(string(m.Params), `"said by `+kind+`"`)
			})
		}
	}
	// The forked child exits with code 3; the spawned one is killed.
	touch(t, dir, "stop-fork")
	spawned, _ := strconv.Atoi(pids["spawn"])
	if err := syscall.Kill(spawned, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i, c := range windows {
		for kind, want := range map[string]string{"fork": "exited with code 3", "spawn": "ended without saying how"} {
			c.ExpectAnyEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool {
				return strings.Contains(string(m.Params), `"sessionId":"`+sessions[i][kind]+`"`)
			})
			e := c.ExpectAnyEvent("Log.entryAdded", func(m cdptest.Msg) bool {
				return m.SessionID == "" && strings.Contains(string(m.Params), "(pid "+pids[kind]+") "+want)
			})
			t.Logf("window %d: %s", i, e.Params)
		}
	}
	pids["late"] = ""
	touch(t, dir, "start-late")
	pids["late"] = w.waitFor(w.stdout, `child late pid (\d+)`)
	for i := range windows {
		attach(i, "late")
	}
	touch(t, dir, "stop-late")
	touch(t, dir, "stop-host")
	if got := w.wait(); got != 0 {
		t.Fatalf("exit code %d, want 0", got)
	}
	for _, pid := range pids {
		p, _ := strconv.Atoi(pid)
		proctest.AssertGone(t, p)
	}
}

// shortLivedScript forks, each time a file go-N exists (N = 1, 2, …), a
// child that logs one line and exits at once.
const shortLivedScript = `
const fs = require('fs');
const { fork } = require('child_process');
if (process.argv[2] === 'child') {
  console.log('short-lived ' + process.argv[3] + ' pid ' + process.pid);
} else {
  console.log('pid ' + process.pid);
  let n = 1;
  setInterval(() => { if (fs.existsSync('go-' + n)) fork(__filename, ['child', String(n++)]); }, 20);
  const t = setInterval(() => { if (fs.existsSync('stop-host')) process.exit(0); }, 20);
}
`

// A child that logs one line and exits at once is seen whole by a window
// that asked children to wait at their start: it waits until the window
// attached it and let it run, so a breakpoint on its first line hits and
// its line arrives in its session; a second
// window that did not ask to wait does not hold it. With no window, no
// child waits.
func TestRunShortLivedChildWaitsForWindow(t *testing.T) {
	dir, script := writeScript(t, shortLivedScript)
	w := startCmdEnv(t, dir, []string{"INSPECTOR_WORKER_DEBUG=1"}, "run", "--port", "0", "--", "node", script)
	w.nodePID()
	touch(t, dir, "go-1") // no window: it runs and ends unwaited
	w.waitFor(w.stdout, `short-lived 1 pid (\d+)`)
	waits := cdptest.Dial(t, "waits", pageURL(t, w.addr()), nil)
	waits.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	free := cdptest.Dial(t, "free", pageURL(t, w.addr()), nil)
	free.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	touch(t, dir, "go-2")
	a := waits.ExpectAttached()
	if strings.Contains(a.TargetInfo.Title, "child 1 (pid ") {
		// Child 1 may still be followed when the window opens: it is told of it too.
		a = waits.ExpectAttached()
	}
	if !a.WaitingForDebugger || !strings.Contains(a.TargetInfo.Title, "child 2 (pid ") {
		t.Fatalf("the waiting window got %+v, want child 2 waiting for it", a)
	}
	f := free.ExpectAttached()
	if strings.Contains(f.TargetInfo.Title, "child 1 (pid ") {
		f = free.ExpectAttached()
	}
	if f.WaitingForDebugger {
		t.Errorf("the window that did not ask to wait was told the child waits for it")
	}
	time.Sleep(300 * time.Millisecond) // the child must still be waiting
	if strings.Contains(w.stdout.String(), "short-lived 2") {
		t.Fatalf("the child ran before the waiting window let it:\n%s", w.stdout)
	}
	// A breakpoint by URL on the child's first line, set while it waits, hits.
	waits.CallIn(a.SessionID, "Runtime.enable", nil)
	waits.CallIn(a.SessionID, "Debugger.enable", nil)
	bp := waits.CallIn(a.SessionID, "Debugger.setBreakpointByUrl", map[string]any{
		"url": "file://" + filepath.Join(dir, script), "lineNumber": 4})
	if bp.Error != nil {
		t.Fatalf("setBreakpointByUrl in the child: %s", bp.Raw)
	}
	waits.CallIn(a.SessionID, "Runtime.runIfWaitingForDebugger", nil)
	p := waits.ExpectEvent("Debugger.paused", func(m cdptest.Msg) bool { return m.SessionID == a.SessionID })
	if line := pausedLine(p); line != 4 {
		t.Errorf("the child paused on line %d, want its first line 4", line)
	}
	if strings.Contains(w.stdout.String(), "short-lived 2") {
		t.Errorf("the child logged before its breakpoint line ran")
	}
	waits.CallIn(a.SessionID, "Debugger.resume", nil)
	waits.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool {
		return m.SessionID == a.SessionID && strings.Contains(string(m.Params), "short-lived 2 pid ")
	})
	waits.ExpectAnyEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"sessionId":"`+a.SessionID+`"`)
	})
	waits.ExpectAnyEvent("Log.entryAdded", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), "child 2 (pid ") && strings.Contains(string(m.Params), "exited with code 0")
	})
	touch(t, dir, "stop-host")
	if got := w.wait(); got != 0 {
		t.Fatalf("exit code %d, want 0", got)
	}
}

// watchChildApp is a --watch host, version v, that forks one child.
func watchChildApp(v string) string {
	return `const { fork } = require('child_process');
if (process.argv[2] === 'child') {
  console.log('child ' + process.argv[3] + ' pid ' + process.pid);
  setInterval(() => {}, 1000);
} else {
  console.log('pid ' + process.pid + ' ` + v + `');
  fork(__filename, ['child', '` + v + `']);
  setInterval(() => {}, 1000);
  process.on('SIGINT', () => process.exit(42));
  console.log('ready ` + v + `');
}
`
}

// Under run --watch a window keeps following children across restarts: the
// old host's child dies with it and is detached, the new host's is
// attached, without the window asking again.
func TestWatchRestartSwapsChildren(t *testing.T) {
	w, dir, _ := startWatch(t, watchChildApp("v1"))
	old := w.waitFor(w.stdout, `child v1 pid (\d+)`)
	c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
	c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	a1 := c.ExpectAttached()
	if !strings.Contains(a1.TargetInfo.Title, "child v1 (pid "+old+")") {
		t.Fatalf("attached %q, want the v1 child %s", a1.TargetInfo.Title, old)
	}
	w.ready("v1")
	writeApp(t, dir, watchChildApp("v2"))
	c.ExpectAnyEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"sessionId":"`+a1.SessionID+`"`)
	})
	oldPID, _ := strconv.Atoi(old)
	proctest.AssertGone(t, oldPID)
	a2 := c.ExpectAttached()
	if !strings.Contains(a2.TargetInfo.Title, "child v2 (pid ") || !a2.WaitingForDebugger {
		t.Fatalf("attached %+v, want the v2 child, waiting for the window", a2)
	}
	c.CallIn(a2.SessionID, "Runtime.enable", nil)
	c.CallIn(a2.SessionID, "Runtime.runIfWaitingForDebugger", nil)
	c.ExpectAnyEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool {
		return m.SessionID == a2.SessionID && strings.Contains(string(m.Params), "child v2 pid ")
	})
	w.ready("v2")
	w.cmd.Process.Signal(syscall.SIGINT)
	if got := w.wait(); got != 42 {
		t.Errorf("exit code %d, want the host's 42", got)
	}
	newPID, _ := strconv.Atoi(w.waitFor(w.stdout, `child v2 pid (\d+)`))
	proctest.AssertGone(t, newPID)
}
