package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// e2eModules is e2e/node_modules, where `npm ci` in e2e/ installs Express
// and Vite from the registry (scripts/e2e.sh runs it). Without them the
// test fails under CI=true and skips with a visible line elsewhere.
func e2eModules(t *testing.T, pkgs ...string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "e2e", "node_modules")
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, p, "package.json")); err != nil {
			msg := "no " + p + " in " + dir
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s: CI must install it (cd e2e && npm ci)", msg)
			}
			t.Skipf("SKIPPED: %s; run `cd e2e && npm ci` to run this test", msg)
		}
	}
	return dir
}

// appDir makes a project directory: the files, and node_modules linked to
// e2e's (a real install from the registry).
func appDir(t *testing.T, files map[string]string, pkgs ...string) string {
	t.Helper()
	mods := e2eModules(t, pkgs...)
	dir := t.TempDir()
	if err := os.Symlink(mods, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// expressApp logs from its route (line 4, 0-based) and prints its pid and
// URL once listening.
const expressApp = `const express = require('express');
const app = express();
app.get('/hello', (req, res) => {
  const who = 'route';
  console.log('route hit ' + who);
  res.send('hello ' + who);
});
const s = app.listen(0, '127.0.0.1', () => console.log('app pid ' + process.pid + ' url http://127.0.0.1:' + s.address().port + '/hello'));
`

// evalString evaluates expr in the window's default (host) context.
func evalString(t *testing.T, c *cdptest.Client, expr string) string {
	t.Helper()
	m := c.MustCall("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("Runtime.evaluate %s: %s", expr, m.Raw)
	}
	s, ok := r.Result.Value.(string)
	if !ok {
		t.Fatalf("Runtime.evaluate %s is not a string: %s", expr, m.Raw)
	}
	return s
}

// `run -- npm run dev` whose script starts an Express app: the window's
// host is the app, not npm (process.argv[1] is the app's script), its
// console and a breakpoint by URL in its route work, and Ctrl-C (SIGINT to
// the worker) leaves no process and no temp file.
func TestRunNpmRunDev(t *testing.T) {
	proctest.Node(t)
	dir := appDir(t, map[string]string{
		"package.json": `{"name":"npm-run-dev","private":true,"scripts":{"dev":"node server.js"}}`,
		"server.js":    expressApp,
	}, "express")
	tmp := t.TempDir()
	w := startCmdEnv(t, dir, []string{"TMPDIR=" + tmp}, "run", "--port", "0", "--", "npm", "run", "dev")
	pid, _ := strconv.Atoi(w.waitFor(w.stdout, `app pid (\d+)`))
	url := w.waitFor(w.stdout, `url (http://\S+)`)
	w.waitFor(w.stderr, `the host is pid `+strconv.Itoa(pid)+` \(\S+ \S+server\.js\)`)
	c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
	c.MustCall("Runtime.enable", nil)
	c.MustCall("Debugger.enable", nil)
	if got := evalString(t, c, "process.argv[1]"); got != filepath.Join(dir, "server.js") {
		t.Fatalf("the host's process.argv[1] is %q, want the app's %s (npm must not be the host)", got, filepath.Join(dir, "server.js"))
	}
	if got := evalString(t, c, "String(process.pid)"); got != strconv.Itoa(pid) {
		t.Fatalf("the host's pid is %s, want the app's %d", got, pid)
	}
	// The host channel reached the app: observe() queues, the worker acks.
	if got := evalString(t, c, "String(inspectorWorker.observe('anycmd', 1))"); got != "true" {
		t.Fatalf("observe() in the app returned %s: the host channel did not reach it", got)
	}
	for deadline := time.Now().Add(cdptest.Timeout); evalString(t, c, "String(inspectorWorker.stats().acked > 0)") != "true"; {
		if time.Now().After(deadline) {
			t.Fatal("the worker acked nothing on the app's host channel")
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.MustCall("Debugger.setBreakpointByUrl", map[string]any{"url": "file://" + filepath.Join(dir, "server.js"), "lineNumber": 4})
	type reply struct {
		body string
		err  error
	}
	got := make(chan reply, 1)
	go func() {
		resp, err := http.Get(url)
		if err != nil {
			got <- reply{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- reply{string(b), err}
	}()
	paused := c.ExpectEvent("Debugger.paused", nil)
	if !strings.Contains(string(paused.Params), "server.js") && !strings.Contains(string(paused.Params), `"lineNumber":4`) {
		t.Errorf("paused elsewhere: %.300s", paused.Params)
	}
	c.MustCall("Debugger.resume", nil)
	c.ExpectAnyEvent("Runtime.consoleAPICalled", consoleSays("route hit route"))
	if r := <-got; r.err != nil || r.body != "hello route" {
		t.Fatalf("the route answered %q, %v", r.body, r.err)
	}
	npm := proctest.Children(w.cmd.Process.Pid)
	w.cmd.Process.Signal(syscall.SIGINT)
	since := time.Now()
	code := w.wait()
	t.Logf("exit code after SIGINT: %d", code)
	took := proctest.AssertGoneWithin(t, since, treeGoneWithin, append(npm, pid)...)
	t.Logf("npm %v and the app %d gone %v after the worker's SIGINT", npm, pid, took)
	checkNoTempFiles(t, tmp)
	if strings.Contains(w.stderr.String(), "Debugger") {
		t.Errorf("Node's inspector lines reached the terminal:\n%s", w.stderr)
	}
}

// A command that starts no Node.js process says so and exits with its code.
func TestRunAsIsWithoutNode(t *testing.T) {
	tmp := t.TempDir()
	w := startCmdEnv(t, t.TempDir(), []string{"TMPDIR=" + tmp}, "run", "--port", "0", "--", "sh", "-c", "exit 3")
	if got := w.wait(); got != 3 {
		t.Fatalf("exit code %d, want the command's 3\n%s", got, w.stderr)
	}
	if !strings.Contains(w.stderr.String(), "started no Node.js process") {
		t.Fatalf("stderr does not say that no Node.js process started:\n%s", w.stderr)
	}
	checkNoTempFiles(t, tmp)
}

// vitePage is a Vite project whose page has no snippet: --inject (the
// default) brings it into the window.
var vitePage = map[string]string{
	"index.html": `<!doctype html><html><head><title>vite page</title></head><body>` +
		`<script type="module">console.log('vite page ran')</script></body></html>`,
	"vite.config.mjs": `export default { clearScreen: false, logLevel: 'info', server: { host: '127.0.0.1' } };`,
}

// `run -- npx vite` and `run -- ./node_modules/.bin/vite`: Vite is the
// host (not npx), it serves, and its page joins the window with no code.
func TestRunVite(t *testing.T) {
	proctest.Node(t)
	for _, tc := range []struct {
		name string
		argv []string
	}{
		{"npx", []string{"npx", "vite"}},
		{"bin", []string{"./node_modules/.bin/vite"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := appDir(t, vitePage, "vite")
			// NO_COLOR: with CI set (as in CI) Vite colours its URL, splitting the port with escapes.
			w := startCmdEnv(t, dir, []string{"NO_COLOR=1"}, append([]string{"run", "--port", "0", "--"}, tc.argv...)...)
			page := w.waitFor(w.stdout, `(http://127\.0\.0\.1:\d+/)`)
			c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
			c.MustCall("Runtime.enable", nil)
			// Vite's shim (.bin/vite, a link to vite/bin/vite.js), not npx.
			if got := evalString(t, c, "process.argv[1]"); !strings.HasSuffix(got, "/.bin/vite") && !strings.HasSuffix(got, "/vite/bin/vite.js") {
				t.Fatalf("the host's process.argv[1] is %q, want vite's bin/vite.js", got)
			}
			openPage(t, page)
			m := c.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool {
				return isClientConsole(m) && firstArg(t, m) == "vite page ran"
			})
			t.Logf("the page's console.log arrived: %.120s", m.Params)
			w.cmd.Process.Signal(syscall.SIGINT)
			t.Logf("exit code after SIGINT: %d", w.wait())
		})
	}
}

// A known launcher (here a stand-in at nodemon's path: it starts the app
// in a child, as nodemon does) passes the host role on: the window shows
// the app, and stderr says which process is the host.
func TestRunLauncherHandsTheHostToTheApp(t *testing.T) {
	proctest.Node(t)
	dir := t.TempDir()
	files := map[string]string{
		"node_modules/nodemon/bin/nodemon.js": `const { spawn } = require('child_process');
console.log('launcher pid ' + process.pid);
const c = spawn(process.execPath, [process.argv[2]], { stdio: 'inherit' });
c.on('exit', (code) => process.exit(code));
`,
		"app.js": `console.log('app pid ' + process.pid); setInterval(() => {}, 1000);`,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := startCmd(t, dir, "run", "--port", "0", "--", "node", "node_modules/nodemon/bin/nodemon.js", "app.js")
	launcher := w.waitFor(w.stdout, `launcher pid (\d+)`)
	app := w.waitFor(w.stdout, `app pid (\d+)`)
	w.waitFor(w.stderr, `the host is pid `+app+` `)
	c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
	if got := evalString(t, c, "String(process.pid)"); got != app {
		t.Fatalf("the host is pid %s, want the app %s (the launcher is %s)", got, app, launcher)
	}
	w.cmd.Process.Signal(syscall.SIGINT)
	w.wait()
	for _, s := range []string{launcher, app} {
		pid, _ := strconv.Atoi(s)
		proctest.AssertGone(t, pid)
	}
}

// The worker and the preload skip the same package managers and launchers.
func TestPassOnListsAgree(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	src, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "client", "js", "preload.in.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)const PASS_ON = \[(.*?)\];`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no PASS_ON list in preload.in.cjs")
	}
	var js []string
	for _, q := range regexp.MustCompile(`'([^']*)'`).FindAllSubmatch(m[1], -1) {
		js = append(js, string(q[1]))
	}
	if !slices.Equal(js, passOnScripts) {
		t.Fatalf("PASS_ON in preload.in.cjs\n  %q\ndiffers from passOnScripts\n  %q", js, passOnScripts)
	}
}

// Which commands start as is.
func TestStartsAsIs(t *testing.T) {
	dir := t.TempDir()
	next := filepath.Join(dir, "node_modules", "next", "dist", "bin", "next")
	if err := os.MkdirAll(filepath.Dir(next), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(next, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	otherNode := filepath.Join(dir, "other-node")
	if err := os.Symlink(proctest.Node(t), otherNode); err != nil {
		t.Fatal(err)
	}
	shim := filepath.Join(dir, "next-shim")
	if err := os.Symlink(next, shim); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"node", "app.js"}, false},
		{[]string{"/usr/bin/node", "--trace-warnings", "app.js"}, false},
		{[]string{"nodejs", "-e", "1"}, false},
		{[]string{otherNode, "app.js"}, false},
		{[]string{"npm", "run", "dev"}, true},
		{[]string{"npx", "vite"}, true},
		{[]string{"./node_modules/.bin/vite"}, true},
		{[]string{"sh", "-c", "node app.js"}, true},
		{[]string{"node", next, "dev"}, true},
		{[]string{"node", "-r", "x", shim, "dev"}, true},
		{[]string{"node", "/usr/lib/node_modules/npm/bin/npm-cli.js", "run", "dev"}, true},
	} {
		if got := startsAsIs(tc.argv); got != tc.want {
			t.Errorf("startsAsIs(%q) = %v, want %v", tc.argv, got, tc.want)
		}
	}
}

// The host of a command run as is follows its Node children as a `node …`
// host does: they find the host taken and register as children.
func TestRunAsIsFollowsChildren(t *testing.T) {
	dir, script := writeScript(t, childrenScript)
	w := startCmdEnv(t, dir, []string{"INSPECTOR_WORKER_DEBUG=1"}, "run", "--port", "0", "--", "sh", "-c", "node "+script)
	host := w.nodePID()
	w.waitFor(w.stderr, `the host is pid `+strconv.Itoa(host)+` `)
	forked := w.waitFor(w.stdout, `child fork pid (\d+)`)
	spawned := w.waitFor(w.stdout, `child spawn pid (\d+)`)
	w.waitFor(w.stderr, `following child \S+ \S+host\.js child fork \(pid `+forked+`\)`)
	w.waitFor(w.stderr, `following child \S+ \S+host\.js child spawn \(pid `+spawned+`\)`)
	for _, f := range []string{"stop-fork", "stop-spawn", "stop-host"} {
		touch(t, dir, f)
	}
	if got := w.wait(); got != 0 {
		t.Fatalf("exit code %d, want 0", got)
	}
}

// When the host ends and the command runs on (a script's next step, a
// launcher restarting the app), its next Node process becomes the host and
// the window stays open: it evaluates in the new host and sees its console.
func TestRunAsIsHostPassesOn(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"first.js":  `console.log('first pid ' + process.pid); const fs = require('fs'); const t = setInterval(() => { if (fs.existsSync('stop-first')) { clearInterval(t); } }, 20);`,
		"second.js": `console.log('second pid ' + process.pid); const fs = require('fs'); const t = setInterval(() => { if (fs.existsSync('stop-second')) { clearInterval(t); } }, 20);`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := startCmd(t, dir, "run", "--port", "0", "--", "sh", "-c", "node first.js && node second.js")
	first := w.waitFor(w.stdout, `first pid (\d+)`)
	c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
	c.MustCall("Runtime.enable", nil)
	if got := evalString(t, c, "String(process.pid)"); got != first {
		t.Fatalf("the host is pid %s, want first.js's %s", got, first)
	}
	touch(t, dir, "stop-first")
	second := w.waitFor(w.stdout, `second pid (\d+)`)
	w.waitFor(w.stderr, `the host is pid `+second+` `)
	c.ExpectAnyEvent("Runtime.consoleAPICalled", consoleSays("second pid "+second))
	if got := evalString(t, c, "String(process.pid)"); got != second {
		t.Fatalf("after the hand-over the host is pid %s, want second.js's %s", got, second)
	}
	touch(t, dir, "stop-second")
	if got := w.wait(); got != 0 {
		t.Fatalf("exit code %d, want 0", got)
	}
}

// A SIGKILLed worker running a command as is leaves no process of the
// command and no temp file (preload, claim socket directory): the orphan
// reaper removes them.
func TestRunAsIsKilledWorkerLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	dir, script := writeScript(t, waitingScript)
	w := startCmdEnv(t, dir, []string{"TMPDIR=" + tmp}, "run", "--port", "0", "--", "sh", "-c", "node "+script)
	node := w.nodePID()
	w.waitFor(w.stderr, `the host is pid `+strconv.Itoa(node)+` `)
	sh := proctest.Children(w.cmd.Process.Pid)
	if files := tempFiles(t, tmp); len(files) != 2 {
		t.Fatalf("TMPDIR holds %v while the host runs, want its preload and the claim directory", files)
	}
	event := time.Now()
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	w.wait()
	took := proctest.AssertGoneWithin(t, event, treeGoneWithin, append(sh, node)...)
	checkNoTempFiles(t, tmp)
	t.Logf("the command %v and its node %d gone %v after the worker's SIGKILL; no temp file", sh, node, took.Round(time.Millisecond))
}
