//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// domBenchJS builds a page of ~5,000 nodes: #big (1,000 <li>, each with
// its text), #rest (1,500 <div> with text) and #small (5 <li>).
const domBenchJS = `(function () {
  function list(tag, id, n, child) {
    var p = document.body.appendChild(document.createElement(tag === 'li' ? 'ul' : 'section'));
    p.id = id;
    for (var i = 0; i < n; i++) { var e = p.appendChild(document.createElement(tag)); e.className = 'c' + (i % 7); e.textContent = child + i; }
  }
  list('li', 'big', 1000, 'item ');
  list('div', 'rest', 1500, 'row ');
  list('li', 'small', 5, 'small ');
  var w = document.createTreeWalker(document, 0xFFFFFFFF), n = 1;
  while (w.nextNode()) n++;
  window.domBenchReady = n;
})();`

// domPath is one way to the page's DOM: through the worker (a window) or
// Chromium's own CDP on the same tab.
type domPath struct {
	name string
	c    *cdptest.Client
	ctx  map[string]any // Runtime.evaluate's context parameters
}

// nodeOf starts a new document on path p and returns the node id of the
// element with id (Runtime.evaluate, then DOM.requestNode, as a Console
// value revealed in Elements).
func (p domPath) nodeOf(b *testing.B, id string) int64 {
	p.c.Forget()
	p.c.MustCall("DOM.getDocument", map[string]any{})
	params := map[string]any{"expression": "document.getElementById('" + id + "')"}
	for k, v := range p.ctx {
		params[k] = v
	}
	m := p.c.MustCall("Runtime.evaluate", params)
	var ev struct {
		Result struct {
			ObjectID string `json:"objectId"`
		} `json:"result"`
	}
	if err := json.Unmarshal(m.Result, &ev); err != nil || ev.Result.ObjectID == "" {
		b.Fatalf("%s: evaluate #%s: %s", p.name, id, m.Raw)
	}
	r := p.c.MustCall("DOM.requestNode", map[string]any{"objectId": ev.Result.ObjectID})
	var rn struct {
		NodeID int64 `json:"nodeId"`
	}
	if err := json.Unmarshal(r.Result, &rn); err != nil || rn.NodeID == 0 {
		b.Fatalf("%s: DOM.requestNode #%s: %s", p.name, id, r.Raw)
	}
	return rn.NodeID
}

// expand times DOM.requestChildNodes of node until both its answer and
// the setChildNodes with want children have come.
func (p domPath) expand(b *testing.B, node int64, want int) time.Duration {
	start := time.Now()
	id := p.c.Send("DOM.requestChildNodes", map[string]any{"nodeId": node, "depth": 1})
	parent := fmt.Sprintf(`"parentId":%d,`, node)
	ev := p.c.ExpectAnyEvent("DOM.setChildNodes", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), parent) })
	if m := p.c.ExpectResponse(id); m.Error != nil {
		b.Fatalf("%s: DOM.requestChildNodes: %s", p.name, m.Raw)
	}
	d := time.Since(start)
	var sc struct {
		Nodes []json.RawMessage `json:"nodes"`
	}
	if err := json.Unmarshal(ev.Params, &sc); err != nil || len(sc.Nodes) != want {
		b.Fatalf("%s: setChildNodes with %d nodes, want %d", p.name, len(sc.Nodes), want)
	}
	return d
}

// BenchmarkPageDOMExpand: expanding a node of a ~5,000-node page in
// Elements (DOM.requestChildNodes → DOM.setChildNodes) through the worker
// and the page's DOM agent, against Chromium's own CDP on the same tab,
// each expand on a fresh document (Chromium sends a node's children once
// per document), single expands alternating between the paths, the order
// flipped every round. Two nodes: #big (1,000 children, each with its
// text) and #small (5). Reported: each path's median and the median of the
// per-round ratios worker/Chromium; never asserted.
//
//	go test -run '^$' -bench PageDOMExpand -benchtime 200x -v ./cmd/inspector-worker
func BenchmarkPageDOMExpand(b *testing.B) {
	_, c, page := startPageHost(b, domBenchJS)
	direct := openDebuggablePage(b, page)
	ctx := pageContextID(b, c)
	var nodes json.RawMessage
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		m := c.MustCall("Runtime.evaluate", map[string]any{"expression": "window.domBenchReady", "contextId": ctx, "returnByValue": true})
		var v struct {
			Result struct {
				Value json.RawMessage `json:"value"`
			} `json:"result"`
		}
		_ = json.Unmarshal(m.Result, &v)
		if nodes = v.Result.Value; len(nodes) > 0 && string(nodes) != "null" {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the bench page did not build its DOM: %s", m.Raw)
		}
	}
	c.MustCall("DOM.enable", nil)
	direct.MustCall("DOM.enable", nil)
	direct.MustCall("Runtime.enable", nil)
	paths := []domPath{{"worker", c, map[string]any{"contextId": ctx}}, {"chromium", direct, nil}}
	const rounds = 10
	for _, mode := range []struct {
		id   string
		kids int
	}{{"big", 1000}, {"small", 5}} {
		for _, p := range paths { // warm both
			p.expand(b, p.nodeOf(b, mode.id), mode.kids)
		}
		per := max(1, b.N/rounds)
		all := map[string][]float64{}
		var ratios []float64
		b.ResetTimer()
		for r := range rounds {
			sum := map[string]time.Duration{}
			for i := range per {
				order := paths
				if (r+i)%2 == 1 {
					order = []domPath{paths[1], paths[0]}
				}
				for _, p := range order {
					node := p.nodeOf(b, mode.id)
					d := p.expand(b, node, mode.kids)
					sum[p.name] += d
					all[p.name] = append(all[p.name], float64(d.Microseconds()))
				}
			}
			ratios = append(ratios, float64(sum["worker"])/float64(sum["chromium"]))
		}
		b.StopTimer()
		w, d, ratio := medianOf(all["worker"]), medianOf(all["chromium"]), medianOf(ratios)
		b.ReportMetric(ratio, "ratio-"+mode.id)
		b.ReportMetric(w, "µs-worker-"+mode.id)
		b.ReportMetric(d, "µs-chromium-"+mode.id)
		b.Logf("expand #%s (%d children) of a page of %s nodes, %d each: worker median %.0f µs, Chromium's CDP %.0f µs; per-round ratios %s, median %.2f×",
			mode.id, mode.kids, nodes, rounds*per, w, d, fmtRatios(ratios), ratio)
	}
}

