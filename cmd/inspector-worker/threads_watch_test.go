package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// watchPoolApp is the host of the --watch thread test, version v: two
// threads of worker.js (poolWorkerScript); work(i) asks the i-th to run its
// WORK-LINE.
func watchPoolApp(v string) string {
	return `const path = require('path');
const { Worker } = require('worker_threads');
console.log('pid ' + process.pid + ' ` + v + `');
const pool = [0, 1].map(() => new Worker(path.join(__dirname, 'worker.js')));
for (const w of pool) w.on('message', (r) => console.log('work done ' + r + ' ` + v + `'));
globalThis.work = (i) => { pool[i].postMessage('work'); return pool[i].threadId; };
setInterval(() => {}, 1000);
console.log('ready ` + v + `');
`
}

// releaseThread sends runIfWaitingForDebugger in the thread's session until
// the thread ran its first line (Node drops the first one now and then).
func releaseThread(t *testing.T, c *cdptest.Client, session string) {
	t.Helper()
	deadline := time.Now().Add(cdptest.Timeout)
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		c.CallIn(session, "Runtime.runIfWaitingForDebugger", nil)
		time.Sleep(wait)
		if v, _ := c.EvaluateIn(session, "globalThis.threadStarted === true", false); string(v) == "true" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the thread of session %s did not run within %v of runIfWaitingForDebugger", session, cdptest.Timeout)
		}
	}
}

func detachedSession(m cdptest.Msg) string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.SessionID
}

// Under run --watch, a restart detaches the old host's threads and
// attaches the new host's in every open window; a window that asked to
// wait holds the new threads; and a breakpoint the window set by URL in
// an old thread's session is set in the new threads before they run, with
// the id the window knows. The window setting it again itself (as the
// stock frontend does in every new thread) is answered with that id, not
// refused as a duplicate.
func TestWatchThreadsReattachWithBreakpoints(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"app.js": watchPoolApp("v1"), "worker.js": poolWorkerScript} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	workerURL := "file://" + filepath.Join(dir, "worker.js")
	w := startCmd(t, dir, "run", "--watch", "--port", "0", "--", "node", "app.js")
	w.ready("v1")
	a := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
	b := cdptest.Dial(t, "B", pageURL(t, w.addr()), nil)
	a.MustCall("Runtime.enable", nil)
	a.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	b.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	old := map[*cdptest.Client][]string{}
	for _, c := range []*cdptest.Client{a, b} {
		for range 2 {
			old[c] = append(old[c], c.ExpectAttached().SessionID)
		}
	}
	a.CallIn(old[a][0], "Debugger.enable", nil)
	set := a.CallIn(old[a][0], "Debugger.setBreakpointByUrl", map[string]any{"url": workerURL, "lineNumber": poolWorkLine})
	bp := jsonField(set.Result, "breakpointId")
	if set.Error != nil || bp == "" {
		t.Fatalf("setBreakpointByUrl in a thread: %s", set.Raw)
	}

	writeApp(t, dir, watchPoolApp("v2"))
	w.pidOf("v2")
	fresh := map[*cdptest.Client][]cdptest.Attached{}
	for _, c := range []*cdptest.Client{a, b} {
		gone := map[string]bool{}
		for range 2 {
			gone[detachedSession(c.ExpectAnyEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool {
				s := detachedSession(m)
				return !gone[s] && (s == old[c][0] || s == old[c][1])
			}))] = true
		}
		for range 2 {
			fresh[c] = append(fresh[c], c.ExpectAttached())
		}
	}
	for _, n := range fresh[a] {
		if !n.WaitingForDebugger {
			t.Errorf("A asked to wait, and the new host's thread is not said to wait: %+v", n)
		}
		if v, _ := a.EvaluateIn(n.SessionID, "globalThis.threadStarted === true", false); string(v) != "false" {
			t.Fatalf("a new thread ran before A released it (threadStarted %s)", v)
		}
	}
	for _, n := range fresh[a] {
		releaseThread(t, a, n.SessionID)
	}
	w.ready("v2")

	// The replayed breakpoint pauses each new thread, with the window's id.
	sessions := map[string]bool{fresh[a][0].SessionID: true, fresh[a][1].SessionID: true}
	pauseIn := func(i int) string {
		t.Helper()
		a.MustCall("Runtime.evaluate", map[string]any{"expression": "work(" + string(rune('0'+i)) + ")"})
		p := a.ExpectEvent("Debugger.paused", nil)
		if !sessions[p.SessionID] || !strings.Contains(string(p.Params), `"hitBreakpoints":[`+mustJSON(bp)+`]`) {
			t.Fatalf("paused %.400s, want a new thread's session on breakpoint %s", p.Raw, bp)
		}
		if m := a.CallIn(p.SessionID, "Debugger.resume", nil); m.Error != nil {
			t.Fatalf("resume: %s", m.Raw)
		}
		return p.SessionID
	}
	first := pauseIn(0)
	if second := pauseIn(1); second == first {
		t.Errorf("both pauses in session %s, want one per thread", first)
	}

	// The window sets the same breakpoint in the new threads itself.
	for _, n := range fresh[a] {
		a.CallIn(n.SessionID, "Debugger.enable", nil)
		m := a.CallIn(n.SessionID, "Debugger.setBreakpointByUrl", map[string]any{"url": workerURL, "lineNumber": poolWorkLine})
		if m.Error != nil || jsonField(m.Result, "breakpointId") != bp {
			t.Errorf("the window's own set of the replayed breakpoint: %s, want id %s", m.Raw, bp)
		}
	}
	pauseIn(0)

	// Removed in the threads' sessions, it is carried no more: the next
	// host's threads run through the line.
	for _, n := range fresh[a] {
		if m := a.CallIn(n.SessionID, "Debugger.removeBreakpoint", map[string]any{"breakpointId": bp}); m.Error != nil {
			t.Fatalf("removeBreakpoint: %s", m.Raw)
		}
	}
	writeApp(t, dir, watchPoolApp("v3"))
	w.pidOf("v3")
	for range 2 {
		n := a.ExpectAttached()
		a.CallIn(n.SessionID, "Debugger.enable", nil)
		releaseThread(t, a, n.SessionID)
	}
	w.ready("v3")
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "work(0)"})
	a.ExpectAnyEvent("Runtime.consoleAPICalled", consoleSays("v3"))
	w.waitFor(w.stdout, `work done \d+ v3`)
	if n := len(a.Events("Debugger.paused")); n != 3 {
		t.Errorf("%d pauses, want the 3 before the removal", n)
	}
	for _, m := range b.All() {
		if m.Method == "Debugger.paused" {
			t.Errorf("window B, which set no breakpoint, paused: %.300s", m.Raw)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
