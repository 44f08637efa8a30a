package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// `run` exits with the host's exit code, 128+signal when the host was
// killed, and leaves no process behind.
func TestRunExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		want   int
	}{
		{"zero", "console.log('pid ' + process.pid);", 0},
		{"three", "console.log('pid ' + process.pid); process.exitCode = 3;", 3},
		{"signal", "console.log('pid ' + process.pid); process.kill(process.pid, 'SIGTERM');", 128 + 15},
		{"throw", "console.log('pid ' + process.pid); throw new Error('boom');", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, script := writeScript(t, tc.script)
			w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
			pid := w.nodePID()
			if got := w.wait(); got != tc.want {
				t.Fatalf("exit code %d, want %d", got, tc.want)
			}
			proctest.AssertGone(t, pid)
			if strings.Contains(w.stderr.String(), "Debugger listening on") {
				t.Errorf("Node's private inspector banner leaked to the user:\n%s", w.stderr)
			}
		})
	}
}

const waitingScript = `
process.on('SIGINT', () => { console.log('got SIGINT'); process.exit(42); });
console.log('pid ' + process.pid);
setInterval(() => {}, 1000);
`

// SIGINT reaches the host; the worker exits with the host's code.
func TestRunForwardsSignals(t *testing.T) {
	dir, script := writeScript(t, waitingScript)
	w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
	pid := w.nodePID()
	w.addr()
	w.cmd.Process.Signal(syscall.SIGINT)
	if got := w.wait(); got != 42 {
		t.Fatalf("exit code %d, want the host's 42", got)
	}
	if !strings.Contains(w.stdout.String(), "got SIGINT") {
		t.Fatalf("the host never saw SIGINT; stdout:\n%s", w.stdout)
	}
	proctest.AssertGone(t, pid)
}

// When the script finishes with a window attached, the worker closes the
// Node sessions (Node would otherwise wait for the debugger to disconnect),
// tells the window why, and exits with the host's code.
func TestRunClosesSessionsWhenTheScriptEnds(t *testing.T) {
	dir, script := writeScript(t, `
console.log('pid ' + process.pid);
globalThis.finish = () => { setTimeout(() => { console.log('bye'); clearInterval(timer); process.exitCode = 5; }, 10); return 'ok'; };
const timer = setInterval(() => {}, 1000);
`)
	w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
	pid := w.nodePID()
	addr := w.addr()
	c := cdptest.Dial(t, "A", pageURL(t, addr), nil)
	c.MustCall("Runtime.enable", nil)
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "finish()"})
	err := c.ExpectClosed()
	var ce websocket.CloseError
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "exited with code 5") {
		t.Fatalf("window closed with %v, want a reason naming exit code 5", err)
	}
	if got := w.wait(); got != 5 {
		t.Fatalf("exit code %d, want 5", got)
	}
	proctest.AssertGone(t, pid)
}

// pageURL reads the combined target's WebSocket URL from /json/list.
func pageURL(t testing.TB, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []struct {
		Title, URL, WebSocketDebuggerURL string
	}
	// The combined target is first; each connected page follows as a
	// target of its own (cdpserver/pagetarget.go).
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list) == 0 {
		t.Fatalf("/json/list: %v %v", list, err)
	}
	return list[0].WebSocketDebuggerURL
}

// Non-loopback listening is refused before anything starts.
func TestRunRefusesNonLoopback(t *testing.T) {
	dir, script := writeScript(t, "console.log('pid ' + process.pid); setInterval(() => {}, 1000);")
	for _, host := range []string{"0.0.0.0", "::", "192.0.2.10"} {
		w := startCmd(t, dir, "run", "--host", host, "--port", "0", "--", "node", script)
		if got := w.wait(); got != 1 {
			t.Fatalf("--host %s: exit %d, want 1", host, got)
		}
		if !strings.Contains(w.stderr.String(), "non-loopback") || strings.Contains(w.stdout.String(), "pid ") {
			t.Fatalf("--host %s: stderr %q, stdout %q", host, w.stderr, w.stdout)
		}
	}
}

