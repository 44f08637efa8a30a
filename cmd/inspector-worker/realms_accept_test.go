package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// realmsHostScript is one host with every kind of realm: it loads
// pool.js (poolHostScript: four worker threads, an HTTP server, the
// work/logIn/stopThread/startThread globals), fork()s one child and
// spawn()s process.execPath for another. sayMain() logs on the main
// thread. A child prints "child KIND pid N", logs "said by KIND" once the
// file say-KIND exists and exits once stop-KIND exists; the host exits
// once stop-host exists.
const realmsHostScript = `
const fs = require('fs');
const { fork, spawn } = require('child_process');
const when = (name, then) => {
  const t = setInterval(() => { if (fs.existsSync(name)) { clearInterval(t); then(); } }, 20);
};
if (process.argv[2] === 'child') {
  const kind = process.argv[3];
  console.log('child ' + kind + ' pid ' + process.pid);
  when('say-' + kind, () => console.log('said by ' + kind));
  when('stop-' + kind, () => process.exit(0));
} else {
  require('./pool.js');
  globalThis.sayMain = () => { console.log('said by main'); return process.pid; };
  fork(__filename, ['child', 'fork']);
  spawn(process.execPath, [__filename, 'child', 'spawn'], { stdio: 'inherit' });
  when('stop-host', () => process.exit(0));
  console.log('pid ' + process.pid);
}
`

// writeRealms writes realmsHostScript beside the pool of writePool; it
// returns the folder and the thread script's file:// URL.
func writeRealms(t *testing.T) (dir, workerURL string) {
	t.Helper()
	dir, workerURL = writePool(t)
	for name, body := range map[string]string{"pool.js": poolHostScript, "host.js": realmsHostScript} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, workerURL
}

// realmSessions is one window's session of each realm, by name: "thread
// N" for threadId N, "fork" and "spawn" for the children.
type realmSessions map[string]string

// attachRealms asks c for flat auto-attach and expects one attachment per
// thread and per child (n in all), each once: a child is told by its title
// and must evaluate process.pid to its pid; a thread by the threadId it
// evaluates.
func attachRealms(t *testing.T, c *cdptest.Client, n int, pids map[string]string) realmSessions {
	t.Helper()
	c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	got := realmSessions{}
	for range n {
		a := c.ExpectAttached()
		name := ""
		for kind, pid := range pids {
			if strings.Contains(a.TargetInfo.Title, "host.js child "+kind+" (pid "+pid+")") {
				name = kind
				if v, threw := c.EvaluateIn(a.SessionID, "process.pid", false); threw || string(v) != pid {
					t.Fatalf("process.pid in %s's session is %s, want %s", kind, v, pid)
				}
			}
		}
		if name == "" {
			name = fmt.Sprintf("thread %d", c.ThreadIDIn(a.SessionID))
		}
		if got[name] != "" {
			t.Fatalf("%s attached twice (%q): %s and %s", name, a.TargetInfo.Title, got[name], a.SessionID)
		}
		got[name] = a.SessionID
		c.CallIn(a.SessionID, "Runtime.enable", nil)
	}
	return got
}

