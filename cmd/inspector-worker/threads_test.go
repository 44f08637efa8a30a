package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// threadsScript starts a worker thread that starts one of its own; each
// prints its first line. With ONSIGNAL it waits for the file "go" first.
const threadsScript = `
const fs = require('fs');
const { Worker, isMainThread, workerData } = require('worker_threads');
const depth = isMainThread ? 0 : workerData;
if (isMainThread) console.log('pid ' + process.pid);
function start() {
  new Worker(__filename, { workerData: depth + 1 })
    .on('exit', (c) => console.log('thread ' + (depth + 1) + ' exited ' + c));
}
if (depth > 0) console.log('thread ' + depth + ' first line');
if (depth === 1) start();
if (depth === 0) {
  if (process.env.WAIT_FOR_GO) {
    const t = setInterval(() => { if (fs.existsSync('go')) { clearInterval(t); start(); } }, 20);
  } else start();
}
`

// Worker threads run under run as under plain node: they inherit the
// --inspect-wait the worker starts the host with, so without the watcher's
// release each would wait for a debugger forever (nothing printed, the host
// never exits). Nested threads too, with and without a DevTools window.
func TestRunStartsWorkerThreads(t *testing.T) {
	t.Run("no window", func(t *testing.T) {
		dir, script := writeScript(t, threadsScript)
		w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
		pid := w.nodePID()
		w.waitFor(w.stdout, `thread 1 first line`)
		w.waitFor(w.stdout, `thread 2 first line`)
		w.waitFor(w.stdout, `thread 1 exited 0`)
		if got := w.wait(); got != 0 {
			t.Fatalf("exit code %d, want 0", got)
		}
		proctest.AssertGone(t, pid)
	})
	t.Run("window", func(t *testing.T) {
		dir, script := writeScript(t, threadsScript)
		w := startCmdEnv(t, dir, []string{"WAIT_FOR_GO=1"}, "run", "--port", "0", "--", "node", script)
		pid := w.nodePID()
		c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
		c.MustCall("Runtime.enable", nil)
		c.MustCall("Debugger.enable", nil)
		if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		w.waitFor(w.stdout, `thread 1 first line`)
		w.waitFor(w.stdout, `thread 2 first line`)
		w.waitFor(w.stdout, `thread 1 exited 0`)
		c.ExpectClosed()
		if got := w.wait(); got != 0 {
			t.Fatalf("exit code %d, want 0", got)
		}
		proctest.AssertGone(t, pid)
	})
}

// threadPoolScript keeps two worker threads alive; each says when its first
// line ran.
const threadPoolScript = `
const { Worker, isMainThread } = require('worker_threads');
if (!isMainThread) {
  globalThis.threadStarted = true;
  setInterval(() => {}, 1 << 30);
} else {
  new Worker(__filename); new Worker(__filename);
  setInterval(() => {}, 1 << 30);
}
`

