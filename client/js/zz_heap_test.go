//go:build linux

package clientjs_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
)

func BenchmarkZZHeap(b *testing.B) {
	rec, reg, base, br := benchSetup(b)
	var pages []*cdpPage
	for range 4 {
		pages = append(pages, br.open(base+"/client.html"))
	}
	for _, p := range pages {
		p.waitEval("typeof __inspectorWorkerClient === 'object' && __inspectorWorkerClient.stats().state === 'open'")
	}
	enableConsole(b, rec, reg)
	p := pages[0]
	var n int
	_ = p.evalErr("__rate(200, 4000)", &n) // warm-up
	if _, err := p.call("HeapProfiler.enable", map[string]any{}); err != nil {
		b.Fatal(err)
	}
	if _, err := p.call("HeapProfiler.startSampling", map[string]any{"samplingInterval": 256, "includeObjectsCollectedByMajorGC": true, "includeObjectsCollectedByMinorGC": true}); err != nil {
		b.Fatal(err)
	}
	_ = p.evalErr("__rate(200, 4000)", &n)
	res, err := p.call("HeapProfiler.stopSampling", map[string]any{})
	if err != nil {
		b.Fatal(err)
	}
	var r struct {
		Profile struct {
			Head node
		}
	}
	if err := json.Unmarshal(res, &r); err != nil {
		b.Fatal(err)
	}
	self := map[string]float64{}
	var walk func(nd *node)
	total := 0.0
	walk = func(nd *node) {
		k := nd.CallFrame.FunctionName + " " + nd.CallFrame.URL[strings.LastIndex(nd.CallFrame.URL, "/")+1:] + fmt.Sprintf(":%d", nd.CallFrame.LineNumber+1)
		self[k] += nd.SelfSize
		total += nd.SelfSize
		for i := range nd.Children {
			walk(&nd.Children[i])
		}
	}
	walk(&r.Profile.Head)
	keys := make([]string, 0, len(self))
	for k := range self {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return self[keys[i]] > self[keys[j]] })
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d calls, %.0f bytes sampled, %.0f B/call\n", n, total, total/float64(n))
	for i, k := range keys {
		if i == 40 {
			break
		}
		fmt.Fprintf(&sb, "%8.0f B/call %5.1f%%  %s\n", self[k]/float64(n), 100*self[k]/total, k)
	}
	b.Log("\n" + sb.String())
}

type node struct {
	CallFrame struct {
		FunctionName string
		URL          string
		LineNumber   int
	}
	SelfSize float64
	Children []node
}
