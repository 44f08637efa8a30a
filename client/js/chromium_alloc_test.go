//go:build linux

package clientjs_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// BenchmarkChromiumConsoleAlloc: where a client page's young garbage comes
// from, per console call, in ChromiumConsoleCPU's workload (200 calls/s,
// half with an object argument, a window open): a sampling heap profile
// (CDP HeapProfiler, objects that minor and major GCs collected included)
// of one page over one 4 s run, after one run of warm-up. In these
// background renderers every 4 KiB of young garbage costs a page fault
// (ChromiumConsoleCPU prints the renderers' faults), so bytes per call is
// a cost of its own.
//
//	go test -run '^$' -bench 'ChromiumConsoleAlloc$' -benchtime 1x -v ./client/js/
func BenchmarkChromiumConsoleAlloc(b *testing.B) {
	const rate, ms = 200, 4000
	rec, reg, base, br := benchSetup(b)
	p := br.open(base + "/client.html")
	p.waitEval("typeof __inspectorWorkerClient === 'object' && __inspectorWorkerClient.stats().state === 'open'")
	enableConsole(b, rec, reg)
	run := fmt.Sprintf("__rate(%d, %d)", rate, ms)
	var calls int
	if err := p.evalErr(run, &calls); err != nil { // the JIT warm-up
		b.Fatal(err)
	}
	for _, m := range []string{"HeapProfiler.enable", "HeapProfiler.startSampling"} {
		if _, err := p.call(m, map[string]any{"samplingInterval": 256,
			"includeObjectsCollectedByMajorGC": true, "includeObjectsCollectedByMinorGC": true}); err != nil {
			b.Fatal(err)
		}
	}
	for range b.N {
		if err := p.evalErr(run, &calls); err != nil {
			b.Fatal(err)
		}
	}
	res, err := p.call("HeapProfiler.stopSampling", map[string]any{})
	if err != nil {
		b.Fatal(err)
	}
	var r struct {
		Profile struct{ Head allocNode }
	}
	if err := json.Unmarshal(res, &r); err != nil {
		b.Fatal(err)
	}
	self := map[string]float64{}
	total := 0.0
	var walk func(n *allocNode)
	walk = func(n *allocNode) {
		f := n.CallFrame
		self[fmt.Sprintf("%s %s:%d", f.FunctionName, f.URL[strings.LastIndex(f.URL, "/")+1:], f.LineNumber+1)] += n.SelfSize
		total += n.SelfSize
		for i := range n.Children {
			walk(&n.Children[i])
		}
	}
	walk(&r.Profile.Head)
	keys := make([]string, 0, len(self))
	for k := range self {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return self[keys[i]] > self[keys[j]] })
	n := float64(calls * b.N)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%.0f calls, %.0f bytes sampled: %.0f B per call; by allocating function (\":0\" = a builtin):\n", n, total, total/n)
	for i, k := range keys {
		if i == 25 {
			break
		}
		fmt.Fprintf(&sb, "%8.0f B/call %5.1f%%  %s\n", self[k]/n, 100*self[k]/total, k)
	}
	b.Log(sb.String())
	b.ReportMetric(total/n, "B/call")
}

// allocNode is a CDP SamplingHeapProfileNode, as the benchmark reads it.
type allocNode struct {
	CallFrame struct {
		FunctionName string
		URL          string
		LineNumber   int
	}
	SelfSize float64
	Children []allocNode
}
