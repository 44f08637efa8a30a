package main

import (
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// descendants lists pid's process tree below it, read from /proc.
func descendants(pid int) []int {
	var all []int
	for _, c := range proctest.Children(pid) {
		all = append(all, c)
		all = append(all, descendants(c)...)
	}
	return all
}

// endTree sends SIGINT to the worker (Ctrl-C) and asserts that every
// process of the command's tree, taken just before, is gone soon after.
func endTree(t *testing.T, w *workerProc) {
	t.Helper()
	tree := descendants(w.cmd.Process.Pid)
	since := time.Now()
	_ = w.cmd.Process.Signal(syscall.SIGINT)
	code := w.wait()
	took := proctest.AssertGoneWithin(t, since, treeGoneWithin, tree...)
	t.Logf("exit code %d after SIGINT; the command's %d processes gone %v after it", code, len(tree), took.Round(time.Millisecond))
}

// tsxApp is TypeScript that only tsx can run (annotations, an interface).
// It greets once a file named "go" appears (after the test has set its
// breakpoint), then runs until the test ends it.
const tsxApp = `const fs = require('fs');
const greet = (who: string): string => { return 'hello ' + who; };
function hello(who: Who): void {
  const text: string = greet(who.name);
  console.log('tsx says ' + text);
}
interface Who { name: string }
console.log('app pid ' + process.pid);
const timer = setInterval(() => { if (fs.existsSync('go')) { clearInterval(timer); hello({ name: 'typescript' }); setInterval(() => {}, 1000); } }, 20);
`

// `run -- npx tsx app.ts` (tsx from the registry; its CLI runs the app in
// a child node with its loader): the app is the host, not tsx's CLI. The
// window evaluates in it (process.argv names app.ts), its console arrives,
// and a breakpoint by URL in app.ts pauses.
func TestRunTsx(t *testing.T) {
	proctest.Node(t)
	for _, tc := range []struct {
		name string
		argv []string
	}{
		{"npx", []string{"npx", "tsx", "app.ts"}},
		{"node cli", []string{"node", "node_modules/tsx/dist/cli.mjs", "app.ts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := appDir(t, map[string]string{"app.ts": tsxApp}, "tsx")
			w := startCmdEnv(t, dir, []string{"NO_COLOR=1"}, append([]string{"run", "--port", "0", "--"}, tc.argv...)...)
			app := w.waitFor(w.stdout, `app pid (\d+)`)
			w.waitFor(w.stderr, `the host is pid `+app+` `)
			c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
			c.MustCall("Runtime.enable", nil)
			c.MustCall("Debugger.enable", nil)
			if got := evalString(t, c, "String(process.pid)"); got != app {
				t.Fatalf("the host is pid %s, want the app's %s (tsx's CLI must pass the host on)", got, app)
			}
			if got := evalString(t, c, "JSON.stringify(process.argv)"); !strings.Contains(got, filepath.Join(dir, "app.ts")) {
				t.Fatalf("the host's process.argv is %s, want it to name %s", got, filepath.Join(dir, "app.ts"))
			}
			url := "file://" + filepath.Join(dir, "app.ts")
			// tsx's esbuild output is minified onto one line (with an inline
			// source map, which DevTools uses to show app.ts): the breakpoint
			// is set where the frontend would set it, by line and column.
			script, line, col := generatedPos(t, c, url, `console.log("tsx says "`)
			c.MustCall("Debugger.setBreakpointByUrl", map[string]any{"url": url, "lineNumber": line, "columnNumber": col})
			touch(t, dir, "go")
			paused := c.ExpectEvent("Debugger.paused", nil)
			if got := pausedLine(paused); got != line || !strings.Contains(string(paused.Params), `"location":{"scriptId":"`+script+`","lineNumber":`+strconv.Itoa(line)+`,"columnNumber":`+strconv.Itoa(col)+`}`) {
				t.Errorf("paused at line %d, want app.ts's (script %s) %d:%d: %.300s", got, script, line, col, paused.Params)
			}
			if got := evalOnTop(t, c, paused, "text"); got != "hello typescript" {
				t.Errorf("the paused frame's text is %q, want %q", got, "hello typescript")
			}
			c.MustCall("Debugger.resume", nil)
			c.ExpectAnyEvent("Runtime.consoleAPICalled", consoleSays("tsx says hello typescript"))
			endTree(t, w)
		})
	}
}

// generatedPos is the id of the script at url and the 0-based line and
// column of needle in it as V8 runs it (after tsx's transform).
func generatedPos(t *testing.T, c *cdptest.Client, url, needle string) (script string, line, col int) {
	t.Helper()
	parsed := c.ExpectAnyEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"url":"`+url+`"`)
	})
	var p struct {
		ScriptID string `json:"scriptId"`
	}
	_ = json.Unmarshal(parsed.Params, &p)
	m := c.MustCall("Debugger.getScriptSource", map[string]any{"scriptId": p.ScriptID})
	var src struct {
		ScriptSource string `json:"scriptSource"`
	}
	if err := json.Unmarshal(m.Result, &src); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(src.ScriptSource, "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, needle) })
	if i < 0 {
		t.Fatalf("no %q in %s as V8 runs it:\n%s", needle, url, src.ScriptSource)
		return "", 0, 0
	}
	return p.ScriptID, i, strings.Index(lines[i], needle)
}

// evalOnTop evaluates expr in the top call frame of a Debugger.paused.
func evalOnTop(t *testing.T, c *cdptest.Client, paused cdptest.Msg, expr string) string {
	t.Helper()
	var p struct {
		CallFrames []struct {
			CallFrameID string `json:"callFrameId"`
		} `json:"callFrames"`
	}
	if err := json.Unmarshal(paused.Params, &p); err != nil || len(p.CallFrames) == 0 {
		t.Fatalf("no call frame in %s", paused.Raw)
	}
	m := c.MustCall("Debugger.evaluateOnCallFrame", map[string]any{"callFrameId": p.CallFrames[0].CallFrameID, "expression": expr, "returnByValue": true})
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	_ = json.Unmarshal(m.Result, &r)
	s, _ := r.Result.Value.(string)
	return s
}

// nextApp is a Next.js app-router project: a page and a route handler that
// logs on the server. Its config is Next's default: pages compressed when
// the request accepts it (in `next dev` too); --inject asks for a browser's
// navigation uncompressed (docs/agent-note.md "Host channel and
// embedding"), so the page joins with no setting.
var nextApp = map[string]string{
	"app/layout.js": `export default function RootLayout({ children }) {
  return <html><head><title>next page</title></head><body>{children}</body></html>;
}
`,
	"app/page.js": `export default function Page() {
  return <h1>next page</h1>;
}
`,
	"app/api/hello/route.js": `export async function GET() {
  console.log('route handler says hello');
  return Response.json({ hello: 'next' });
}
`,
}

// nextWithin bounds Next's first compile of a route or page (Turbopack,
// measured 1–9 s on this 2-core machine under load): a hang detector.
const nextWithin = 3 * time.Minute

// nextDir makes a Next project under e2e/ (removed at the end): Turbopack
// resolves `next` only inside its root, the directory of the nearest lock
// file, so the project cannot use a node_modules symlinked from elsewhere
// as appDir's projects do; under e2e/ it finds e2e's real install.
func nextDir(t *testing.T, files map[string]string) string {
	t.Helper()
	mods := e2eModules(t, "next", "react", "react-dom")
	dir, err := os.MkdirTemp(filepath.Dir(mods), "next-app-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// freePort is a loopback port that was free a moment ago (Next takes its
// port as a number; with 0 it does not print the one it got).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// getWithin GETs url, allowing for Next's compile on the first request.
func getWithin(t *testing.T, url string) string {
	t.Helper()
	cl := http.Client{Timeout: nextWithin}
	resp, err := cl.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%.500s", url, resp.StatusCode, err, b)
	}
	return string(b)
}

// rawGet GETs url with headers as given (no transparent gzip): the body as
// sent and its Content-Encoding.
func rawGet(t *testing.T, url string, headers map[string]string) (body, encoding string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	cl := http.Client{Timeout: nextWithin, Transport: &http.Transport{DisableCompression: true}}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b), resp.Header.Get("Content-Encoding")
}

// `run -- npm run dev` whose script is `next dev`, and `next dev` and `npx
// next dev` as typed (Next from the registry: npm, sh and Next's launcher
// pass the host on to the Next server process it starts; the bare form
// finds `next` on PATH, node_modules/.bin as npm scripts put it there). The
// window's host is the Next server; a route handler's console.log arrives
// in the window; a page served by `next dev` with Next's default config
// (compressed pages) and no code of ours joins the window (--inject);
// Ctrl-C leaves no process.
func TestRunNextDev(t *testing.T) {
	proctest.Node(t)
	bin := filepath.Join(e2eModules(t, "next"), ".bin")
	for _, tc := range []struct {
		name string
		argv func(port string) []string
		env  []string
	}{
		{"npm run dev", func(string) []string { return []string{"npm", "run", "dev"} }, nil},
		{"next dev", func(port string) []string { return []string{"next", "dev", "--port", port, "--hostname", "127.0.0.1"} },
			[]string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}},
		// Offline: npx finds e2e's next, and must never fetch it.
		{"npx next dev", func(port string) []string {
			return []string{"npx", "next", "dev", "--port", port, "--hostname", "127.0.0.1"}
		}, []string{"npm_config_offline=true"}},
	} {
		t.Run(tc.name, func(t *testing.T) { runNextDev(t, tc.argv, tc.env) })
	}
}

// runNextDev is one TestRunNextDev: argv(port) started by run in a Next
// project whose "dev" script is `next dev` on that port.
func runNextDev(t *testing.T, argv func(port string) []string, env []string) {
	port := freePort(t)
	files := maps.Clone(nextApp)
	files["package.json"] = `{"name":"next-dev","private":true,"scripts":{"dev":"next dev --port ` + port + ` --hostname 127.0.0.1"}}`
	dir := nextDir(t, files)
	tmp := t.TempDir()
	start := time.Now()
	env = append([]string{"TMPDIR=" + tmp, "NO_COLOR=1", "NEXT_TELEMETRY_DISABLED=1"}, env...)
	w := startCmdEnv(t, dir, env, append([]string{"run", "--port", "0", "--"}, argv(port)...)...)
	host := w.waitFor(w.stderr, `the host is pid (\d+) \(\S+ \S+/next/dist/server/lib/start-server\.js\)`)
	w.waitFor(w.stdout, `Ready in`)
	t.Logf("next dev ready %v after start", time.Since(start).Round(time.Millisecond))
	c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
	c.SetTimeout(nextWithin)
	c.MustCall("Runtime.enable", nil)
	if got := evalString(t, c, "String(process.pid)"); got != host {
		t.Fatalf("the window's host is pid %s, want the Next server %s", got, host)
	}
	base := "http://127.0.0.1:" + port
	start = time.Now()
	if got := getWithin(t, base+"/api/hello"); got != `{"hello":"next"}` {
		t.Fatalf("/api/hello answered %q", got)
	}
	m := c.ExpectAnyEvent("Runtime.consoleAPICalled", consoleSays("route handler says hello"))
	if isClientConsole(m) {
		t.Fatalf("the route handler's line arrived in a page's context: %s", m.Params)
	}
	t.Logf("/api/hello and its console line %v after the request (first compile)", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	openPage(t, base+"/")
	ctx := c.ExpectEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"id":-`) && strings.Contains(string(m.Params), base)
	})
	var p struct {
		Context struct {
			ID int `json:"id"`
		} `json:"context"`
	}
	_ = json.Unmarshal(ctx.Params, &p)
	r := c.MustCall("Runtime.evaluate", map[string]any{"expression": "document.querySelector('h1').textContent", "contextId": p.Context.ID, "returnByValue": true})
	if !strings.Contains(string(r.Result), `"value":"next page"`) {
		t.Fatalf("the joined page's h1 is %s, want Next's page", r.Result)
	}
	t.Logf("the page joined %v after it was opened (first compile)", time.Since(start).Round(time.Millisecond))
	// Not a navigation (a page's fetch): Next's default compression, as
	// without the worker; a navigation: uncompressed, with the tag.
	zipped, enc := rawGet(t, base+"/", map[string]string{"Accept-Encoding": "gzip", "Accept": "*/*", "Sec-Fetch-Dest": "empty"})
	if enc != "gzip" {
		t.Errorf("a fetch of / with Accept-Encoding gzip came back with Content-Encoding %q, want Next's gzip", enc)
	}
	page, enc := rawGet(t, base+"/", map[string]string{"Accept-Encoding": "gzip, deflate, br", "Accept": "text/html", "Sec-Fetch-Dest": "document"})
	if enc != "" || !strings.Contains(page, `data-endpoint="ws://`+w.addr()+`/client"`) {
		t.Errorf("a navigation to / came back with Content-Encoding %q, want none and the tag: %.300s", enc, page)
	}
	t.Logf("Next's page: %d bytes gzip to a fetch, %d bytes uncompressed with the tag to a navigation", len(zipped), len(page))
	if hint := regexp.MustCompile(`(?m)^.*Content-Encoding.*$`).FindString(w.stderr.String()); hint != "" {
		t.Errorf("the worker printed a compression hint for Next's default config: %s", hint)
	}
	endTree(t, w)
	checkNoTempFiles(t, tmp)
}
