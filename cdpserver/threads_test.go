package cdpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// threadHostScript starts two worker threads that stay until told to exit;
// startThread() starts one more, stopThread(i) ends the i-th. Each thread
// keeps threadsWaiting alive so it never exits on its own.
const threadHostScript = `
const { Worker, isMainThread, parentPort } = require('worker_threads');
if (!isMainThread) {
  globalThis.threadStarted = true;
  parentPort.on('message', (m) => { if (m === 'exit') process.exit(0); });
} else {
  const threads = [];
  let online = 0;
  const start = () => {
    const w = new Worker(__filename);
    threads.push(w);
    w.on('online', () => { if (++online === 2) process.stdout.write('host ready\n'); });
    return w.threadId;
  };
  globalThis.startThread = start;
  globalThis.stopThread = (i) => { threads[i].postMessage('exit'); return i; };
  start(); start();
  setInterval(() => {}, 1 << 30);
}
`

// A window that asks for auto-attach (flat sessions) gets each of the
// host's worker threads as a child target: requests with its sessionId run
// in that thread, a thread that exits is detached (a request waiting on it
// answered once), one started later is attached, and an unknown sessionId
// is refused once.
func TestThreadTargets(t *testing.T) {
	w := startWorker(t, threadHostScript, Options{})
	c := w.dial("A")
	c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	byThread := map[int]cdptest.Attached{}
	for range 2 {
		a := c.ExpectAttached()
		byThread[c.ThreadIDIn(a.SessionID)] = a
	}
	if _, ok := byThread[1]; !ok {
		t.Fatalf("no session runs in thread 1: %v", byThread)
	}
	if _, ok := byThread[2]; !ok {
		t.Fatalf("no session runs in thread 2: %v", byThread)
	}
	t.Logf("thread 1: %+v", byThread[1])

	// What the frontend sends a worker target beyond Node's domains is
	// answered by the table's threads' column, in the thread's session.
	for _, method := range []string{"Target.setAutoAttach", "Log.enable", "Network.setAttachDebugStack"} {
		if m := c.CallIn(byThread[2].SessionID, method, map[string]any{}); m.Error != nil || m.SessionID != byThread[2].SessionID {
			t.Errorf("%s in a thread's session: %s", method, m.Raw)
		}
	}

	// A request that never finishes in thread 1, then thread 1 exits.
	one := byThread[1].SessionID
	waiting := c.SendTo(one, "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "stopThread(0)"})
	c.ExpectEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool {
		var p struct {
			SessionID string `json:"sessionId"`
		}
		return json.Unmarshal(m.Params, &p) == nil && p.SessionID == one
	})
	if m := c.ExpectResponse(waiting); m.Error == nil || m.SessionID != one {
		t.Errorf("the request waiting on the exited thread was answered %s, want an error in its session", m.Raw)
	}

	// A thread started later is attached.
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "startThread()"})
	late := c.ExpectAttached()
	if got := c.ThreadIDIn(late.SessionID); got != 3 {
		t.Errorf("the late thread's session runs in thread %d, want 3", got)
	}

	// Requests in a gone or unknown session are refused, each exactly once.
	gone := c.SendTo(one, "Runtime.evaluate", map[string]any{"expression": "1"})
	unknown := c.SendTo("no-such-session", "Runtime.evaluate", map[string]any{"expression": "1"})
	for _, id := range []int64{gone, unknown} {
		if m := c.ExpectResponse(id); m.Error == nil || m.Error.Code != -32001 {
			t.Errorf("request %d: %s, want -32001", id, m.Raw)
		}
	}
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "1"}) // everything before it is in
	answers := map[int64]int{}
	for _, m := range c.All() {
		if m.ID != nil {
			answers[*m.ID]++
		}
	}
	for id, n := range answers {
		if n != 1 {
			t.Errorf("request %d answered %d times", id, n)
		}
	}
}

