package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// watchApp is the host of the watch tests, version v. Lines 2 and 3 (0-based)
// are where the tests set breakpoints; with call, the host calls work() once
// it runs, so a breakpoint there pauses it.
func watchApp(v string, call bool) string {
	trigger := "setInterval(() => {}, 1000);"
	if call {
		trigger = "setTimeout(() => { console.log('calling work " + v + "'); work(1); console.log('after work " + v + "'); }, 200); " + trigger
	}
	return "console.log('pid ' + process.pid + ' " + v + "');\n" +
		"function work(n) {\n" +
		"  const a = n + 1;\n" +
		"  return a * 2;\n" +
		"}\n" +
		// Referenced, so V8 keeps work's code: a breakpoint in a function
		// nothing refers to binds to the next top-level statement instead.
		"globalThis.work = work; process.on('SIGINT', () => { console.log('got SIGINT'); process.exit(42); });\n" +
		trigger + "\n" +
		"console.log('ready " + v + "');\n"
}

// ready waits until the host of version v has run its last line (its SIGINT
// handler is installed: a SIGINT before that kills it with 130).
func (w *workerProc) ready(v string) {
	w.t.Helper()
	w.waitFor(w.stdout, `ready `+regexp.QuoteMeta(v)+`\n`)
}

// writeApp replaces app.js the way an editor's save does: write a new file
// and rename it over the old one.
func writeApp(t testing.TB, dir, body string) {
	t.Helper()
	tmp := filepath.Join(dir, ".app.js.tmp")
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "app.js")); err != nil {
		t.Fatal(err)
	}
}

// startWatch starts `run --watch` on app.js (version v1, no call) in a new
// directory and returns the worker, the directory and the first host's pid.
func startWatch(t *testing.T, body string, args ...string) (*workerProc, string, int) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.js"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startCmd(t, dir, append(append([]string{"run", "--watch", "--port", "0"}, args...), "--", "node", "app.js")...)
	t.Cleanup(func() {
		if strings.Contains(w.stderr.String(), "DATA RACE") {
			t.Errorf("the worker reported a data race")
		}
	})
	pid := w.pidOf("v1")
	return w, dir, pid
}

// pidOf waits for the host of version v to print its pid.
func (w *workerProc) pidOf(v string) int {
	w.t.Helper()
	pid, _ := strconv.Atoi(w.waitFor(w.stdout, `pid (\d+) `+regexp.QuoteMeta(v)+`\n`))
	return pid
}

func consoleText(m cdptest.Msg) string {
	var p struct {
		Args []struct {
			Value any `json:"value"`
		} `json:"args"`
	}
	_ = json.Unmarshal(m.Params, &p)
	var parts []string
	for _, a := range p.Args {
		parts = append(parts, fmt.Sprint(a.Value))
	}
	return strings.Join(parts, " ")
}

func consoleSays(s string) func(cdptest.Msg) bool {
	return func(m cdptest.Msg) bool { return strings.Contains(consoleText(m), s) }
}

func logSays(level, s string) func(cdptest.Msg) bool {
	return func(m cdptest.Msg) bool {
		var p struct {
			Entry struct{ Level, Text string } `json:"entry"`
		}
		_ = json.Unmarshal(m.Params, &p)
		return (level == "" || p.Entry.Level == level) && strings.Contains(p.Entry.Text, s)
	}
}

