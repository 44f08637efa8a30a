package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// chromiumPath is proctest.Chromium (one copy for every package).
func chromiumPath(t testing.TB) string { t.Helper(); return proctest.Chromium(t) }

// openPage starts headless chromium on url; it is killed (whole process
// group) at test end.
func openPage(t testing.TB, url string) {
	t.Helper()
	openClosablePage(t, url)
}

// openClosablePage is openPage, and returns a func that kills that
// chromium now (a page closed mid-request).
func openClosablePage(t testing.TB, url string) (kill func()) {
	t.Helper()
	cmd := exec.Command(chromiumPath(t), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(), url)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill = func() {
		once.Do(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		})
	}
	t.Cleanup(func() {
		kill()
		proctest.AssertGone(t, cmd.Process.Pid)
	})
	return kill
}

// pageHost serves one page that loads the worker's client bundle (through the
// preload's bootstrapSnippet) and runs pageJS.
const pageHost = `
const http = require('http');
globalThis.pauseHost = () => { setTimeout(function hostPaused() { debugger; console.log('host resumed'); }, 0); return 'armed'; };
const page = '<!doctype html><html><head><title>Test page</title>' + globalThis.inspectorWorker.bootstrapSnippet() +
  '</head><body><script src="/app.js"></script></body></html>';
globalThis.appJSRequests = 0;
globalThis.pageRequests = 0;
http.createServer((req, res) => {
  if (req.url === '/app.js') { globalThis.appJSRequests++; res.setHeader('content-type', 'text/javascript'); res.end(process.env.PAGE_JS); return; }
  if (req.url === '/') globalThis.pageRequests++;
  if (process.env.PAGE_NO_STORE) res.setHeader('cache-control', 'no-store');
  res.setHeader('content-type', 'text/html'); res.end(page);
}).listen(0, '127.0.0.1', function () { console.log('pid ' + process.pid + ' page http://127.0.0.1:' + this.address().port + '/'); });
`

func startPageHost(t testing.TB, pageJS string, flags ...string) (*workerProc, *cdptest.Client, string) {
	t.Helper()
	dir, script := writeScript(t, pageHost)
	t.Setenv("PAGE_JS", pageJS)
	w := startCmd(t, dir, append(append([]string{"run", "--port", "0"}, flags...), "--", "node", script)...)
	page := w.waitFor(w.stdout, `page (http://127\.0\.0\.1:\d+/)`)
	c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
	c.MustCall("Page.enable", nil)
	c.MustCall("Runtime.enable", nil)
	return w, c, page
}

// waitPageGlobal waits until the page's /app.js has set window[name]: it
// runs after the client in <head> has connected, so the page's context is
// there before it is (TestClientPageRuntimeRealPages failed once on that).
func waitPageGlobal(t *testing.T, c *cdptest.Client, ctxID int, name string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		m := c.MustCall("Runtime.evaluate", map[string]any{"expression": "typeof window." + name, "contextId": ctxID, "returnByValue": true})
		if strings.Contains(string(m.Result), `"value":"object"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page's app.js never set window.%s: %s", name, m.Raw)
		}
	}
}

func isClientConsole(m cdptest.Msg) bool {
	return strings.Contains(string(m.Params), `"executionContextId":-`)
}

func firstArg(t *testing.T, m cdptest.Msg) string {
	var p struct {
		Args []struct {
			Value any `json:"value"`
		} `json:"args"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || len(p.Args) == 0 {
		t.Fatalf("bad console event %s", m.Raw)
	}
	return fmt.Sprint(p.Args[0].Value)
}

// A real page in headless Chromium logs 10,000 messages; a DevTools client
// sees every one, in order, under the page's own context.
func TestClientPageTenThousandMessages(t *testing.T) {
	const n = 10000
	_, c, pageURL := startPageHost(t, fmt.Sprintf(`for (let i = 0; i < %d; i++) console.log('m ' + i);`, n))
	openPage(t, pageURL)
	ctx := c.ExpectEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `"id":-`) })
	if !strings.Contains(string(ctx.Params), `"name":"Test page"`) {
		t.Fatalf("page context %s", ctx.Params)
	}
	for i := range n {
		m := c.ExpectEvent("Runtime.consoleAPICalled", isClientConsole)
		if got, want := firstArg(t, m), fmt.Sprintf("m %d", i); got != want {
			t.Fatalf("page message %d is %q", i, got)
		}
	}
}