// Each window has its own Node session and so its own thread sessions: two
// windows see both threads, and a thread that exits is detached in both.
// A window that never asked for auto-attach sees none.
func TestThreadTargetsTwoWindows(t *testing.T) {
	w := startWorker(t, threadHostScript, Options{})
	windows := []*cdptest.Client{w.dial("A"), w.dial("B")}
	plain := w.dial("C")
	sessions := make([]map[int]string, len(windows)) // threadId → sessionId, per window
	for i, c := range windows {
		c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
		sessions[i] = map[int]string{}
		for range 2 {
			a := c.ExpectAttached()
			sessions[i][c.ThreadIDIn(a.SessionID)] = a.SessionID
		}
		if sessions[i][1] == "" || sessions[i][2] == "" {
			t.Fatalf("window %d: sessions by thread %v, want threads 1 and 2", i, sessions[i])
		}
	}
	windows[0].MustCall("Runtime.evaluate", map[string]any{"expression": "stopThread(0)"})
	for i, c := range windows {
		c.ExpectEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool {
			var p struct {
				SessionID string `json:"sessionId"`
			}
			return json.Unmarshal(m.Params, &p) == nil && p.SessionID == sessions[i][1]
		})
	}
	plain.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
	for _, m := range plain.All() {
		if m.Method == "Target.attachedToTarget" || m.SessionID != "" {
			t.Errorf("a window without auto-attach got %.200s", m.Raw)
		}
	}
}

// nestedThreadScript starts a thread (depth 1) that starts one of its own
// (depth 2). toOuter('log-inner') makes the inner one log,
// toOuter('stop-inner') makes it exit.
const nestedThreadScript = `
const { Worker, isMainThread, workerData, parentPort, threadId } = require('worker_threads');
const depth = isMainThread ? 0 : workerData;
if (depth > 0) globalThis.threadStarted = true;
if (depth === 2) {
  parentPort.on('message', (m) => {
    if (m === 'exit') process.exit(0);
    if (m === 'log') console.log('nested says ' + threadId);
  });
  parentPort.postMessage('online');
}
if (depth === 1) {
  const inner = new Worker(__filename, { workerData: 2 });
  inner.on('message', () => parentPort.postMessage('online'));
  parentPort.on('message', (m) => inner.postMessage(m === 'stop-inner' ? 'exit' : 'log'));
}
if (depth === 0) {
  const outer = new Worker(__filename, { workerData: 1 });
  outer.on('message', () => process.stdout.write('host ready\n'));
  globalThis.toOuter = (m) => { outer.postMessage(m); return m; };
  setInterval(() => {}, 1 << 30);
}
`

// A thread's own threads are attached to the window like the host's own,
// as siblings: Node 20 reports every thread, whatever started it, to the
// main thread's NodeWorker agent (a thread's session has no NodeWorker
// domain: -32601), so there is no parent session to nest them in. The
// nested thread gets its own session, where requests run in it and its
// console arrives; its exit detaches it; Target.setAutoAttach in the outer
// thread's session attaches nothing more.
func TestThreadTargetsNested(t *testing.T) {
	w := startWorker(t, nestedThreadScript, Options{})
	c := w.dial("A")
	c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	byThread := map[int]cdptest.Attached{}
	for range 2 {
		ev := c.ExpectEvent("Target.attachedToTarget", nil)
		if ev.SessionID != "" {
			t.Fatalf("a thread attached inside session %q, want the window's own: %s", ev.SessionID, ev.Raw)
		}
		var a cdptest.Attached
		if err := json.Unmarshal(ev.Params, &a); err != nil || a.SessionID == "" {
			t.Fatalf("attachedToTarget: %s", ev.Raw)
		}
		byThread[c.ThreadIDIn(a.SessionID)] = a
	}
	outer, inner := byThread[1], byThread[2]
	if outer.SessionID == "" || inner.SessionID == "" {
		t.Fatalf("sessions by threadId %v, want threads 1 (outer) and 2 (started by 1)", byThread)
	}
	if m := c.CallIn(outer.SessionID, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}); m.Error != nil || m.SessionID != outer.SessionID {
		t.Fatalf("Target.setAutoAttach in the thread's session: %s", m.Raw)
	}
	c.CallIn(inner.SessionID, "Runtime.enable", nil)
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "toOuter('log-inner')"})
	said := c.ExpectAnyEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "nested says 2") })
	if said.SessionID != inner.SessionID {
		t.Errorf("the nested thread's message arrived in session %q, want %q", said.SessionID, inner.SessionID)
	}
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "toOuter('stop-inner')"})
	c.ExpectEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"sessionId":"`+inner.SessionID+`"`)
	})
	if v, _ := c.EvaluateIn(outer.SessionID, "1 + 1", false); string(v) != "2" {
		t.Errorf("the outer thread evaluated 1 + 1 as %s", v)
	}
	for _, m := range c.Events("Target.attachedToTarget") {
		if m.SessionID != "" || len(c.Events("Target.attachedToTarget")) != 2 {
			t.Errorf("more attached than the two threads: %.300s", m.Raw)
		}
	}
}