func hitBreakpoints(t testing.TB, m cdptest.Msg) []string {
	var p struct {
		HitBreakpoints []string `json:"hitBreakpoints"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatal(err)
	}
	return p.HitBreakpoints
}

// pausedLine is the line of the top frame of a Debugger.paused.
func pausedLine(m cdptest.Msg) int {
	var p struct {
		CallFrames []struct {
			Location struct{ LineNumber int } `json:"location"`
		} `json:"callFrames"`
	}
	json.Unmarshal(m.Params, &p)
	if len(p.CallFrames) == 0 {
		return -1
	}
	return p.CallFrames[0].Location.LineNumber
}

// appScriptID waits for app.js's scriptParsed (after the cursor) and
// returns its script id.
func appScriptID(c *cdptest.Client) string {
	m := c.ExpectEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool {
		return strings.HasSuffix(string(jsonField(m.Params, "url")), "/app.js")
	})
	return jsonField(m.Params, "scriptId")
}

func jsonField(raw json.RawMessage, name string) string {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	s, _ := m[name].(string)
	return s
}

// The first acceptance item: a window with Runtime and Debugger
// enabled and breakpoints set stays connected across an edit of app.js; it
// sees the old context go, the new one and the new app.js arrive, the new
// process's console; both breakpoints (by URL, and by location in the old
// script) pause the new process with the ids the window was given; resume
// works; the target id is the same; the old node is gone.
func TestWatchWindowSurvivesRestart(t *testing.T) {
	w, dir, pid1 := startWatch(t, watchApp("v1", false))
	addr := w.addr()
	url := pageURL(t, addr)
	c := cdptest.Dial(t, "A", url, nil)
	c.MustCall("Runtime.enable", nil)
	oldCtx := c.ExpectEvent("Runtime.executionContextCreated", nil)
	c.MustCall("Debugger.enable", nil)
	oldScript := appScriptID(c)
	fileURL := "file://" + filepath.Join(dir, "app.js")
	byURL := c.MustCall("Debugger.setBreakpointByUrl", map[string]any{"url": fileURL, "lineNumber": 2})
	bp1 := jsonField(byURL.Result, "breakpointId")
	byLoc := c.MustCall("Debugger.setBreakpoint", map[string]any{"location": map[string]any{"scriptId": oldScript, "lineNumber": 3}})
	bp2 := jsonField(byLoc.Result, "breakpointId")
	if bp1 == "" || bp2 == "" {
		t.Fatalf("breakpoint ids %q %q", bp1, bp2)
	}

	// A request Node is still working on when the host restarts is answered
	// with an error naming the restart.
	inFlight := c.Send("Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})

	writeApp(t, dir, watchApp("v2", true))
	if m := c.ExpectResponse(inFlight); m.Error == nil || !strings.Contains(m.Error.Message, "restarting: app.js changed") {
		t.Errorf("request in flight during the restart: %s, want an error naming the restart", m.Raw)
	}
	c.ExpectEvent("Log.entryAdded", logSays("", "app.js changed; restarted the host"))
	pid2 := w.pidOf("v2")
	if pid2 == pid1 {
		t.Fatalf("the host was not restarted (pid %d)", pid1)
	}
	var oldCtxID struct {
		Context struct{ ID int } `json:"context"`
	}
	json.Unmarshal(oldCtx.Params, &oldCtxID)
	_ = oldCtxID
	c.ExpectAnyEvent("Runtime.executionContextsCleared", nil)
	c.ExpectEvent("Runtime.executionContextCreated", nil)
	// V8 numbers scripts per process: the new app.js may well get the old
	// id, which is why the worker forgets the old host's script ids.
	appScriptID(c)
	c.ExpectAnyEvent("Runtime.consoleAPICalled", consoleSays("v2"))
	p1 := c.ExpectEvent("Debugger.paused", nil)
	if hit := hitBreakpoints(t, p1); len(hit) != 1 || hit[0] != bp1 || pausedLine(p1) != 2 {
		t.Errorf("first pause on line %d hit %q, want line 2 and the window's by-URL id %q", pausedLine(p1), hit, bp1)
	}
	c.MustCall("Debugger.resume", nil)
	p2 := c.ExpectEvent("Debugger.paused", nil)
	if hit := hitBreakpoints(t, p2); len(hit) != 1 || hit[0] != bp2 || pausedLine(p2) != 3 {
		t.Errorf("second pause on line %d hit %q, want line 3 and the window's by-location id %q", pausedLine(p2), hit, bp2)
	}
	c.MustCall("Debugger.resume", nil)
	c.ExpectAnyEvent("Runtime.consoleAPICalled", consoleSays("after work v2"))
	// Removing the by-location breakpoint by the id the window knows works.
	c.MustCall("Debugger.removeBreakpoint", map[string]any{"breakpointId": bp2})
	if got := pageURL(t, addr); got != url {
		t.Errorf("/json/list changed across the restart: %s, was %s", got, url)
	}
	proctest.AssertGone(t, pid1)
	w.ready("v2")
	w.cmd.Process.Signal(syscall.SIGINT)
	if got := w.wait(); got != 42 {
		t.Errorf("exit code %d, want the host's 42", got)
	}
	proctest.AssertGone(t, pid2)
}

// A burst of saves longer than a second (a checkout, a build) is one
// restart, as the README says, not one on a half-written tree and another
// after it (the debounce's upper bound was 1 s).
func TestWatchLongBurstIsOneRestart(t *testing.T) {
	w, dir, _ := startWatch(t, watchApp("v1", false))
	w.pidOf("v1")
	last, gaps := time.Now(), 0
	for i := 0; i < 40; i++ {
		writeApp(t, dir, watchApp(fmt.Sprintf("b%d", i), false))
		// A stall past the quiet period legitimately ends a burst: counted.
		if now := time.Now(); now.Sub(last) > watchQuiet {
			gaps++
		}
		last = time.Now()
		time.Sleep(45 * time.Millisecond) // 40 saves over ~1.8 s
	}
	w.pidOf("b39")
	time.Sleep(2 * time.Second) // past any further debounce (a hang bound, not a speed check)
	n := strings.Count(w.stderr.String(), "changed; restarting the host")
	if n < 1 || n > 1+gaps {
		t.Fatalf("%d restarts for 40 saves (%d stalls > %v), want 1..%d:\n%s", n, gaps, watchQuiet, 1+gaps, w.stderr)
	}
	t.Logf("40 saves (%d stalls) → %d restart(s)", gaps, n)
	w.cmd.Process.Signal(syscall.SIGINT)
	w.wait()
}

// A burst of saves makes at most two restarts (debounce), and the last
// content runs.
func TestWatchDebouncesBursts(t *testing.T) {
	w, dir, _ := startWatch(t, watchApp("v1", false))
	c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
	c.MustCall("Runtime.enable", nil)
	start := time.Now()
	last, gaps := start, 0
	for i := 0; i < 20; i++ {
		writeApp(t, dir, watchApp(fmt.Sprintf("b%d", i), false))
		// A shared machine can stall the test past the quiet period between
		// two saves: that legitimately ends a burst, so it is counted.
		if now := time.Now(); now.Sub(last) > watchQuiet {
			gaps++
		}
		last = time.Now()
		if i < 19 {
			time.Sleep(45 * time.Millisecond) // 20 saves within one second
		}
	}
	spread := time.Since(start)
	w.pidOf("b19")
	// Any further restart would come within the debounce window after the
	// last save; wait well past it (a hang bound, not a speed assertion).
	time.Sleep(3 * time.Second)
	n := strings.Count(w.stderr.String(), "changed; restarting the host")
	// 20 saves within one second with no stall: at most 2 restarts (one at
	// watchMaxWait, one for the rest). Stretched by the machine: one more
	// per watchMaxWait of spread and per stall longer than watchQuiet.
	allowed := max(2, 1+gaps+int((spread+watchMaxWait-1)/watchMaxWait))
	if n < 1 || n > allowed {
		t.Fatalf("%d restarts for 20 saves over %v (%d stalls > %v), want 1..%d:\n%s", n, spread, gaps, watchQuiet, allowed, w.stderr)
	}
	t.Logf("20 saves over %v (%d stalls) → %d restart(s), allowed %d", spread.Round(time.Millisecond), gaps, n, allowed)
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "1+1"})
	w.ready("b19")
	w.cmd.Process.Signal(syscall.SIGINT)
	if got := w.wait(); got != 42 {
		t.Errorf("exit code %d, want 42", got)
	}
}

// rssKB reads a process's resident set size.
func rssKB(t testing.TB, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

func nodeChildren(pid int) []int {
	var out []int
	for _, k := range proctest.Children(pid) {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", k)); strings.TrimSpace(string(comm)) == "node" {
			out = append(out, k)
		}
	}
	return out
}

// 50 save/restart cycles with a window open: one node at the end, every
// earlier one gone, no orphan, the window still answered; the worker's RSS is
// reported (and bounded generously).
func TestWatchManyRestarts(t *testing.T) {
	cycles := 50
	if s := os.Getenv("IW_WATCH_CYCLES"); s != "" {
		cycles, _ = strconv.Atoi(s)
	}
	w, dir, pid := startWatch(t, watchApp("v1", false))
	c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
	c.MustCall("Runtime.enable", nil)
	c.MustCall("Debugger.enable", nil)
	c.MustCall("Debugger.setBreakpointByUrl", map[string]any{"url": "file://" + filepath.Join(dir, "app.js"), "lineNumber": 2})
	pids := []int{pid}
	var rss1 int
	for i := 1; i <= cycles; i++ {
		v := fmt.Sprintf("c%d", i)
		writeApp(t, dir, watchApp(v, false))
		pids = append(pids, w.pidOf(v))
		c.ExpectAnyEvent("Runtime.consoleAPICalled", consoleSays(v))
		if i == 1 {
			rss1 = rssKB(t, w.cmd.Process.Pid)
		}
	}
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "1+1"})
	rss50 := rssKB(t, w.cmd.Process.Pid)
	t.Logf("worker VmRSS: %d kB after cycle 1, %d kB after cycle %d", rss1, rss50, cycles)
	if rss50 > 2*rss1 {
		t.Errorf("worker RSS grew from %d kB to %d kB over %d restarts", rss1, rss50, cycles)
	}
	for _, p := range pids[:len(pids)-1] {
		proctest.AssertGone(t, p)
	}
	if kids := nodeChildren(w.cmd.Process.Pid); len(kids) != 1 || kids[0] != pids[len(pids)-1] {
		t.Errorf("node children of the worker: %v, want only %d", kids, pids[len(pids)-1])
	}
	// An orphan of this run would be reparented to the test (a subreaper).
	for _, o := range nodeChildren(os.Getpid()) {
		for _, p := range pids {
			if o == p {
				t.Errorf("host %d was orphaned", o)
			}
		}
	}
	w.ready(fmt.Sprintf("c%d", cycles))
	w.cmd.Process.Signal(syscall.SIGINT)
	if got := w.wait(); got != 42 {
		t.Errorf("exit code %d, want 42; restarts: %d", got, strings.Count(w.stderr.String(), "restarting the host"))
	}
}

// A syntax error leaves the worker and the window up with the error in the
// Console; fixing it brings the host back with the breakpoint bound.
func TestWatchSyntaxErrorRecovers(t *testing.T) {
	w, dir, _ := startWatch(t, watchApp("v1", false))
	c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
	c.MustCall("Runtime.enable", nil)
	c.MustCall("Debugger.enable", nil)
	bp := jsonField(c.MustCall("Debugger.setBreakpointByUrl",
		map[string]any{"url": "file://" + filepath.Join(dir, "app.js"), "lineNumber": 2}).Result, "breakpointId")

	writeApp(t, dir, "console.log('pid ' + process.pid + ' broken');\nthis is not javascript\n")
	c.ExpectEvent("Log.entryAdded", logSays("error", "SyntaxError"))
	w.waitFor(w.stderr, `the host exited with code 1; save a watched file`)
	// While the host is down a request is answered with the reason.
	if m := c.Call("Runtime.evaluate", map[string]any{"expression": "1"}); m.Error == nil ||
		!strings.Contains(m.Error.Message, "not running") {
		t.Errorf("evaluate while the host is down: %s, want an error saying it is not running", m.Raw)
	}

	writeApp(t, dir, watchApp("v3", true))
	c.ExpectEvent("Log.entryAdded", logSays("", "restarted the host"))
	w.pidOf("v3")
	p := c.ExpectEvent("Debugger.paused", nil)
	if hit := hitBreakpoints(t, p); len(hit) != 1 || hit[0] != bp {
		t.Errorf("pause after the fix hit %q, want %q", hit, bp)
	}
	c.MustCall("Debugger.resume", nil)
	c.ExpectAnyEvent("Runtime.consoleAPICalled", consoleSays("after work v3"))
}

// Without any window: the host restarts on a change, and SIGINT stops the
// worker and the host with the host's exit code.
func TestWatchWithoutWindow(t *testing.T) {
	w, dir, pid1 := startWatch(t, watchApp("v1", false))
	writeApp(t, dir, watchApp("v2", false))
	pid2 := w.pidOf("v2")
	proctest.AssertGone(t, pid1)
	w.ready("v2")
	// A change to a file that is not code (a log beside the script) does
	// not restart the host.
	os.WriteFile(filepath.Join(dir, "app.log"), []byte("noise\n"), 0o644)
	// The next code change is the event to await: had app.log counted, a
	// restart would have come before it, or its restart would name app.log
	// or "more changes".
	writeApp(t, dir, watchApp("v3", false))
	pid3 := w.pidOf("v3")
	proctest.AssertGone(t, pid2)
	w.ready("v3")
	if out := w.stderr.String(); strings.Count(out, "restarting the host") != 2 ||
		strings.Contains(out, "app.log") || strings.Contains(out, "more changes") {
		t.Errorf("want 2 restarts, for app.js only (app.log must not count):\n%s", out)
	}
	w.cmd.Process.Signal(syscall.SIGINT)
	if got := w.wait(); got != 42 {
		t.Fatalf("exit code %d, want the host's 42", got)
	}
	if !strings.Contains(w.stdout.String(), "got SIGINT") {
		t.Errorf("the host never saw SIGINT; stdout:\n%s", w.stdout)
	}
	proctest.AssertGone(t, pid3)
}

// A browser page stays connected to the worker across host restarts (its
// realm is not the host's): its console keeps reaching the window, under the
// same context, which the restart does not destroy.
func TestWatchClientPageStaysConnected(t *testing.T) {
	dir, script := writeScript(t, pageHost)
	t.Setenv("PAGE_JS", `let n = 0; setInterval(() => console.log('tick ' + (++n)), 100);`)
	w := startCmd(t, dir, "run", "--watch", "--port", "0", "--", "node", script)
	page := w.waitFor(w.stdout, `page (http://127\.0\.0\.1:\d+/)`)
	c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
	c.MustCall("Page.enable", nil)
	c.MustCall("Runtime.enable", nil)
	openPage(t, page)
	before := c.ExpectEvent("Runtime.consoleAPICalled", isClientConsole)
	ctx := jsonNumber(before.Params, "executionContextId")
	c.MustCall("Debugger.enable", nil)
	c.ExpectAnyEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool { return strings.HasPrefix(jsonField(m.Params, "scriptId"), "c") })

	body, err := os.ReadFile(filepath.Join(dir, script))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, script), append(body, "\n// edited\n"...), 0o644)
	cleared := c.ExpectEvent("Runtime.executionContextsCleared", nil)
	_ = cleared
	// The reset cleared the page's context in the frontend: it is announced
	// again, with its scripts, before anything new.
	c.ExpectEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool {
		var p struct {
			Context struct{ ID float64 } `json:"context"`
		}
		json.Unmarshal(m.Params, &p)
		return p.Context.ID == ctx
	})
	c.ExpectEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool { return strings.HasPrefix(jsonField(m.Params, "scriptId"), "c") })
	c.ExpectEvent("Log.entryAdded", logSays("", "restarted the host"))
	seen := 0
	for seen < 5 {
		m := c.ExpectEvent("Runtime.consoleAPICalled", isClientConsole)
		if got := jsonNumber(m.Params, "executionContextId"); got != ctx {
			t.Fatalf("page console moved from context %v to %v across the restart", ctx, got)
		}
		seen++
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	w.wait()
}