// Sources reads a page script from the page, which takes it from the
// browser's HTTP cache (fetch with cache: 'force-cache'): the host's server
// sees one request for app.js, the page load's, not a second one per read.
func TestClientScriptReadUsesBrowserCache(t *testing.T) {
	_, c, pageURL := startPageHost(t, `console.log('page loaded');`)
	c.MustCall("Debugger.enable", nil)
	openPage(t, pageURL)
	sp := c.ExpectEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `/app.js"`) })
	var p struct {
		ScriptID string `json:"scriptId"`
	}
	json.Unmarshal(sp.Params, &p)
	for range 2 {
		src := c.MustCall("Debugger.getScriptSource", map[string]any{"scriptId": p.ScriptID})
		if !strings.Contains(string(src.Result), "page loaded") {
			t.Fatalf("getScriptSource(%s) = %s", p.ScriptID, src.Result)
		}
	}
	hits := c.MustCall("Runtime.evaluate", map[string]any{"expression": "appJSRequests"})
	if !strings.Contains(string(hits.Result), `"value":1,`) {
		t.Fatalf("the host served app.js %s times, want 1 (the page load; reads come from the browser cache)", hits.Result)
	}
}

// Sources opens a page's "(index)": Page.getResourceContent reads the
// document from the page, out of the browser's cache; with a no-store page
// the page sends its current DOM, marked as such. Neither makes the host's
// server serve the page again. The host frame has no document.
func TestClientDocumentContent(t *testing.T) {
	for _, noStore := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-store=%v", noStore), func(t *testing.T) {
			if noStore {
				t.Setenv("PAGE_NO_STORE", "1")
			}
			w, c, pageURL := startPageHost(t, `document.body.dataset.ran = 'yes'; console.log('page loaded');`)
			openPage(t, pageURL)
			c.ExpectEvent("Runtime.consoleAPICalled", isClientConsole)
			var tree struct {
				FrameTree struct {
					Frame       struct{ ID, URL string } `json:"frame"`
					ChildFrames []struct {
						Frame struct{ ID, URL string } `json:"frame"`
					} `json:"childFrames"`
				} `json:"frameTree"`
			}
			json.Unmarshal(c.MustCall("Page.getResourceTree", nil).Result, &tree)
			if len(tree.FrameTree.ChildFrames) != 1 || tree.FrameTree.ChildFrames[0].Frame.URL != pageURL {
				t.Fatalf("resource tree %+v", tree)
			}
			m := c.MustCall("Page.getResourceContent", map[string]any{"frameId": tree.FrameTree.ChildFrames[0].Frame.ID, "url": pageURL})
			var got struct {
				Content       string `json:"content"`
				Base64Encoded bool   `json:"base64Encoded"`
			}
			json.Unmarshal(m.Result, &got)
			if got.Base64Encoded || !strings.Contains(got.Content, "<title>Test page</title>") {
				t.Fatalf("page document %s", m.Raw)
			}
			if fromDOM := strings.Contains(got.Content, "this is the page's current DOM") && strings.Contains(got.Content, `data-ran="yes"`); fromDOM != noStore {
				t.Fatalf("document read from the DOM = %v, want %v: %s", fromDOM, noStore, got.Content)
			}
			hits := c.MustCall("Runtime.evaluate", map[string]any{"expression": "pageRequests"})
			if !strings.Contains(string(hits.Result), `"value":1,`) {
				t.Fatalf("the host served the page %s times, want 1 (the browser's load)", hits.Result)
			}
			host := c.Call("Page.getResourceContent", map[string]any{"frameId": tree.FrameTree.Frame.ID, "url": tree.FrameTree.Frame.URL})
			if host.Error == nil || !strings.Contains(string(host.Raw), "the host frame has no document") {
				t.Fatalf("the host frame's content: %s", host.Raw)
			}
			w.cmd.Process.Signal(syscall.SIGTERM)
			w.wait()
		})
	}
}

// The host paused at a breakpoint does not stop the page's console, and
// Resume still works.
func TestClientConsoleFlowsWhileHostPaused(t *testing.T) {
	w, c, pageURL := startPageHost(t, `let n = 0; setInterval(() => console.log('tick ' + (++n)), 100);`)
	c.MustCall("Debugger.enable", nil)
	openPage(t, pageURL)
	c.ExpectEvent("Runtime.consoleAPICalled", isClientConsole)
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "pauseHost()"})
	c.ExpectEvent("Debugger.paused", nil)
	seen := map[string]bool{}
	for len(seen) < 5 {
		seen[firstArg(t, c.ExpectEvent("Runtime.consoleAPICalled", isClientConsole))] = true
	}
	c.MustCall("Debugger.resume", nil)
	c.ExpectEvent("Debugger.resumed", nil)
	c.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return !isClientConsole(m) && firstArg(t, m) == "host resumed" })
	w.cmd.Process.Signal(syscall.SIGTERM)
	w.wait()
}