// Usage errors and node's own start failures are explained.
func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	w := startCmd(t, dir, "run", "--port", "0")
	if got := w.wait(); got != 2 || !strings.Contains(w.stderr.String(), "inspector-worker run -- node app.js") {
		t.Fatalf("no command: exit %d, stderr %q", got, w.stderr)
	}
	w = startCmd(t, dir, "run", "--port", "0", "--", "node", "--no-such-flag-xyz", "x.js")
	if got := w.wait(); got == 0 || !strings.Contains(w.stderr.String(), "no-such-flag-xyz") {
		t.Fatalf("bad node flag: exit %d, stderr %q", got, w.stderr)
	}
	w = startCmd(t, dir, "run", "--port", "0", "--", "/nonexistent/node", "x.js")
	if got := w.wait(); got != 1 || !strings.Contains(w.stderr.String(), "not found") {
		t.Fatalf("missing node: exit %d, stderr %q", got, w.stderr)
	}
	w = startCmd(t, dir, "frobnicate")
	if got := w.wait(); got != 2 {
		t.Fatalf("unknown command: exit %d", got)
	}
	for _, bad := range [][]string{{"--max-windows", "0"}, {"--max-clients", "-1"}, {"--idle-timeout", "0s"}} {
		w = startCmd(t, dir, append(append([]string{"run", "--port", "0"}, bad...), "--", "node", "x.js")...)
		if got := w.wait(); got != 2 || !strings.Contains(w.stderr.String(), bad[0]+" "+bad[1]+": give") {
			t.Fatalf("%v: exit %d, stderr %q", bad, got, w.stderr)
		}
	}
}

// Without --port the worker takes 9229, or says it fell back.
func TestRunDefaultPortFallback(t *testing.T) {
	// Hold 9229 so the fallback path runs whatever else uses the machine.
	ln, err := net.Listen("tcp", "127.0.0.1:9229")
	if err == nil {
		defer ln.Close()
	}
	dir, script := writeScript(t, waitingScript)
	w := startCmd(t, dir, "run", "--", "node", script)
	w.nodePID()
	addr := w.addr()
	if addr == "127.0.0.1:9229" || !strings.Contains(w.stderr.String(), "port 9229 is in use") {
		t.Fatalf("listening on %s; stderr:\n%s", addr, w.stderr)
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	if got := w.wait(); got != 42 && got != 128+15 {
		t.Fatalf("exit %d after SIGTERM", got)
	}
}

// `--brk` holds the host until a window lets it run.
func TestRunBrk(t *testing.T) {
	dir, script := writeScript(t, "console.log('pid ' + process.pid); console.log('started');")
	w := startCmd(t, dir, "run", "--brk", "--port", "0", "--", "node", script)
	addr := w.addr()
	if strings.Contains(w.stdout.String(), "started") {
		t.Fatal("the host ran before a debugger attached")
	}
	c := cdptest.Dial(t, "A", pageURL(t, addr), nil)
	c.MustCall("Runtime.enable", nil)
	c.MustCall("Debugger.enable", nil)
	releaseUntilPaused(t, c)
	c.ExpectEvent("Debugger.paused", nil)
	// The script ends right after the resume: Node's answer must still
	// reach the window (cdpserver's hostFinishDrain).
	if m := c.Call("Debugger.resume", nil); m.Error != nil {
		t.Fatalf("Debugger.resume: %s", m.Raw)
	}
	if got := w.wait(); got != 0 {
		t.Fatalf("exit %d", got)
	}
	if !strings.Contains(w.stdout.String(), "started") {
		t.Fatalf("stdout %q", w.stdout)
	}
}

// releaseUntilPaused sends Runtime.runIfWaitingForDebugger until the
// --inspect-brk pause arrives. Node 20 drops the first one about 1 time in
// 150 and the host then never starts; the worker re-sends only on its own
// watcher session (not with --brk, where the window releases the host), so
// the test re-sends like a user clicking again would. A re-send once the
// script runs, or while it is paused on its first line, is a no-op (checked
// with Node 20).
func releaseUntilPaused(t *testing.T, c *cdptest.Client) {
	t.Helper()
	retry := 100 * time.Millisecond
	deadline := time.Now().Add(cdptest.Timeout)
	for sent := 1; ; sent++ {
		c.MustCall("Runtime.runIfWaitingForDebugger", nil)
		for wait := time.Now().Add(retry); time.Now().Before(wait); time.Sleep(10 * time.Millisecond) {
			if len(c.Events("Debugger.paused")) > 0 {
				if sent > 1 {
					t.Logf("Debugger.paused came after %d Runtime.runIfWaitingForDebugger", sent)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Debugger.paused after %d Runtime.runIfWaitingForDebugger", sent)
		}
		retry = min(2*retry, 3*time.Second)
	}
}

// The demo runs from the binary alone and shows its console in a window.
func TestDemo(t *testing.T) {
	w := startCmd(t, t.TempDir(), "demo", "--port", "0")
	addr := w.addr()
	w.waitFor(w.stderr, regexp.QuoteMeta("open in Chrome: devtools://devtools/bundled/devtools_app.html?ws="+addr+"/devtools/page/"))
	c := cdptest.Dial(t, "A", pageURL(t, addr), nil)
	c.MustCall("Runtime.enable", nil)
	c.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "order #") })
	m := c.MustCall("Runtime.evaluate", map[string]any{"expression": "total({items: [{price: 2, qty: 3}]})"})
	if !strings.Contains(string(m.Result), `"value":6`) {
		t.Fatalf("evaluate in the demo: %s", m.Raw)
	}

	// The demo page: its URL on stderr after the DevTools URL; opened in a
	// browser, it is a second context in the same window and logs objects.
	page := w.waitFor(w.stderr, `open the demo page in a browser: (http://127\.0\.0\.1:\d+/)`)
	if i, j := strings.Index(w.stderr.String(), "open in Chrome:"), strings.Index(w.stderr.String(), page); i < 0 || j < i {
		t.Fatalf("the page URL is not printed after the DevTools URL:\n%s", w.stderr)
	}
	// Replayed after Runtime.enable's answer or live, depending on when
	// the demo served its page: anywhere among the messages.
	c.ExpectAnyEvent("Log.entryAdded", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `observe(\"demo-page\") {\"url\":\"`+page)
	})
	openPage(t, page)
	ctx := c.ExpectEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `"id":-`) })
	if !strings.Contains(string(ctx.Params), `"name":"Demo shop"`) {
		t.Fatalf("demo page context %s", ctx.Params)
	}
	for _, want := range []string{"page: loaded; the cart is", "orders from the host"} {
		m := c.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool {
			return isClientConsole(m) && strings.Contains(firstArg(t, m), want)
		})
		var p struct {
			Args []struct{ Type, ClassName string } `json:"args"`
		}
		json.Unmarshal(m.Params, &p)
		if len(p.Args) != 2 || p.Args[1].Type != "object" {
			t.Fatalf("page message %q does not log an object: %s", want, m.Params)
		}
	}
	w.cmd.Process.Signal(syscall.SIGINT)
	if got := w.wait(); got != 0 {
		t.Fatalf("demo exit %d after Ctrl-C", got)
	}
	if !strings.Contains(w.stdout.String(), "demo host stopping on SIGINT") {
		t.Fatalf("demo stdout: %s", w.stdout)
	}
}