// Under run (threads inherit --inspect-wait; the watcher releases them) a
// window that asks for flat auto-attach gets each thread as a child target
// whose session runs in that thread, and the preload, which runs in every
// thread too, is hidden from the thread's scripts as from the main thread's.
func TestRunThreadTargets(t *testing.T) {
	dir, script := writeScript(t, threadPoolScript)
	w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
	c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
	c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	seen := map[string]bool{}
	for range 2 {
		var p struct {
			SessionID  string `json:"sessionId"`
			TargetInfo struct {
				Type string `json:"type"`
				URL  string `json:"url"`
			} `json:"targetInfo"`
		}
		m := c.ExpectEvent("Target.attachedToTarget", nil)
		if err := json.Unmarshal(m.Params, &p); err != nil || p.TargetInfo.Type != "worker" || p.SessionID == "" {
			t.Fatalf("attachedToTarget: %s", m.Raw)
		}
		seen[p.SessionID] = true
		c.CallIn(p.SessionID, "Debugger.enable", nil)
		deadline := time.Now().Add(cdptest.Timeout)
		for {
			m := c.CallIn(p.SessionID, "Runtime.evaluate", map[string]any{"expression": "globalThis.threadStarted === true", "returnByValue": true})
			if m.Error != nil || m.SessionID != p.SessionID {
				t.Fatalf("Runtime.evaluate in session %s: %s", p.SessionID, m.Raw)
			}
			if strings.Contains(string(m.Result), `"value":true`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("thread of session %s did not run its first line within %v", p.SessionID, cdptest.Timeout)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if len(seen) != 2 {
		t.Fatalf("sessions %v, want 2", seen)
	}
	for _, m := range c.All() {
		var p struct {
			URL string `json:"url"`
		}
		// Only the script's own url: V8's stackTrace in the event may name
		// the preload for any script (see Server.hidden).
		if m.Method == "Debugger.scriptParsed" && m.SessionID != "" && json.Unmarshal(m.Params, &p) == nil &&
			strings.Contains(p.URL, "inspector-worker-preload-") {
			t.Errorf("a thread's scriptParsed shows the preload: %.300s", m.Raw)
		}
	}
	t.Logf("%d scriptParsed from threads", countThreadScripts(c.All()))
}

func countThreadScripts(msgs []cdptest.Msg) int {
	n := 0
	for _, m := range msgs {
		if m.Method == "Debugger.scriptParsed" && m.SessionID != "" {
			n++
		}
	}
	return n
}

// threadHoldScript starts two worker threads that stay; startThread()
// starts one more. A thread's first line is threadFirstLine.
const threadHoldScript = `
const { Worker, isMainThread } = require('worker_threads');
if (!isMainThread) {
  globalThis.threadStarted = true;
  setInterval(() => {}, 1 << 30);
} else {
  const start = () => new Worker(__filename).threadId;
  globalThis.startThread = start;
  start(); start();
  setInterval(() => {}, 1 << 30);
}
`

// threadFirstLine is the 0-based line of threadHoldScript a thread runs first.
const threadFirstLine = 3

// A window that attaches with waitForDebuggerOnStart keeps a thread it did
// not release waiting: a breakpoint set on the thread's first line in its
// session before runIfWaitingForDebugger pauses the thread there, while
// the main thread keeps answering. Closing the window releases a thread it
// still held.
func TestThreadWaitsForWindow(t *testing.T) {
	dir, script := writeScript(t, threadHoldScript)
	w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
	c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
	c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	for range 2 {
		c.ExpectAttached() // the threads that run already
	}
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "startThread()"})
	a := c.ExpectAttached()
	if !a.WaitingForDebugger {
		t.Errorf("a thread started after setAutoAttach{waitForDebuggerOnStart} is not said to wait: %+v", a)
	}
	s := a.SessionID
	if v, _ := c.EvaluateIn(s, "globalThis.threadStarted === true", false); string(v) != "false" {
		t.Fatalf("the thread ran before the window released it (threadStarted %s)", v)
	}
	c.CallIn(s, "Debugger.enable", map[string]any{})
	if m := c.CallIn(s, "Debugger.setBreakpointByUrl", map[string]any{"lineNumber": threadFirstLine, "urlRegex": `host\.js$`}); m.Error != nil {
		t.Fatalf("setBreakpointByUrl: %s", m.Raw)
	}
	if m := c.CallIn(s, "Runtime.runIfWaitingForDebugger", map[string]any{}); m.Error != nil {
		t.Fatalf("runIfWaitingForDebugger: %s", m.Raw)
	}
	paused := c.ExpectEvent("Debugger.paused", func(m cdptest.Msg) bool { return m.SessionID == s })
	var p struct {
		CallFrames []struct {
			Location struct {
				LineNumber int `json:"lineNumber"`
			} `json:"location"`
		} `json:"callFrames"`
	}
	if err := json.Unmarshal(paused.Params, &p); err != nil || len(p.CallFrames) == 0 || p.CallFrames[0].Location.LineNumber != threadFirstLine ||
		!strings.Contains(string(paused.Params), `"hitBreakpoints":["`) {
		t.Fatalf("the thread paused at %s, want line %d", paused.Raw, threadFirstLine)
	}
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "1 + 1"}) // the main thread runs on
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "startThread()"})
	c.ExpectAttached()  // the fourth thread, never released by A
	c.Conn().CloseNow() // the window goes without releasing it

	// Closing A ends its hold: the watcher releases the fourth thread, and
	// A's thread sessions are detached, which resumes the third. B sees all
	// four running.
	b := cdptest.Dial(t, "B", pageURL(t, w.addr()), nil)
	b.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	var attached []cdptest.Attached
	for range 4 {
		attached = append(attached, b.ExpectAttached())
	}
	ids := map[int]bool{}
	for _, a := range attached {
		ids[b.ThreadIDIn(a.SessionID)] = true
	}
	if len(ids) != 4 || !ids[1] || !ids[2] || !ids[3] || !ids[4] {
		t.Errorf("window B sees threads %v running, want 1-4", ids)
	}
}