// The host preload takes 100,000 observations without blocking the app; what
// its bounded queue drops reaches the DevTools window as a counted loss.
func TestHostObservationsDropsAreCounted(t *testing.T) {
	dir, script := writeScript(t, `
globalThis.flood = () => {
  for (let i = 0; i < 100000; i++) globalThis.inspectorWorker.observe('tick', {i});
  console.log('flood done ' + JSON.stringify(globalThis.inspectorWorker.stats()));
  setTimeout(() => globalThis.inspectorWorker.observe('after', {}), 50);
  return 'ok';
};
console.log('pid ' + process.pid);
setInterval(() => {}, 1000);
`)
	w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
	w.nodePID()
	c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
	c.MustCall("Runtime.enable", nil)
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "flood()"})
	done := c.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return strings.HasPrefix(firstArg(t, m), "flood done") })
	var stats struct{ Queued, Dropped, Sent, Acked int }
	json.Unmarshal([]byte(strings.TrimPrefix(firstArg(t, done), "flood done ")), &stats)
	if stats.Dropped == 0 || stats.Queued+stats.Dropped+stats.Sent < 100000 {
		t.Fatalf("preload stats after 100,000 observations: %+v", stats)
	}
	// Anywhere, not after "flood done": the notice comes over the host
	// channel, the console event over Node's inspector socket (through
	// Node's own I/O thread), and under load the notice can arrive first.
	m := c.ExpectAnyEvent("Log.entryAdded", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), "observations from the host were lost")
	})
	if !strings.Contains(string(m.Params), "queue overflowed") {
		t.Fatalf("loss report %s", m.Params)
	}
}

// inspectorWorker.observe in a real host: an observation made before the
// window opened (usually replayed to it; the replay bound is
// TestHostObservationsInConsole's) and a later one, live, both reach the
// window as Console info lines with the name and the data.
func TestHostObservationsShowInConsole(t *testing.T) {
	dir, script := writeScript(t, `
globalThis.inspectorWorker.observe('ready', { pid: process.pid, big: 10n });
globalThis.later = () => globalThis.inspectorWorker.observe('later', ['x']);
console.log('pid ' + process.pid);
setInterval(() => {}, 1000);
`)
	w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
	pid := w.nodePID()
	c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
	isApp := func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `observe(\"`) }
	c.MustCall("Runtime.enable", nil)
	m := c.ExpectEvent("Log.entryAdded", isApp)
	want := fmt.Sprintf(`observe(\"ready\") {\"pid\":%d,\"big\":\"10\"}`, pid)
	if !strings.Contains(string(m.Params), want) || !strings.Contains(string(m.Params), `"level":"info"`) {
		t.Fatalf("observation before the window opened: %s, want text %s", m.Params, want)
	}
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "later()"})
	m = c.ExpectEvent("Log.entryAdded", isApp)
	if !strings.Contains(string(m.Params), `observe(\"later\") [\"x\"]`) {
		t.Fatalf("live observation: %s", m.Params)
	}
}

// The embedded arrangement: an app starts the worker itself
// (client/js/embed.mjs) on its own inspector, with the host channel on fd 3;
// its observations are acknowledged by the worker.
func TestEmbeddedWorker(t *testing.T) {
	dir := t.TempDir()
	embed, _ := filepath.Abs("../../client/js/embed.mjs")
	app := fmt.Sprintf(`
import { startInspectorWorker } from %q;
const w = await startInspectorWorker({ binary: %q, port: 0 });
for (let i = 0; i < 5; i++) w.observe('hello', { i });
const snippet = w.bootstrapSnippet();
const wait = () => new Promise((r) => setTimeout(r, 50));
for (let i = 0; i < 400 && w.stats().acked < 5; i++) await wait();
console.log('pid ' + process.pid + ' stats ' + JSON.stringify(w.stats()) + ' snippet ' + snippet.includes('data-token="'));
await w.close();
`, embed, workerBin)
	if err := os.WriteFile(dir+"/app.mjs", []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startCmdRaw(t, dir, "node", "app.mjs")
	line := w.waitFor(w.stdout, `stats (.*)`)
	if !strings.Contains(line, `"acked":5`) || !strings.HasSuffix(line, "snippet true") {
		t.Fatalf("embedded worker: %s", line)
	}
	if got := w.wait(); got != 0 {
		t.Fatalf("app exit %d", got)
	}
}