func medianOf(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func fmtRatios(xs []float64) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strings.Join(out, " ")
}

// procGroupCPU is the user+system CPU of every process in process group
// pgid (a chromium started with Setpgid: the browser and its children).
func procGroupCPU(pgid int) time.Duration {
	var sum time.Duration
	ents, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range ents {
		if pgrp, cpu, ok := procStatCPU(path); ok && pgrp == pgid {
			sum += cpu
		}
	}
	return sum
}

// procStatCPU reads a /proc/PID/stat: the process group and the
// user+system CPU of all its threads.
func procStatCPU(path string) (pgrp int, cpu time.Duration, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): pgrp is field 5, utime 14, stime 15.
	if len(f) < 13 {
		return 0, 0, false
	}
	pgrp, _ = strconv.Atoi(f[2])
	u, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	return pgrp, time.Duration(u+st) * 10 * time.Millisecond, true
}

// otherCPU is the CPU of the worker process and of this one (the window
// reading the events): what shares the machine's cores with the browser.
func otherCPU(workerPID int) time.Duration {
	_, w, _ := procStatCPU(fmt.Sprintf("/proc/%d/stat", workerPID))
	_, self, _ := procStatCPU("/proc/self/stat")
	return w + self
}

// framesBenchJS: a list of 1,200 <li> and frameRun(ms), which changes
// 2,000 nodes every animation frame for ms (an attribute of all 1,200, the
// text of 800) and answers the frames' count, mean and 95th percentile
// interval.
const framesBenchJS = `(function () {
  var l = document.body.appendChild(document.createElement('ul'));
  l.id = 'list';
  for (var i = 0; i < 1200; i++) l.appendChild(document.createElement('li')).textContent = 'n' + i;
  var f = 0;
  window.frameRun = function (ms) {
    return new Promise(function (resolve) {
      var li = l.children, end = performance.now() + ms, last = 0, iv = [];
      function frame(t) {
        f++;
        if (last) iv.push(t - last);
        last = t;
        for (var i = 0; i < li.length; i++) { li[i].setAttribute('data-f', f); if (i < 800) li[i].firstChild.data = 'f' + f + ' ' + i; }
        if (performance.now() < end) { requestAnimationFrame(frame); return; }
        iv.sort(function (a, b) { return a - b; });
        var sum = 0; for (var k = 0; k < iv.length; k++) sum += iv[k];
        resolve({ frames: iv.length + 1, mean: sum / iv.length, p95: iv[Math.floor(iv.length * 0.95)] });
      }
      requestAnimationFrame(frame);
    });
  };
  window.framesReady = true;
})();`

// startBenchChromium opens url in a headless Chromium of its own process
// group and returns that group's id (procGroupCPU).
func startBenchChromium(b *testing.B, url string) int {
	cmd := exec.Command(chromiumPath(b), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
		"--user-data-dir="+b.TempDir(), url)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		proctest.AssertGone(b, cmd.Process.Pid)
	})
	return cmd.Process.Pid
}

// frameStats is frameRun's answer.
type frameStats struct {
	Frames int     `json:"frames"`
	MeanMs float64 `json:"mean"`
	P95Ms  float64 `json:"p95"`
}

