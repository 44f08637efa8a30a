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
		if m.Method == "Debugger.scriptParsed" && m.SessionID != "" && strings.Contains(string(m.Params), "inspector-worker-preload-") {
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