// The P14 acceptance conversation in one real host: a pool of four worker
// threads, a fork()ed child, a spawn(process.execPath) child and an HTTP
// server, under run, with two raw CDP windows. Each window gets each
// thread and child once; a thread's session evaluates its threadId, a
// child's its pid; the console of main, a thread and a child reaches its
// own session only; a breakpoint by URL pauses one thread while the main
// thread answers HTTP, then resumes; an exiting thread is detached and a
// later one attached.
func TestRunRealmsAcceptance(t *testing.T) {
	dir, workerURL := writeRealms(t)
	w := startCmdEnv(t, dir, []string{"INSPECTOR_WORKER_DEBUG=1"}, "run", "--port", "0", "--", "node", "host.js")
	port := regexp.MustCompile(`http port (\d+)`).FindStringSubmatch(w.waitFor(w.stdout, `http port \d+`))[1]
	host := w.nodePID()
	pids := map[string]string{"fork": w.waitFor(w.stdout, `child fork pid (\d+)`), "spawn": w.waitFor(w.stdout, `child spawn pid (\d+)`)}
	for _, pid := range pids {
		w.waitFor(w.stderr, `following child .*\(pid `+pid+`\)`)
	}
	windows := []*cdptest.Client{cdptest.Dial(t, "A", pageURL(t, w.addr()), nil), cdptest.Dial(t, "B", pageURL(t, w.addr()), nil)}
	sessions := make([]realmSessions, len(windows))
	for i, c := range windows {
		c.MustCall("Runtime.enable", nil)
		sessions[i] = attachRealms(t, c, 6, pids)
		for _, name := range []string{"thread 1", "thread 2", "thread 3", "thread 4", "fork", "spawn"} {
			if sessions[i][name] == "" {
				t.Fatalf("window %d: sessions %v, want threads 1-4 and both children", i, sessions[i])
			}
		}
	}

	// Console: main, thread 3 and each child log; each message arrives in
	// its realm's session of each window, and in no other.
	a := windows[0]
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "sayMain()"})
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "logIn(3)"})
	touch(t, dir, "say-fork")
	touch(t, dir, "say-spawn")
	realmOf := map[string]string{"said by main": "", "thread says 3": "thread 3", "said by fork": "fork", "said by spawn": "spawn"}
	for text := range realmOf {
		for _, c := range windows {
			c.ExpectAnyEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(m) == text })
		}
	}

	// A breakpoint by the thread script's URL in thread 2's session of A
	// pauses thread 2 only; the main thread answers HTTP meanwhile.
	two := sessions[0]["thread 2"]
	a.MustCall("Debugger.enable", nil)
	a.CallIn(two, "Debugger.enable", nil)
	if m := a.CallIn(two, "Debugger.setBreakpointByUrl", map[string]any{"url": workerURL, "lineNumber": poolWorkLine}); m.Error != nil ||
		!strings.Contains(string(m.Result), `"lineNumber":`+strconv.Itoa(poolWorkLine)) {
		t.Fatalf("setBreakpointByUrl did not resolve in the thread's script: %s", m.Raw)
	}
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "work(2)"})
	paused := a.ExpectAnyEvent("Debugger.paused", nil)
	if paused.SessionID != two || pausedLine(paused) != poolWorkLine {
		t.Fatalf("paused %.400s, want thread 2's session %s on line %d", paused.Raw, two, poolWorkLine)
	}
	start := time.Now()
	getPong(t, port)
	t.Logf("HTTP answered during thread 2's pause in %v", time.Since(start))
	if v, threw := a.EvaluateIn("", "process.pid", false); threw || string(v) != strconv.Itoa(host) {
		t.Errorf("the main thread evaluated process.pid as %s during thread 2's pause, want %d", v, host)
	}
	for _, m := range a.All() {
		if m.Method == "Debugger.paused" && m.SessionID != two {
			t.Errorf("a realm other than thread 2 paused: %.300s", m.Raw)
		}
		if m.Method == "Runtime.consoleAPICalled" && consoleText(m) == "work done 200" {
			t.Fatalf("thread 2 ran past its breakpoint while paused")
		}
	}
	if m := a.CallIn(two, "Debugger.resume", nil); m.Error != nil {
		t.Fatalf("resume: %s", m.Raw)
	}
	a.ExpectAnyEvent("Debugger.resumed", func(m cdptest.Msg) bool { return m.SessionID == two })
	a.ExpectAnyEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(m) == "work done 200" })

	// Thread 4 exits: detached in both windows; a later thread is attached
	// in both.
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "stopThread(4)"})
	for i, c := range windows {
		c.ExpectAnyEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool {
			return strings.Contains(string(m.Params), `"sessionId":"`+sessions[i]["thread 4"]+`"`)
		})
	}
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "startThread()"})
	for i, c := range windows {
		if id := c.ThreadIDIn(c.ExpectAttached().SessionID); id != 5 {
			t.Errorf("window %d: the later thread's session runs in thread %d, want 5", i, id)
		}
	}

	for i, c := range windows {
		checkConsoleSessions(t, i, c, sessions[i], realmOf)
	}
	touch(t, dir, "stop-fork")
	touch(t, dir, "stop-spawn")
	touch(t, dir, "stop-host")
	if got := w.wait(); got != 0 {
		t.Fatalf("exit code %d, want 0", got)
	}
	for _, pid := range pids {
		p, _ := strconv.Atoi(pid)
		proctest.AssertGone(t, p)
	}
	proctest.AssertGone(t, host)
}

// checkConsoleSessions fails unless each text of realmOf arrived in window
// c exactly once, in the session of its realm ("" = the main session).
func checkConsoleSessions(t *testing.T, window int, c *cdptest.Client, sessions realmSessions, realmOf map[string]string) {
	t.Helper()
	for text, realm := range realmOf {
		want := ""
		if realm != "" {
			want = sessions[realm]
		}
		var in []string
		for _, m := range c.Events("Runtime.consoleAPICalled") {
			if consoleText(m) == text {
				in = append(in, m.SessionID)
			}
		}
		if len(in) != 1 || in[0] != want {
			t.Errorf("window %d: %q arrived in sessions %q, want only %s's %q", window, text, in, orMain(realm), want)
		}
	}
}

// orMain names realm, "" being the main thread.
func orMain(realm string) string {
	if realm == "" {
		return "main"
	}
	return realm
}
