//go:build linux

package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkRelayCost shows the worker's own cost on the host path. Four Node hosts, one per path: a direct client with TCP_NODELAY
// and TCP_QUICKACK re-armed after each read (the best a client can do), a
// direct client without QUICKACK (what DevTools does), the same best client
// through a bare TCP splice in a separate process (the floor for any
// separate-process relay), and through the worker (`serve`). Every mode runs
// on all four in each round, interleaved (single calls for round trips,
// modeSlices slices of the rate modes otherwise; the path order rotates
// every round), so machine noise hits all of them alike. Figures are
// reported, never asserted: wall clock on a shared machine.
//
//	go test -run '^$' -bench RelayCost -benchtime 1x ./cmd/inspector-worker
//
// Knobs: IW_RELAY_ROUNDS (default 5, at least 3); IW_RELAY_PERF=FILE
// records a perf CPU profile of the worker over the rounds;
// IW_RELAY_WORKER=BIN and IW_RELAY_BASE_WORKER=BIN (a fifth path) compare
// two worker builds in one run; IW_RELAY_MODES=a,b runs only those modes.
// Goals, how to read the table and current figures: docs/performance.md.
func BenchmarkRelayCost(b *testing.B) {
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("IW_RELAY_ROUNDS")); err == nil {
		rounds = max(v, 3)
	}
	modes := selectModes(b)
	base := os.Getenv("IW_RELAY_BASE_WORKER")
	paths := startRelayPaths(b, base)
	relays := []int{pathWorker, pathSplice}
	cols := ratioCols[:3]
	if base != "" {
		relays, cols = append(relays, pathBase), ratioCols
	}
	for _, p := range paths { // warm every path
		runBurst(b, p, 2)
	}
	// res[mode][metric][path][round]; cpu[mode][relay][round] in µs/message.
	res := make([][][][]float64, len(modes))
	cpu := make([][][]float64, len(modes))
	for m, mode := range modes {
		res[m] = make([][][]float64, len(mode.metrics))
		for k := range res[m] {
			res[m][k] = make([][]float64, len(paths))
		}
		cpu[m] = make([][]float64, len(relays))
	}
	fmt.Printf("worker pid %d, splice pid %d, %d rounds\n", paths[pathWorker].pid, paths[pathSplice].pid, rounds)
	stopPerf := startPerf(b, paths[pathWorker].pid)
	b.ResetTimer()
	for r := range rounds {
		order := make([]int, len(paths)) // rotated: no path always runs first
		for i := range order {
			order[i] = (i + r) % len(paths)
		}
		for m, mode := range modes {
			before := make([]int64, len(paths))
			for _, i := range relays {
				before[i] = procCPU(paths[i].pid)
			}
			out := mode.run(b, paths, order)
			for k, i := range relays {
				ns := procCPU(paths[i].pid) - before[i]
				cpu[m][k] = append(cpu[m][k], float64(ns)/1e3/float64(out[i].msgs))
			}
			for k := range mode.metrics {
				for i := range paths {
					res[m][k][i] = append(res[m][k][i], out[i].vals[k])
				}
			}
		}
	}
	b.StopTimer()
	stopPerf()
	reportRelayCost(b, paths, modes, res, cpu, relays, cols)
}

// selectModes returns the modes IW_RELAY_MODES names (comma-separated, e.g.
// "5MB,flood": to profile one mode), or all of them.
func selectModes(b *testing.B) []relayMode {
	names := os.Getenv("IW_RELAY_MODES")
	if names == "" {
		return relayModes
	}
	var modes []relayMode
	for _, n := range strings.Split(names, ",") {
		i := slices.IndexFunc(relayModes, func(m relayMode) bool { return m.name == n })
		if i < 0 {
			b.Fatalf("IW_RELAY_MODES: no mode %q", n)
		}
		modes = append(modes, relayModes[i])
	}
	return modes
}

// ratioCols are the baselines each worker figure is divided by (w/base
// only with IW_RELAY_BASE_WORKER).
type ratioCol struct {
	name string
	path int
}

var ratioCols = []ratioCol{{"w/splice", pathSplice}, {"w/best", pathBest}, {"w/stock", pathStock}, {"w/base", pathBase}}

// reportRelayCost prints the table to stdout (medians over rounds; a ratio is the
// median of the per-round ratios) and reports the same medians as metrics.
func reportRelayCost(b *testing.B, paths []*relayPath, modes []relayMode, res [][][][]float64, cpu [][][]float64, relays []int, cols []ratioCol) {
	var t strings.Builder
	fmt.Fprintf(&t, "%-20s", "mode metric")
	for _, p := range paths {
		fmt.Fprintf(&t, " %12s", p.name)
	}
	for _, c := range cols {
		fmt.Fprintf(&t, " %9s", c.name)
	}
	fmt.Fprintf(&t, "  %-28s w/splice per round\n", "goal")
	for m, mode := range modes {
		for k, met := range mode.metrics {
			name := mode.name + " " + met.name
			fmt.Fprintf(&t, "%-20s", name)
			for i := range paths {
				fmt.Fprintf(&t, " %12.1f", median(res[m][k][i]))
			}
			for _, c := range cols {
				r := median(divide(res[m][k][pathWorker], res[m][k][c.path]))
				fmt.Fprintf(&t, " %8.2f×", r)
				b.ReportMetric(r, metricName(mode.name+"-"+met.name+"-"+c.name))
			}
			goal := met.goalText(median(divide(res[m][k][pathWorker], res[m][k][met.goalVs])))
			perRound := divide(res[m][k][pathWorker], res[m][k][pathSplice])
			fmt.Fprintf(&t, "  %-28s %s\n", goal, formatRatios(perRound))
		}
	}
	fmt.Fprintf(&t, "\nCPU per relayed message (µs, median over rounds; both directions count):\n%-20s", "mode")
	for _, i := range relays {
		fmt.Fprintf(&t, " %12s", pathNames[i])
	}
	t.WriteString("  worker/splice\n")
	for m, mode := range modes {
		fmt.Fprintf(&t, "%-20s", mode.name)
		for k, i := range relays {
			fmt.Fprintf(&t, " %12.2f", median(cpu[m][k]))
			b.ReportMetric(median(cpu[m][k]), metricName(mode.name+"-cpu-µs/msg-"+pathNames[i]))
		}
		fmt.Fprintf(&t, "  %12.2f×\n", median(divide(cpu[m][0], cpu[m][1])))
	}
	t.WriteString("\nMemory at the end (MiB):\n")
	for _, i := range relays {
		rss, peak := mib(procKiB(b, paths[i].pid, "VmRSS")), mib(procKiB(b, paths[i].pid, "VmHWM"))
		fmt.Fprintf(&t, "%-12s VmRSS %6.1f  VmHWM (peak) %6.1f\n", pathNames[i], rss, peak)
		b.ReportMetric(peak, metricName("peak-MiB-"+pathNames[i]))
	}
	fmt.Fprintf(&t, "\nRatios are worker/baseline, medians of the per-round ratios: for µs lower is better, for rates higher.\n")
	// stdout, not b.Log: the testing package cuts a benchmark's log to
	// ten lines unless -v.
	fmt.Print("\n", t.String())
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

func divide(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] / b[i]
	}
	return out
}

func formatRatios(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, " ")
}

// metricName makes a b.ReportMetric unit: no spaces.
func metricName(s string) string { return strings.ReplaceAll(s, " ", "_") }
