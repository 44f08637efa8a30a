//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// What the page client costs a page, measured as a user pays it: a real
// worker (`run`) whose host serves the pages, a DevTools window attached
// through the worker with Runtime enabled (object arguments get handles),
// and Chromium's renderer CPU alone (the browser tree's fixed costs dilute
// a ratio). Three headless Chromiums, one kind of page each, at work in the
// same rounds:
//
//	plain   the page without the client, no session (the baseline)
//	client  the page with the client (bootstrapSnippet), the worker's window on it
//	devtools the plain page with Chromium's own DevTools session (Runtime
//	        enabled on a second CDP connection, as when its DevTools is open):
//	        the anchor
//
// Figures are medians of per-round ratios to plain, reported, never
// asserted. Goals and figures: docs/performance.md ("Pages with a window
// attached through the worker").
//
//	go test -run '^$' -bench 'PageConsoleWindow|PageFetchCost' -benchtime 1x -v ./cmd/inspector-worker
//
// IW_BENCH_ROUNDS=N sets the rounds (default 5).

// pageBenchHost serves /plain.html, /client.html (the same plus the client),
// /bench.js and the fetch bodies /1k and /1m (no-store).
const pageBenchHost = `
const http = require('http');
const KB = Buffer.alloc(1024, 'k'), MB = Buffer.alloc(1 << 20, 'm');
const head = '<!doctype html><html><head><title>bench</title><script src="/bench.js"></script>';
http.createServer((req, res) => {
  const u = req.url.split('?')[0];
  if (u === '/bench.js') { res.setHeader('content-type', 'text/javascript'); res.end(process.env.BENCH_JS); return; }
  if (u === '/1k' || u === '/1m') {
    const b = u === '/1m' ? MB : KB;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': b.length, 'cache-control': 'no-store' });
    res.end(b);
    return;
  }
  res.setHeader('content-type', 'text/html');
  if (u === '/client.html') res.end(head + globalThis.inspectorWorker.bootstrapSnippet() + '</head><body>client</body></html>');
  else res.end(head + '</head><body>plain</body></html>');
}).listen(0, '127.0.0.1', function () { console.log('bench pages http://127.0.0.1:' + this.address().port); });
`

// pageBenchJS: the workloads, the same on every kind of page.
const pageBenchJS = `
window.__cost = (n, kind) => {
  const t0 = performance.now();
  if (kind === 'obj') for (let i = 0; i < n; i++) console.log('msg', i, { a: i });
  else for (let i = 0; i < n; i++) console.log('msg', i);
  return performance.now() - t0;
};
window.__rate = (perSec, ms) => new Promise((resolve) => {
  let sent = 0;
  const t0 = performance.now();
  const iv = setInterval(() => {
    const now = performance.now();
    const due = Math.min(Math.floor((now - t0) * perSec / 1000), Math.floor(ms * perSec / 1000));
    for (; sent < due; sent++) {
      if (sent % 2) console.log('tick', sent);
      else console.log('tick', sent, { a: sent });
    }
    if (now - t0 >= ms) { clearInterval(iv); resolve(sent); }
  }, 10);
});
window.__fetch = async (path, n, conc) => {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: conc }, async () => {
    while (next < n) {
      next++;
      const r = await fetch(path + '?' + next, { cache: 'no-store' });
      const b = await r.arrayBuffer();
      if (b.byteLength !== (path === '/1m' ? 1048576 : 1024)) throw new Error('short body ' + b.byteLength);
    }
  }));
  return performance.now() - t0;
};
`

// benchBrowser is one headless Chromium with a remote debugging port.
type benchBrowser struct {
	b    *testing.B
	pid  int
	base string
}

func startBenchBrowser(b *testing.B) *benchBrowser {
	dir := b.TempDir()
	cmd := exec.Command(chromiumPath(b), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		// Background tabs must not be throttled: every page logs on its own timer.
		"--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
		"--user-data-dir="+dir, "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		proctest.AssertGone(b, cmd.Process.Pid)
	})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if data, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort")); err == nil {
			if port, _, _ := strings.Cut(string(data), "\n"); port != "" {
				return &benchBrowser{b: b, pid: cmd.Process.Pid, base: "http://127.0.0.1:" + port}
			}
		}
	}
	b.Fatal("chromium wrote no DevToolsActivePort within 30 s")
	return nil
}

