package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// poolHostScript keeps a pool of four worker threads (threadPoolWorker)
// and an HTTP server that answers every request. Globals for the test:
// work(id) asks thread id to run its work line, logIn(id) to log,
// stopThread(id) to exit, startThread() starts one more (its threadId).
const poolHostScript = `
const http = require('http');
const path = require('path');
const { Worker } = require('worker_threads');
const pool = new Map();
function startThread() {
  const w = new Worker(path.join(__dirname, 'worker.js'));
  pool.set(w.threadId, w);
  w.on('message', (r) => console.log('work done ' + r));
  w.on('exit', () => pool.delete(w.threadId));
  return w.threadId;
}
globalThis.startThread = startThread;
globalThis.work = (id) => { pool.get(id).postMessage('work'); return id; };
globalThis.logIn = (id) => { pool.get(id).postMessage('log'); return id; };
globalThis.stopThread = (id) => { pool.get(id).postMessage('exit'); return id; };
for (let i = 0; i < 4; i++) startThread();
const server = http.createServer((req, res) => res.end('pong'));
server.listen(0, '127.0.0.1', () => console.log('http port ' + server.address().port));
`

// poolWorkerScript is each pool thread. The line marked WORK-LINE is where
// the tests set their breakpoints.
const poolWorkerScript = `const { parentPort, threadId } = require('worker_threads');
globalThis.threadStarted = true;
parentPort.on('message', (m) => {
  if (m === 'exit') process.exit(0);
  if (m === 'log') console.log('thread says ' + threadId);
  if (m === 'work') {
    const r = threadId * 100; // WORK-LINE
    parentPort.postMessage(r);
  }
});
`

// poolWorkLine is the 0-based line of WORK-LINE in poolWorkerScript.
var poolWorkLine = func() int {
	for i, l := range strings.Split(poolWorkerScript, "\n") {
		if strings.Contains(l, "WORK-LINE") {
			return i
		}
	}
	panic("no WORK-LINE")
}()

