//go:build linux

package clientjs_test

import (
	"os"
	"strconv"
	"testing"
)

// BenchmarkChromiumClientBeforeDOM: what the DOM, CSS and Overlay agents
// cost a page no window inspects in Elements, against the client.js from
// before dom.mjs landed, in one browser and the same rounds: two tabs,
// /client.html (this client.js) and /client-alt.html (the old one, from
// IW_BENCH_ALT_CLIENT). The agents ship inside client.js but run nothing
// until a window asks for a page's nodes, so the goal is "unchanged within
// noise". Measured, alternating between the tabs (the order flipped every
// slice), the median of the per-round ratios new/old reported:
//   - console.log: 20,000 calls a round in slices of 2,000 (string, then
//     object arguments), without and then with a DevTools window (console
//     enabled, no DOM): the page's own performance.now() around the calls,
//     and the browser's CPU (its process tree, from /proc) meanwhile;
//   - page load, last (no window on the new loads): 5 reloads a round of
//     each tab, the navigation's loadEventEnd and the browser's CPU from
//     the reload to the client's connection being open.
//
// The old client.js:
//
//	git show $(git log --diff-filter=A --format=%h -- client/js/dom.mjs)^:client/js/client.js > /tmp/pre-dom-client.js
//	IW_BENCH_ALT_CLIENT=/tmp/pre-dom-client.js go test -run '^$' -bench 'ChromiumClientBeforeDOM$' -benchtime 1x -v ./client/js/
func BenchmarkChromiumClientBeforeDOM(b *testing.B) {
	if os.Getenv("IW_BENCH_ALT_CLIENT") == "" {
		b.Skip("set IW_BENCH_ALT_CLIENT to the client.js from before dom.mjs (the command is in this benchmark's comment)")
	}
	const calls, slices, reloads = 20000, 10, 5
	rec, reg, base, br := benchSetup(b)
	pages := map[string]*cdpPage{"new": br.open(base + "/client.html"), "old": br.open(base + "/client-alt.html")}
	const ready = "typeof __inspectorWorkerClient === 'object' && __inspectorWorkerClient.stats().state === 'open' && !__inspectorWorkerClient.stats().holding"
	for _, p := range pages {
		p.waitEval(ready)
	}
	order := func(k int) []string {
		if k%2 == 1 {
			return []string{"old", "new"}
		}
		return []string{"new", "old"}
	}
	consoleCost := func(label string) {
		for _, kind := range []string{"str", "obj"} {
			expr := "__cost(" + strconv.Itoa(calls/slices) + ", '" + kind + "')"
			for _, p := range pages { // warm-up
				p.eval(expr, nil)
			}
			wall, cpu := map[string][]float64{}, map[string][]float64{}
			for range benchRounds() {
				w, c := map[string]float64{}, map[string]float64{}
				for k := range slices {
					for _, name := range order(k) {
						var ms float64
						c0 := treeCPU(br.pid)
						pages[name].eval(expr, &ms)
						w[name] += ms
						c[name] += float64((treeCPU(br.pid) - c0).Milliseconds())
					}
				}
				for _, name := range []string{"new", "old"} {
					wall[name], cpu[name] = append(wall[name], w[name]), append(cpu[name], c[name])
				}
			}
			arg := map[string]string{"str": "string", "obj": "object"}[kind]
			b.Logf("console.log, %s, %s arg, %d calls a round: wall new %v ms, old %v ms; ratios %v, median %.2f×; browser CPU new %v ms, old %v ms; ratios %v, median %.2f×",
				label, arg, calls, fmtMs(wall["new"]), fmtMs(wall["old"]), ratios(wall["new"], wall["old"]), medianRatio(wall["new"], wall["old"]),
				fmtMs(cpu["new"]), fmtMs(cpu["old"]), ratios(cpu["new"], cpu["old"]), medianRatio(cpu["new"], cpu["old"]))
			b.ReportMetric(medianRatio(wall["new"], wall["old"]), arg+"-wall-new/old-"+label)
			b.ReportMetric(medianRatio(cpu["new"], cpu["old"]), arg+"-cpu-new/old-"+label)
		}
	}
	load := func() {
		loadMs, cpu := map[string][]float64{}, map[string][]float64{}
		for range benchRounds() {
			l, c := map[string]float64{}, map[string]float64{}
			for k := range reloads {
				for _, name := range order(k) {
					p := pages[name]
					p.eval("window.__before = 1", nil)
					c0 := treeCPU(br.pid)
					if _, err := p.call("Page.reload", map[string]any{}); err != nil {
						b.Fatal(err)
					}
					p.waitEval("!window.__before && document.readyState === 'complete' && performance.getEntriesByType('navigation')[0].loadEventEnd > 0 && " + ready)
					c[name] += float64((treeCPU(br.pid) - c0).Milliseconds())
					var ms float64
					p.eval("performance.getEntriesByType('navigation')[0].loadEventEnd", &ms)
					l[name] += ms
				}
			}
			for _, name := range []string{"new", "old"} {
				loadMs[name], cpu[name] = append(loadMs[name], l[name]/reloads), append(cpu[name], c[name]/reloads)
			}
		}
		b.Logf("page load, %d reloads a round: loadEventEnd new %v ms, old %v ms; ratios %v, median %.2f×; browser CPU to the client's connection new %v ms, old %v ms; ratios %v, median %.2f×",
			reloads, fmtMs(loadMs["new"]), fmtMs(loadMs["old"]), ratios(loadMs["new"], loadMs["old"]), medianRatio(loadMs["new"], loadMs["old"]),
			fmtMs(cpu["new"]), fmtMs(cpu["old"]), ratios(cpu["new"], cpu["old"]), medianRatio(cpu["new"], cpu["old"]))
		b.ReportMetric(medianRatio(loadMs["new"], loadMs["old"]), "load-new/old")
		b.ReportMetric(medianRatio(cpu["new"], cpu["old"]), "load-cpu-new/old")
	}
	for range b.N {
		consoleCost("no-window")
		enableConsole(b, rec, reg)
		consoleCost("console-window")
		load() // new page loads: no window on them
	}
	var dom any
	pages["new"].eval("__inspectorWorkerClient.stats().dom", &dom)
	if dom != nil {
		b.Fatalf("the new client made a DOM agent though no window asked: %v", dom)
	}
}