// benchTab is one tab's CDP connection (evaluations only; events skipped).
type benchTab struct {
	b     *testing.B
	c     *websocket.Conn
	wsURL string
	id    int
}

func (br *benchBrowser) open(url string) *benchTab {
	req, _ := http.NewRequest(http.MethodPut, br.base+"/json/new?"+url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		br.b.Fatal(err)
	}
	defer res.Body.Close()
	var target struct{ WebSocketDebuggerURL string }
	if err := json.NewDecoder(res.Body).Decode(&target); err != nil || target.WebSocketDebuggerURL == "" {
		br.b.Fatalf("/json/new: %v", err)
	}
	c, _, err := websocket.Dial(context.Background(), target.WebSocketDebuggerURL, nil)
	if err != nil {
		br.b.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	br.b.Cleanup(func() { c.CloseNow() })
	return &benchTab{b: br.b, c: c, wsURL: target.WebSocketDebuggerURL}
}

// eval evaluates expr (awaiting a promise) and decodes its value into v.
func (p *benchTab) eval(expr string, v any) {
	p.b.Helper()
	p.id++
	msg, _ := json.Marshal(map[string]any{"id": p.id, "method": "Runtime.evaluate",
		"params": map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := p.c.Write(ctx, websocket.MessageText, msg); err != nil {
		p.b.Fatal(err)
	}
	for {
		_, data, err := p.c.Read(ctx)
		if err != nil {
			p.b.Fatal(err)
		}
		var r struct {
			ID     int
			Result struct {
				Result           struct{ Value json.RawMessage }
				ExceptionDetails json.RawMessage
			}
		}
		if json.Unmarshal(data, &r) != nil || r.ID != p.id {
			continue
		}
		if r.Result.ExceptionDetails != nil {
			p.b.Fatalf("%s: %s", expr, r.Result.ExceptionDetails)
		}
		if v != nil {
			json.Unmarshal(r.Result.Result.Value, v)
		}
		return
	}
}

func (p *benchTab) waitTrue(expr string) {
	p.b.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var ok bool
		p.eval("!!("+expr+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			p.b.Fatalf("timeout waiting for %s", expr)
		}
	}
}

// drain reads a CDP connection until it closes, counting console events
// whose text starts with one of the bench's messages, and the messages a
// worker window was told it lost.
type drain struct {
	console, lost atomic.Int64
}

func (d *drain) run(c *websocket.Conn) {
	for {
		_, msg, err := c.Read(context.Background())
		if err != nil {
			return
		}
		switch {
		case bytes.HasPrefix(msg, []byte(`{"method":"Runtime.consoleAPICalled"`)):
			if bytes.Contains(msg, []byte(`"value":"msg"`)) || bytes.Contains(msg, []byte(`"value":"tick"`)) {
				d.console.Add(1)
			}
		case bytes.HasPrefix(msg, []byte(`{"method":"Log.entryAdded"`)) && bytes.Contains(msg, []byte("observations")):
			d.lost.Add(int64(lostCount(msg)))
		}
	}
}

// devtoolsSession opens Chromium's own DevTools session on a tab: a second
// CDP connection with Runtime enabled, its events read and counted.
func devtoolsSession(b *testing.B, p *benchTab) *drain {
	c, _, err := websocket.Dial(context.Background(), p.wsURL, nil)
	if err != nil {
		b.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	b.Cleanup(func() { c.CloseNow() })
	if err := c.Write(context.Background(), websocket.MessageText, []byte(`{"id":1,"method":"Runtime.enable"}`)); err != nil {
		b.Fatal(err)
	}
	d := &drain{}
	go d.run(c)
	return d
}

// rendererCPU is the user+system CPU of br's renderer processes.
func (br *benchBrowser) rendererCPU() time.Duration {
	var sum time.Duration
	for p, ticks := range procTreeTicks(br.pid) {
		if chromiumType(p) == "renderer" {
			sum += time.Duration(ticks) * 10 * time.Millisecond
		}
	}
	return sum
}

// procTreeTicks maps pid and its descendants to their utime+stime ticks.
func procTreeTicks(pid int) map[int]uint64 {
	type proc struct {
		ppid  int
		ticks uint64
	}
	procs := map[int]proc{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		end := bytes.LastIndexByte(stat, ')')
		if err != nil || end < 0 {
			continue
		}
		f := strings.Fields(string(stat[end+1:]))
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		u, _ := strconv.ParseUint(f[11], 10, 64)
		s, _ := strconv.ParseUint(f[12], 10, 64)
		procs[p] = proc{ppid, u + s}
	}
	out := map[int]uint64{}
	for p, pr := range procs {
		for q := p; q > 1; q = procs[q].ppid {
			if q == pid {
				out[p] = pr.ticks
				break
			}
			if _, ok := procs[q]; !ok {
				break
			}
		}
	}
	return out
}

// chromiumType is a Chromium process's --type= ("browser" without one).
func chromiumType(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	for _, a := range strings.FieldsFunc(string(b), func(r rune) bool { return r == 0 || r == ' ' }) {
		if v, ok := strings.CutPrefix(a, "--type="); ok {
			return v
		}
	}
	return "browser"
}

// pageBench is the worker, its window and the three browsers.
type pageBench struct {
	b      *testing.B
	pages  string // http://127.0.0.1:port of the host's page server
	window *drain
	kinds  [3]string
	brs    [3]*benchBrowser
	anchor []*drain
}

var pageKinds = [3]string{"plain", "client", "devtools"}

func startPageBench(b *testing.B) *pageBench {
	dir, script := writeScript(b, pageBenchHost)
	// --inject=false: the plain pages stay plain (the client page loads the
	// client through bootstrapSnippet).
	w := startCmdEnv(b, dir, []string{"BENCH_JS=" + pageBenchJS}, "run", "--port", "0", "--inject=false", "--", "node", script)
	pb := &pageBench{b: b, pages: w.waitFor(w.stdout, `bench pages (http://127\.0\.0\.1:\d+)`), kinds: pageKinds}
	for i := range pb.brs {
		pb.brs[i] = startBenchBrowser(b)
	}
	// The window: attached to the worker before any page, Runtime enabled.
	wc, _, err := websocket.Dial(context.Background(), pageURL(b, w.addr()), nil)
	if err != nil {
		b.Fatal(err)
	}
	wc.SetReadLimit(64 << 20)
	b.Cleanup(func() { wc.CloseNow() })
	if err := wc.Write(context.Background(), websocket.MessageText, []byte(`{"id":1,"method":"Runtime.enable"}`)); err != nil {
		b.Fatal(err)
	}
	pb.window = &drain{}
	go pb.window.run(wc)
	return pb
}

// openPages opens n tabs of each kind and waits for them to be ready.
func (pb *pageBench) openPages(n int) [3][]*benchTab {
	var tabs [3][]*benchTab
	for k, kind := range pb.kinds {
		path := "/plain.html"
		if kind == "client" {
			path = "/client.html"
		}
		for range n {
			t := pb.brs[k].open(pb.pages + path)
			t.waitTrue("typeof __cost === 'function'")
			if kind == "client" {
				t.waitTrue("window.__inspectorWorkerClient && __inspectorWorkerClient.stats().state === 'open'")
			}
			if kind == "devtools" {
				pb.anchor = append(pb.anchor, devtoolsSession(pb.b, t))
			}
			tabs[k] = append(tabs[k], t)
		}
	}
	time.Sleep(500 * time.Millisecond) // the window's console.enable reaches the client pages
	return tabs
}

func (pb *pageBench) anchorConsole() int64 {
	var n int64
	for _, d := range pb.anchor {
		n += d.console.Load()
	}
	return n
}

// ratioRange is "1.23× [1.10–1.40]" of the per-round ratios a[i]/b[i].
func ratioRange(a, b []float64) string {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = a[i] / max(b[i], 1e-9)
	}
	s := append([]float64(nil), r...)
	sort.Float64s(s)
	return fmt.Sprintf("%.2f× [%.2f–%.2f]", s[len(s)/2], s[0], s[len(s)-1])
}

func pageBenchRounds() int {
	if n, err := strconv.Atoi(os.Getenv("IW_BENCH_ROUNDS")); err == nil && n >= 3 {
		return n
	}
	return 5
}

// BenchmarkPageConsoleWindow: per-call cost of console.log('msg', i, {a:i})
// and of console.log('msg', i) (string-only) on one page of each kind, in
// slices of 2,000 calls that alternate between the kinds (the order
// rotated every slice); in-page time and renderer CPU per round. Then 10
// pages of each kind log 200 messages/s each (every second one with an
// object) for 4 s at once: renderer CPU. Every client call must reach the
// window or be announced lost.
func BenchmarkPageConsoleWindow(b *testing.B) {
	const calls, slices = 20000, 10
	pb := startPageBench(b)
	tabs := pb.openPages(1)
	var want int64
	for range b.N {
		var sb strings.Builder
		for _, kind := range []string{"obj", "str"} {
			expr := "__cost(" + strconv.Itoa(calls/slices) + ", '" + kind + "')"
			for k := range pb.kinds { // warm-up
				tabs[k][0].eval(expr, nil)
			}
			want += calls / slices
			var wall, cpu [3][]float64
			for r := range pageBenchRounds() {
				var w, c [3]float64
				for s := range slices {
					for j := range pb.kinds {
						k := (j + s + r) % len(pb.kinds)
						c0 := pb.brs[k].rendererCPU()
						var ms float64
						tabs[k][0].eval(expr, &ms)
						w[k] += ms
						c[k] += float64((pb.brs[k].rendererCPU() - c0).Milliseconds())
					}
				}
				for k := range pb.kinds {
					wall[k], cpu[k] = append(wall[k], w[k]), append(cpu[k], c[k])
				}
				want += calls
			}
			name := map[string]string{"obj": "console.log('msg', i, {a:i})", "str": "console.log('msg', i)"}[kind]
			fmt.Fprintf(&sb, "%s, %d calls per round: in-page ms plain %v, client %v, devtools %v\n", name, calls, fmtList(wall[0]), fmtList(wall[1]), fmtList(wall[2]))
			fmt.Fprintf(&sb, "  in-page time / plain: client %s, devtools %s\n", ratioRange(wall[1], wall[0]), ratioRange(wall[2], wall[0]))
			fmt.Fprintf(&sb, "  renderer CPU ms plain %v, client %v, devtools %v; / plain: client %s, devtools %s\n",
				fmtList(cpu[0]), fmtList(cpu[1]), fmtList(cpu[2]), ratioRange(cpu[1], cpu[0]), ratioRange(cpu[2], cpu[0]))
			b.ReportMetric(medianRatio(wall[1], wall[0]), kind+"-client-x")
			b.ReportMetric(medianRatio(wall[2], wall[0]), kind+"-devtools-x")
		}
		fmt.Fprintf(&sb, "  delivered to the worker's window: %s; Chromium's own session saw %d\n", pb.delivered(want), pb.anchorConsole())

		// 10 pages of each kind logging 200 messages/s, all at once.
		const pages, rate, ms = 10, 200, 4000
		more := pb.openPages(pages - 1)
		for k := range tabs {
			more[k] = append(more[k], tabs[k][0])
		}
		var cpu [3][]float64
		for range pageBenchRounds() {
			var c0 [3]time.Duration
			for k := range pb.kinds {
				c0[k] = pb.brs[k].rendererCPU()
			}
			var wg sync.WaitGroup
			for k := range pb.kinds {
				for _, t := range more[k] {
					wg.Add(1)
					go func() { defer wg.Done(); t.eval("__rate("+strconv.Itoa(rate)+", "+strconv.Itoa(ms)+")", nil) }()
				}
			}
			wg.Wait()
			for k := range pb.kinds {
				cpu[k] = append(cpu[k], float64((pb.brs[k].rendererCPU() - c0[k]).Milliseconds()))
			}
			want += pages * rate * ms / 1000
		}
		fmt.Fprintf(&sb, "%d pages × %d msg/s × %d ms: renderer CPU ms plain %v, client %v, devtools %v; / plain: client %s, devtools %s\n",
			pages, rate, ms, fmtList(cpu[0]), fmtList(cpu[1]), fmtList(cpu[2]), ratioRange(cpu[1], cpu[0]), ratioRange(cpu[2], cpu[0]))
		fmt.Fprintf(&sb, "  delivered to the worker's window: %s\n", pb.delivered(want))
		b.ReportMetric(medianRatio(cpu[1], cpu[0]), "load-client-x")
		b.ReportMetric(medianRatio(cpu[2], cpu[0]), "load-devtools-x")
		fmt.Print("\n", sb.String()) // stdout: b.Log is cut to 10 lines without -v
	}
}

// delivered waits (up to a minute) until the window has every call or was
// told it lost the rest, and says how it went; short is an error.
func (pb *pageBench) delivered(want int64) string {
	deadline := time.Now().Add(time.Minute)
	for {
		got, lost := pb.window.console.Load(), pb.window.lost.Load()
		if got+lost >= want || time.Now().After(deadline) {
			s := fmt.Sprintf("%d of %d calls, %d announced lost", got, want, lost)
			if got+lost < want {
				pb.b.Errorf("not every call delivered or announced: %s", s)
			}
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func fmtList(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatFloat(x, 'f', 0, 64)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// BenchmarkPageFetchCost: page fetch on a client page (capture on) against
// a plain page, in-page time from the call to the last body byte, 1 KiB
// and 1 MiB, sequential and 16 concurrent, from the host's own server; the
// kinds alternate per slice. Renderer CPU too.
func BenchmarkPageFetchCost(b *testing.B) {
	pb := startPageBench(b)
	pb.kinds = [3]string{"plain", "client", "plain"} // two plain pages: the second is an A/A check
	tabs := pb.openPages(1)
	modes := []struct {
		name, path string
		n, conc    int
	}{{"seq1k", "/1k", 100, 1}, {"seq1m", "/1m", 10, 1}, {"conc1k", "/1k", 160, 16}, {"conc1m", "/1m", 32, 16}}
	for range b.N {
		var sb strings.Builder
		for _, m := range modes {
			expr := fmt.Sprintf("__fetch(%q, %d, %d)", m.path, m.n, m.conc)
			for k := range pb.kinds {
				tabs[k][0].eval(expr, nil) // warm-up
			}
			var wall, cpu [3][]float64
			for r := range pageBenchRounds() {
				var w, c [3]float64
				for s := range 3 {
					for j := range pb.kinds {
						k := (j + s + r) % len(pb.kinds)
						c0 := pb.brs[k].rendererCPU()
						var ms float64
						tabs[k][0].eval(expr, &ms)
						w[k] += ms
						c[k] += float64((pb.brs[k].rendererCPU() - c0).Milliseconds())
					}
				}
				for k := range pb.kinds {
					wall[k], cpu[k] = append(wall[k], w[k]), append(cpu[k], c[k])
				}
			}
			fmt.Fprintf(&sb, "%-7s fetch %s ×%d, %d at once: in-page ms per fetch plain %.3f, client %.3f; client/plain %s (plain/plain A/A %s); renderer CPU client/plain %s\n",
				m.name, m.path, m.n, m.conc, median(wall[0])/float64(3*m.n), median(wall[1])/float64(3*m.n),
				ratioRange(wall[1], wall[0]), ratioRange(wall[2], wall[0]), ratioRange(cpu[1], cpu[0]))
			b.ReportMetric(medianRatio(wall[1], wall[0]), m.name+"-x")
		}
		fmt.Print("\n", sb.String())
	}
}

// medianRatio is the median of the per-round ratios a[i]/b[i].
func medianRatio(a, b []float64) float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = a[i] / max(b[i], 1e-9)
	}
	return median(r)
}