// BenchmarkPageDOMFrames: a page changing 2,000 nodes every animation
// frame, with Elements open on it (a window holding the whole list, so
// every change is diffed and sent) against closed (DOM.disable: the page
// observes nothing), in runs of IW_FRAMES_MS (default 2,000 ms) alternating
// open and closed, the order flipped every round. Reported: the page's
// mean and 95th-percentile frame interval and the browser's CPU per frame
// (its process group, from /proc), with the medians of the per-round
// ratios open/closed (goal for the frame time ≤ 1.2×); never asserted.
// Also logged: the CPU per frame of the worker and of this process (the
// window reading the events), which share the machine's cores with the
// browser.
//
//	go test -run '^$' -bench PageDOMFrames -benchtime 1x -v ./cmd/inspector-worker
func BenchmarkPageDOMFrames(b *testing.B) {
	wp, c, page := startPageHost(b, framesBenchJS)
	pgid := startBenchChromium(b, page)
	ctx := pageContextID(b, c)
	waitValue(b, c, ctx, "window.framesReady === true")
	c.MustCall("DOM.enable", nil)
	ms := 2000
	if v, err := strconv.Atoi(os.Getenv("IW_FRAMES_MS")); err == nil && v > 0 {
		ms = v
	}
	path := domPath{"worker", c, map[string]any{"contextId": ctx}}
	run := func(open bool) (frameStats, time.Duration, time.Duration) {
		if open {
			list := path.nodeOf(b, "list")
			path.expand(b, list, 1200)
		} else {
			c.MustCall("DOM.disable", nil)
		}
		c.Forget()
		cpu0, other0 := procGroupCPU(pgid), otherCPU(wp.cmd.Process.Pid)
		m := c.MustCall("Runtime.evaluate", map[string]any{"expression": "frameRun(" + strconv.Itoa(ms) + ")",
			"contextId": ctx, "awaitPromise": true, "returnByValue": true})
		cpu, other := procGroupCPU(pgid)-cpu0, otherCPU(wp.cmd.Process.Pid)-other0
		var v struct {
			Result struct {
				Value frameStats `json:"value"`
			} `json:"result"`
		}
		if err := json.Unmarshal(m.Result, &v); err != nil || v.Result.Value.Frames == 0 {
			b.Fatalf("frameRun: %s", m.Raw)
		}
		events := 0
		for _, e := range c.All() {
			if e.ID == nil && strings.HasPrefix(e.Method, "DOM.") {
				events++
			}
		}
		if open && events == 0 {
			b.Fatal("Elements open, but the window got no DOM event during the run")
		}
		c.Forget()
		return v.Result.Value, cpu, other
	}
	run(true) // warm both
	run(false)
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv("IW_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	var meanR, p95R, cpuR []float64
	var lines []string
	b.ResetTimer()
	for range b.N {
		for r := range rounds {
			got := map[bool]frameStats{}
			cpu, other := map[bool]time.Duration{}, map[bool]time.Duration{}
			for _, open := range []bool{r%2 == 0, r%2 == 1} {
				got[open], cpu[open], other[open] = run(open)
			}
			o, cl := got[true], got[false]
			perFrame := func(open bool) float64 { return float64(cpu[open].Microseconds()) / 1e3 / float64(got[open].Frames) }
			elsewhere := func(open bool) float64 { return float64(other[open].Microseconds()) / 1e3 / float64(got[open].Frames) }
			meanR = append(meanR, o.MeanMs/cl.MeanMs)
			p95R = append(p95R, o.P95Ms/cl.P95Ms)
			cpuR = append(cpuR, perFrame(true)/perFrame(false))
			lines = append(lines, fmt.Sprintf("round %d: open %d frames, mean %.1f ms, p95 %.1f ms, CPU %.1f ms/frame (worker and window %.1f); closed %d frames, mean %.1f ms, p95 %.1f ms, CPU %.1f ms/frame (%.1f)",
				r, o.Frames, o.MeanMs, o.P95Ms, perFrame(true), elsewhere(true), cl.Frames, cl.MeanMs, cl.P95Ms, perFrame(false), elsewhere(false)))
		}
	}
	b.StopTimer()
	b.ReportMetric(medianOf(meanR), "frame-mean-open/closed")
	b.ReportMetric(medianOf(p95R), "frame-p95-open/closed")
	b.ReportMetric(medianOf(cpuR), "cpu-per-frame-open/closed")
	b.Logf("2,000 nodes changed a frame, %d ms runs:\n  %s\nopen/closed: mean frame %s (median %.2f×), p95 %s (median %.2f×), browser CPU per frame %s (median %.2f×)",
		ms, strings.Join(lines, "\n  "), fmtRatios(meanR), medianOf(meanR), fmtRatios(p95R), medianOf(p95R), fmtRatios(cpuR), medianOf(cpuR))
}

// waitValue polls a page expression until it is true.
func waitValue(b *testing.B, c *cdptest.Client, ctx int, expr string) {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		m := c.MustCall("Runtime.evaluate", map[string]any{"expression": expr, "contextId": ctx, "returnByValue": true})
		if strings.Contains(string(m.Result), `"value":true`) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the bench page never made %s true: %s", expr, m.Raw)
		}
	}
}