// writePool writes the pool host and its thread script; it returns the
// folder and the thread script's file:// URL as the window sees it.
func writePool(t *testing.T) (dir, workerURL string) {
	t.Helper()
	dir, _ = writeScript(t, poolHostScript)
	if err := os.WriteFile(filepath.Join(dir, "worker.js"), []byte(poolWorkerScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, "file://" + filepath.Join(dir, "worker.js")
}

// attachPool asks c for flat auto-attach and returns its session of each
// of the n threads it is given, by threadId.
func attachPool(t *testing.T, c *cdptest.Client, n int) map[int]string {
	t.Helper()
	c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	byThread := map[int]string{}
	for range n {
		a := c.ExpectAttached()
		id := c.ThreadIDIn(a.SessionID)
		if byThread[id] != "" {
			t.Fatalf("thread %d attached twice: %s and %s", id, byThread[id], a.SessionID)
		}
		byThread[id] = a.SessionID
	}
	return byThread
}

func getPong(t *testing.T, port string) {
	t.Helper()
	client := &http.Client{Timeout: cdptest.Timeout}
	resp, err := client.Get("http://127.0.0.1:" + port + "/")
	if err != nil {
		t.Fatalf("the host's HTTP server: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "pong" {
		t.Fatalf("the host's HTTP server answered %q", body)
	}
}

// The acceptance conversation for worker threads, with raw CDP through
// run and a real node host with a pool of four threads and an HTTP
// server, in two windows: each window gets each thread once; an
// evaluation in a thread's session runs in that thread; each thread's
// console reaches its own session only; a breakpoint by the thread
// script's file:// URL, set in one thread's session, pauses that thread
// only while the main thread keeps answering HTTP and the other threads
// run; resume resumes it; an exiting thread is detached and a later one
// attached, in both windows.
func TestRunThreadPoolAcceptance(t *testing.T) {
	dir, workerURL := writePool(t)
	w := startCmd(t, dir, "run", "--port", "0", "--", "node", "host.js")
	port := regexp.MustCompile(`http port (\d+)`).FindStringSubmatch(w.waitFor(w.stdout, `http port \d+`))[1]
	windows := []*cdptest.Client{cdptest.Dial(t, "A", pageURL(t, w.addr()), nil), cdptest.Dial(t, "B", pageURL(t, w.addr()), nil)}
	sessions := make([]map[int]string, len(windows))
	for i, c := range windows {
		c.MustCall("Runtime.enable", nil)
		sessions[i] = attachPool(t, c, 4)
		for id := 1; id <= 4; id++ {
			if sessions[i][id] == "" {
				t.Fatalf("window %d: sessions by threadId %v, want threads 1-4", i, sessions[i])
			}
			c.CallIn(sessions[i][id], "Runtime.enable", nil)
		}
	}

	// Each thread's console reaches its own session, in each window.
	for id := 1; id <= 4; id++ {
		windows[0].MustCall("Runtime.evaluate", map[string]any{"expression": fmt.Sprintf("logIn(%d)", id)})
		for i, c := range windows {
			want := fmt.Sprintf("thread says %d", id)
			m := c.ExpectAnyEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(m) == want })
			if m.SessionID != sessions[i][id] {
				t.Errorf("window %d: %q arrived in session %q, want thread %d's %q", i, want, m.SessionID, id, sessions[i][id])
			}
		}
	}

	// A breakpoint by the thread script's URL in thread 2's session of A.
	a, two, three := windows[0], sessions[0][2], sessions[0][3]
	a.CallIn(two, "Debugger.enable", nil)
	a.CallIn(three, "Debugger.enable", nil)
	parsed := a.ExpectAnyEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool {
		return m.SessionID == two && strings.Contains(string(m.Params), "worker.js")
	})
	if !strings.Contains(string(parsed.Params), `"url":"`+workerURL+`"`) {
		t.Errorf("the thread's scriptParsed does not name %s as the host's scripts are named: %.300s", workerURL, parsed.Raw)
	}
	if m := a.CallIn(two, "Debugger.setBreakpointByUrl", map[string]any{"url": workerURL, "lineNumber": poolWorkLine}); m.Error != nil {
		t.Fatalf("setBreakpointByUrl: %s", m.Raw)
	} else if !strings.Contains(string(m.Result), `"lineNumber":`+strconv.Itoa(poolWorkLine)) {
		t.Errorf("the breakpoint did not resolve in the thread's script: %s", m.Raw)
	}
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "work(2)"})
	paused := a.ExpectAnyEvent("Debugger.paused", nil)
	if paused.SessionID != two || !strings.Contains(string(paused.Params), `"hitBreakpoints":["`) {
		t.Fatalf("paused %.400s, want thread 2's session %s on its breakpoint", paused.Raw, two)
	}

	// Thread 2 is paused; the main thread and thread 3 run.
	start := time.Now()
	getPong(t, port)
	t.Logf("HTTP answered during thread 2's pause in %v", time.Since(start))
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "work(3)"})
	a.ExpectAnyEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(m) == "work done 300" })
	if v, _ := a.EvaluateIn(three, "1 + 1", false); string(v) != "2" {
		t.Errorf("thread 3 evaluated 1 + 1 as %s during thread 2's pause", v)
	}
	for _, m := range a.All() {
		if m.Method == "Runtime.consoleAPICalled" && consoleText(m) == "work done 200" {
			t.Fatalf("thread 2 ran past its breakpoint while paused")
		}
		if m.Method == "Debugger.paused" && m.SessionID != two {
			t.Errorf("a session other than thread 2's paused: %.300s", m.Raw)
		}
	}
	if m := a.CallIn(two, "Debugger.resume", nil); m.Error != nil {
		t.Fatalf("resume: %s", m.Raw)
	}
	a.ExpectAnyEvent("Debugger.resumed", func(m cdptest.Msg) bool { return m.SessionID == two })
	a.ExpectAnyEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(m) == "work done 200" })

	// The object table's rule holds in a thread's session: a page's
	// objectId is refused by the worker, never sent to the thread.
	if m := a.CallIn(three, "Runtime.getProperties", map[string]any{"objectId": "iw:1:1"}); m.Error == nil ||
		!strings.Contains(m.Error.Message, "client page") || m.SessionID != three {
		t.Errorf("a page's objectId in a thread's session: %s, want the worker's refusal in that session", m.Raw)
	}

	// The pages' column answers nothing in a thread's session: a client
	// script's id ("c<n>", which the window's own session routes to the
	// page) reaches the thread, which knows no such script.
	if m := a.CallIn(three, "Debugger.getScriptSource", map[string]any{"scriptId": "c1"}); m.Error == nil ||
		!strings.Contains(m.Error.Message, "No script for id") || m.SessionID != three {
		t.Errorf("a client script id in a thread's session: %s, want the thread's own answer", m.Raw)
	}

	// Thread 4 exits: detached in both windows. A later thread is attached
	// in both.
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "stopThread(4)"})
	for i, c := range windows {
		c.ExpectAnyEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool {
			return strings.Contains(string(m.Params), `"sessionId":"`+sessions[i][4]+`"`)
		})
	}
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "startThread()"})
	for i, c := range windows {
		late := c.ExpectAttached()
		if id := c.ThreadIDIn(late.SessionID); id != 5 {
			t.Errorf("window %d: the later thread's session runs in thread %d, want 5", i, id)
		}
	}

	// Each thread's messages arrived in that thread's sessions only: the
	// main thread's console saw none of theirs.
	for i, c := range windows {
		for _, m := range c.Events("Runtime.consoleAPICalled") {
			if text := consoleText(m); strings.HasPrefix(text, "thread says ") && m.SessionID == "" {
				t.Errorf("window %d: a thread's message in the main session: %.200s", i, m.Raw)
			}
		}
	}
}