// `serve` attaches to a node the user started, and stops when it goes.
func TestServe(t *testing.T) {
	dir, script := writeScript(t, waitingScript)
	node := startCmdRaw(t, dir, "node", "--inspect=127.0.0.1:0", script)
	hostport := node.waitFor(node.stderr, `Debugger listening on ws://(127\.0\.0\.1:\d+)/`)
	w := startCmd(t, dir, "serve", "--host-inspector", hostport, "--port", "0")
	addr := w.addr()
	c := cdptest.Dial(t, "A", pageURL(t, addr), nil)
	m := c.MustCall("Runtime.evaluate", map[string]any{"expression": "process.pid"})
	if !strings.Contains(string(m.Result), fmt.Sprint(node.cmd.Process.Pid)) {
		t.Fatalf("evaluated in the wrong process: %s", m.Raw)
	}
	node.cmd.Process.Signal(syscall.SIGKILL)
	c.ExpectClosed()
	if got := w.wait(); got != 0 {
		t.Fatalf("serve exit %d after the host died", got)
	}
	// Bad addresses are refused with a reason.
	for _, bad := range []string{"0.0.0.0:9229", "example.com:9229", "http://127.0.0.1:9229/x"} {
		w := startCmd(t, dir, "serve", "--host-inspector", bad, "--port", "0")
		if got := w.wait(); got != 1 || w.stderr.String() == "" {
			t.Fatalf("--host-inspector %s: exit %d, stderr %q", bad, got, w.stderr)
		}
	}
}

// startCmdRaw starts any command as a workerProc (for a host node).
func startCmdRaw(t *testing.T, dir, name string, args ...string) *workerProc {
	saved := workerBin
	workerBin = name
	defer func() { workerBin = saved }()
	return startCmd(t, dir, args...)
}

var _ = io.Discard

// The worker's own preload never shows in the window's Sources.
func TestPreloadIsHiddenFromSources(t *testing.T) {
	dir, script := writeScript(t, waitingScript)
	w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
	w.nodePID()
	c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
	c.MustCall("Debugger.enable", nil)
	c.ExpectEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool { return strings.HasSuffix(jsonField(m.Params, "url"), "/host.js") })
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "typeof globalThis.inspectorWorker.observe"})
	for _, m := range c.Events("Debugger.scriptParsed") {
		// The script's own URL: its stackTrace may name the preload's code
		// (what ran when Node answered Debugger.enable), which is fine.
		if strings.Contains(jsonField(m.Params, "url"), "inspector-worker-preload") {
			t.Fatalf("the preload reached Sources: %s", m.Params)
		}
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	w.wait()
}
