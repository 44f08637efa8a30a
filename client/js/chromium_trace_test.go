//go:build linux

package clientjs_test

// BenchmarkChromiumConsoleTrace: where the client page's extra renderer CPU
// goes in ChromiumConsoleCPU's workload (20 plain and 20 client pages, 200
// console calls/s each, a window open), by Chromium's own trace events (CDP
// Tracing on each browser). They name the Blink and V8 work that a JS
// profile does not show and that perf cannot name (Debian's chromium is
// stripped): each task by the function that posted it, each JS entry by its
// function, garbage collection, compiles. Thread time, not wall time, so
// other load on the machine does not inflate it. One untraced round first
// (the JIT warm-up), then b.N traced rounds.
//
//	go test -run '^$' -bench 'ChromiumConsoleTrace$' -benchtime 1x -v ./client/js/
//
// IW_BENCH_ALT_CLIENT=file traces that client.js instead of the built one
// (an experiment's variant); IW_BENCH_PROFILE_LINE=n adds a JS profile of
// the functions under client.js line n; IW_BENCH_TRACE_THREAD another
// thread than the renderers' main one (Chrome_ChildIOThread: IPC, in the
// renderers and the network service);
// IW_BENCH_TRACE_CATEGORIES replaces the trace categories.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// traceCategories: what the trace records.
const traceCategories = "toplevel,v8,v8.execute,v8.compile,disabled-by-default-v8.compile,disabled-by-default-v8.gc,devtools.timeline,disabled-by-default-devtools.timeline,blink,mojom"

// dialBrowser connects to the browser target; the connection keeps the
// events it reads past (Tracing.tracingComplete may come before the answer
// to Tracing.end has been read).
func dialBrowser(b *testing.B, br *cdpBrowser) *cdpPage {
	res, err := http.Get(br.base + "/json/version")
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var v struct{ WebSocketDebuggerURL string }
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
		b.Fatal(err)
	}
	c, _, err := websocket.Dial(context.Background(), v.WebSocketDebuggerURL, nil)
	if err != nil {
		b.Fatal(err)
	}
	c.SetReadLimit(512 << 20)
	b.Cleanup(func() { _ = c.CloseNow() })
	return &cdpPage{t: b, c: c, keep: true}
}

// readTrace ends tracing and reads the stream it returns.
func readTrace(b *testing.B, bc *cdpPage) []traceEvent {
	if _, err := bc.call("Tracing.end", map[string]any{}); err != nil {
		b.Fatal(err)
	}
	p, err := bc.waitEvent("Tracing.tracingComplete")
	if err != nil {
		b.Fatal(err)
	}
	var done struct{ Stream string }
	_ = json.Unmarshal(p, &done)
	var sb strings.Builder
	for {
		res, err := bc.call("IO.read", map[string]any{"handle": done.Stream, "size": 4 << 20})
		if err != nil {
			b.Fatal(err)
		}
		var r struct {
			Data string
			EOF  bool
		}
		_ = json.Unmarshal(res, &r)
		sb.WriteString(r.Data)
		if r.EOF {
			break
		}
	}
	_, _ = bc.call("IO.close", map[string]any{"handle": done.Stream})
	var tr struct{ TraceEvents []traceEvent }
	if err := json.Unmarshal([]byte(sb.String()), &tr); err != nil {
		b.Fatalf("trace: %v (%d bytes)", err, sb.Len())
	}
	return tr.TraceEvents
}