func jsonNumber(raw json.RawMessage, name string) float64 {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	f, _ := m[name].(float64)
	return f
}

// A host whose script ends on its own, with a window attached, exits (Node
// does not wait for the debugger to disconnect), the window stays open and
// is told, and the next save starts the host again.
func TestWatchHostThatEndsWaitsForAChange(t *testing.T) {
	w, dir, pid1 := startWatch(t, "console.log('pid ' + process.pid + ' v1');\n"+
		"const timer = setInterval(() => {}, 1000);\n"+
		"globalThis.end = () => { setTimeout(() => { clearInterval(timer); process.exitCode = 3; }, 10); return 'ok'; };\n")
	c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
	c.MustCall("Runtime.enable", nil)
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "end()"})
	c.ExpectEvent("Log.entryAdded", logSays("error", "the host exited with code 3"))
	proctest.AssertGone(t, pid1)
	writeApp(t, dir, watchApp("v2", false))
	c.ExpectEvent("Log.entryAdded", logSays("", "restarted the host (the previous one was not running)"))
	c.ExpectAnyEvent("Runtime.consoleAPICalled", consoleSays("v2"))
	w.ready("v2")
	w.cmd.Process.Signal(syscall.SIGINT)
	if got := w.wait(); got != 42 {
		t.Errorf("exit code %d, want 42", got)
	}
}

// The old host's unfinished fetches are closed in the Network log when it is
// restarted (its host channel ends; the journal fails what was open).
func TestWatchClosesOldHostFetches(t *testing.T) {
	w, dir, _ := startWatch(t, `
const http = require('http');
const srv = http.createServer(() => {}); // never answers
srv.listen(0, '127.0.0.1', () => {
  console.log('pid ' + process.pid + ' v1');
  fetch('http://127.0.0.1:' + srv.address().port + '/hang').catch(() => {});
});
`)
	c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
	c.MustCall("Network.enable", nil)
	sent := c.ExpectAnyEvent("Network.requestWillBeSent", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "/hang") })
	id := jsonField(sent.Params, "requestId")
	writeApp(t, dir, watchApp("v2", false))
	failed := c.ExpectAnyEvent("Network.loadingFailed", func(m cdptest.Msg) bool { return jsonField(m.Params, "requestId") == id })
	t.Logf("the old host's open fetch: %s", jsonField(failed.Params, "errorText"))
	w.ready("v2")
	w.cmd.Process.Signal(syscall.SIGINT)
	if got := w.wait(); got != 42 {
		t.Errorf("exit code %d, want 42", got)
	}
}