// traceEvent is one event of Chrome's JSON trace format: tts and tdur
// are the thread's CPU clock at its start and its thread time (µs).
type traceEvent struct {
	Name string          `json:"name"`
	Ph   string          `json:"ph"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Tts  float64         `json:"tts"`
	Tdur float64         `json:"tdur"`
	Args json.RawMessage `json:"args"`
}

// traceKey names a complete event for the sums: RunTask by the function
// that posted the task, FunctionCall by the JS function it called (a
// page's URL without its port, so runs compare).
func traceKey(e traceEvent) string {
	switch {
	case strings.HasSuffix(e.Name, "RunTask"):
		var a struct {
			SrcFunc string `json:"src_func"`
			SrcFile string `json:"src_file"`
		}
		_ = json.Unmarshal(e.Args, &a)
		return e.Name + " <" + a.SrcFunc + " " + a.SrcFile + ">"
	case e.Name == "FunctionCall":
		var a struct{ Data profileFrame }
		_ = json.Unmarshal(e.Args, &a)
		a.Data.LineNumber-- // the trace's line is 1-based, a profile's 0-based
		return "FunctionCall <" + a.Data.key() + ">"
	}
	return e.Name
}

// selfTimes sums the self thread time (tdur minus its children's, µs) of
// the complete events on the threads named thread (CrRendererMain: the
// renderers' main threads; Chrome_ChildIOThread: the renderers' and the
// network service's IPC threads), by traceKey, and their top-level total.
// The browser's own WebUI renderer (it runs in every browser and does the
// same work in both) is left out.
func selfTimes(evs []traceEvent, thread string) (map[string]float64, float64) {
	names := map[[2]int]string{}
	labels := map[int]string{}
	for _, e := range evs {
		if e.Ph != "M" {
			continue
		}
		var a struct{ Name, Labels string }
		_ = json.Unmarshal(e.Args, &a)
		switch e.Name {
		case "thread_name":
			names[[2]int{e.Pid, e.Tid}] = a.Name
		case "process_labels", "process_name":
			labels[e.Pid] += a.Name + " " + a.Labels
		}
	}
	byThread := map[[2]int][]traceEvent{}
	for _, e := range evs {
		t := [2]int{e.Pid, e.Tid}
		if e.Ph == "X" && e.Tts > 0 && names[t] == thread && !strings.Contains(labels[e.Pid], "WebUI") {
			byThread[t] = append(byThread[t], e)
		}
	}
	out := map[string]float64{}
	var top float64
	for _, list := range byThread {
		sort.SliceStable(list, func(i, j int) bool {
			if list[i].Tts != list[j].Tts {
				return list[i].Tts < list[j].Tts
			}
			return list[i].Tdur > list[j].Tdur // the enclosing event first
		})
		type open struct {
			key              string
			end, tdur, child float64
		}
		var stack []open
		pop := func() {
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			out[o.key] += o.tdur - o.child
			if len(stack) > 0 {
				stack[len(stack)-1].child += o.tdur
			} else {
				top += o.tdur
			}
		}
		for _, e := range list {
			for len(stack) > 0 && stack[len(stack)-1].end <= e.Tts {
				pop()
			}
			stack = append(stack, open{key: traceKey(e), end: e.Tts + e.Tdur, tdur: e.Tdur})
		}
		for len(stack) > 0 {
			pop()
		}
	}
	return out, top
}

// jitTimes sums the count and thread time (µs) of V8's compile and
// deoptimization events on every thread, by name.
func jitTimes(evs []traceEvent) map[string][2]float64 {
	out := map[string][2]float64{}
	for _, e := range evs {
		l := strings.ToLower(e.Name)
		if e.Ph != "X" || !(strings.Contains(l, "deopt") || strings.Contains(l, "compile") || strings.Contains(l, "optimiz") ||
			strings.Contains(l, "maglevtask") || strings.Contains(l, "turbofan") || strings.Contains(l, "turboshaft")) {
			continue
		}
		x := out[e.Name]
		x[0]++
		x[1] += e.Tdur
		out[e.Name] = x
	}
	return out
}

func BenchmarkChromiumConsoleTrace(b *testing.B) {
	const pages, rate, ms = 20, 200, 4000
	rec, reg, base, plainBr := benchSetup(b)
	clientBr := openCDPBrowser(b)
	clientPath := "/client.html"
	if os.Getenv("IW_BENCH_ALT_CLIENT") != "" {
		clientPath = "/client-alt.html" // that client.js, traced in place of the built one
	}
	var plainPages, clientPages []*cdpPage
	for range pages {
		plainPages = append(plainPages, plainBr.open(base+"/plain.html"))
		clientPages = append(clientPages, clientBr.open(base+clientPath))
	}
	for _, p := range plainPages {
		p.waitEval("typeof __rate === 'function'")
	}
	for _, p := range clientPages {
		p.waitEval("typeof __inspectorWorkerClient === 'object' && __inspectorWorkerClient.stats().state === 'open'")
	}
	enableConsole(b, rec, reg)
	cats := traceCategories
	thread := "CrRendererMain"
	if t := os.Getenv("IW_BENCH_TRACE_THREAD"); t != "" {
		thread = t // e.g. Chrome_ChildIOThread
	}
	if c := os.Getenv("IW_BENCH_TRACE_CATEGORIES"); c != "" {
		cats = c
	}
	// round runs the workload on both browsers at once, traced or not, and
	// returns the traces (plain, client) and the client pages' frames.
	round := func(traced bool) (evs [2][]traceEvent, frames, items int) {
		var bcs []*cdpPage
		if traced {
			for _, br := range []*cdpBrowser{plainBr, clientBr} {
				bc := dialBrowser(b, br)
				if _, err := bc.call("Tracing.start", map[string]any{
					"traceConfig":  map[string]any{"includedCategories": strings.Split(cats, ","), "recordMode": "recordAsMuchAsPossible"},
					"transferMode": "ReturnAsStream",
				}); err != nil {
					b.Fatal(err)
				}
				bcs = append(bcs, bc)
			}
		}
		rec.mu.Lock()
		f0, c0 := rec.appends, rec.console
		rec.mu.Unlock()
		var wg sync.WaitGroup
		for _, p := range append(append([]*cdpPage(nil), plainPages...), clientPages...) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var n int
				if err := p.evalErr(fmt.Sprintf("__rate(%d, %d)", rate, ms), &n); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		time.Sleep(300 * time.Millisecond) // the last batches are sent and acked
		rec.mu.Lock()
		frames, items = rec.appends-f0, rec.console-c0
		rec.mu.Unlock()
		for i, bc := range bcs {
			evs[i] = readTrace(b, bc)
		}
		return evs, frames, items
	}
	round(false) // the JIT warm-up: the first two rounds of ChromiumConsoleCPU cost 1.5-2x the later ones
	// IW_BENCH_PROFILE_LINE=n: the JS functions under client.js line n (the
	// flush's microtask, say) in a CDP profile of 5 client pages, one round.
	if line, err := strconv.Atoi(os.Getenv("IW_BENCH_PROFILE_LINE")); err == nil && line > 0 {
		prof := clientPages[:5]
		for _, p := range prof {
			for _, m := range []string{"Profiler.enable", "Profiler.setSamplingInterval", "Profiler.start"} {
				if _, err := p.call(m, map[string]any{"interval": 100}); err != nil {
					b.Fatal(err)
				}
			}
		}
		round(false)
		var raws []json.RawMessage
		for _, p := range prof {
			res, err := p.call("Profiler.stop", map[string]any{})
			if err != nil {
				b.Fatal(err)
			}
			raws = append(raws, res)
		}
		b.Logf("JS profile of 5 client pages under client.js:%d:\n%s", line, subtreeSelf(b, raws, line-1))
	}
	for range b.N {
		evs, frames, items := round(true)
		plain, pTop := selfTimes(evs[0], thread)
		client, cTop := selfTimes(evs[1], thread)
		var sb strings.Builder
		fmt.Fprintf(&sb, "client pages: %d console items in %d append frames\n", items, frames)
		fmt.Fprintf(&sb, "threads %s (bench pages' renderers; for an IPC thread, the network service's too), traced thread time: plain %.0f ms, client %.0f ms\n", thread, pTop/1000, cTop/1000)
		fmt.Fprintf(&sb, "self thread time by event, ms plain / client / extra (largest extra first):\n")
		writeRows(&sb, plain, client, 30, 1000)
		fmt.Fprintf(&sb, "V8 compile and deopt events on all threads, count plain / client:\n")
		pj, cj := jitTimes(evs[0]), jitTimes(evs[1])
		pn, cn := map[string]float64{}, map[string]float64{}
		for k, v := range pj {
			pn[k] = v[0]
		}
		for k, v := range cj {
			cn[k] = v[0]
		}
		writeRows(&sb, pn, cn, 12, 1)
		var pt, ct float64
		for _, v := range pj {
			pt += v[1]
		}
		for _, v := range cj {
			ct += v[1]
		}
		fmt.Fprintf(&sb, "  (their thread time, nested events counted in each: plain %.0f ms, client %.0f ms)", pt/1000, ct/1000)
		b.Logf("%s", sb.String())
	}
}

// writeRows writes the n keys of p and c with the largest c-p, each value
// divided by unit.
func writeRows(sb *strings.Builder, p, c map[string]float64, n int, unit float64) {
	keys := map[string]bool{}
	for k := range p {
		keys[k] = true
	}
	for k := range c {
		keys[k] = true
	}
	list := make([]string, 0, len(keys))
	for k := range keys {
		list = append(list, k)
	}
	sort.Slice(list, func(i, j int) bool { return c[list[i]]-p[list[i]] > c[list[j]]-p[list[j]] })
	for i, k := range list {
		if i == n {
			break
		}
		fmt.Fprintf(sb, "  %8.1f %8.1f %+8.1f  %s\n", p[k]/unit, c[k]/unit, (c[k]-p[k])/unit, k)
	}
}

// subtreeSelf sums, over the profiles, the self samples of every function
// under a node whose frame is at client.js line (0-based), by function.
func subtreeSelf(b *testing.B, raws []json.RawMessage, line int) string {
	self := map[string]int{}
	total, under := 0, 0
	for _, raw := range raws {
		var r struct {
			Profile struct {
				Nodes []struct {
					ID        int
					CallFrame profileFrame
					HitCount  int
					Children  []int
				}
			}
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			b.Fatal(err)
		}
		byID := map[int]int{}
		for i, nd := range r.Profile.Nodes {
			byID[nd.ID] = i
			total += nd.HitCount
		}
		var walk func(i int, in bool)
		walk = func(i int, in bool) {
			nd := r.Profile.Nodes[i]
			f := nd.CallFrame
			if strings.HasSuffix(f.URL, "/client.js") && f.LineNumber == line {
				in = true
			}
			if in {
				self[f.key()] += nd.HitCount
				under += nd.HitCount
			}
			for _, c := range nd.Children {
				walk(byID[c], in)
			}
		}
		if len(r.Profile.Nodes) > 0 {
			walk(0, false)
		}
	}
	keys := byCount(self)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d samples, %d under client.js:%d\n", total, under, line+1)
	for i, k := range keys {
		if i == 40 {
			break
		}
		fmt.Fprintf(&sb, "%6d %5.1f%%  %s\n", self[k], 100*float64(self[k])/float64(max(under, 1)), k)
	}
	return sb.String()
}
