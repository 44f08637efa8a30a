//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// Sizes of one round of each mode, per path: big enough that one round
// takes a few hundred ms per path, small enough that the whole benchmark
// with 5 rounds takes about a minute on the 2-core machine. Modes other
// than the round trip run in modeSlices slices per round, alternating paths.
const (
	roundTripCalls = 1000
	pipelineDepth  = 64
	pipelineCalls  = 4000
	burstCount     = 20 // bursts of pipelineDepth calls
	floodMessages  = 15000
	floodQuiet     = 5 * time.Second
	bigResultCalls = 5
	bigResultBytes = 5_000_000
	windowCalls    = 200 // round trips per window in the 8-window mode
	modeSlices     = 8
)

const evalOne = `{"expression":"1"}`

// sample is what one path measured in one round of one mode: the mode's
// metric values (in relayMode.metrics order) and how many messages crossed
// the relay, both ways (for CPU per message).
type sample struct {
	vals []float64
	msgs int
}

// relayMode runs one round of a mode on every path, in the given order,
// and returns one sample per path (indexed by path, not by order).
type relayMode struct {
	name    string
	metrics []metric
	run     func(b *testing.B, paths []*relayPath, order []int) []sample
}

// metric is one figure of a mode. Where docs/performance.md sets a goal for the
// worker, goal is the ratio worker/goalVs it must reach: at most goal for
// latencies, at least goal for rates.
type metric struct {
	name         string
	higherBetter bool // a rate (calls/s, events/s, MB/s), not a latency
	goal         float64
	goalVs       int // a path index; 0 with goal 0 = no goal
}

var relayModes = []relayMode{
	{"roundtrip", []metric{{"p50-µs", false, 1.05, pathSplice}, {"p99-µs", false, 0, 0}}, runRoundTrip},
	{"pipelined", []metric{{"calls/s", true, 0.95, pathSplice}}, sliced(runPipelined, pipelineCalls)},
	{"burst", []metric{{"calls/s", true, 5, pathStock}}, sliced(runBurst, burstCount)},
	{"flood", []metric{{"events/s", true, 0.95, pathSplice}}, sliced(runFlood, floodMessages)},
	{"5MB", []metric{{"MB/s", true, 0.95, pathSplice}}, sliced(runBigResult, bigResultCalls)},
	{"8windows", []metric{{"calls/s", true, 0, 0}}, sliced(runWindows, windowCalls)},
}

// goalText says whether the worker's median ratio r meets met's goal.
func (met metric) goalText(r float64) string {
	if met.goal == 0 {
		return ""
	}
	op, ok := "≤", r <= met.goal
	if met.higherBetter {
		op, ok = "≥", r >= met.goal
	}
	verdict := "met"
	if !ok {
		verdict = "NOT met"
	}
	return fmt.Sprintf("%s%.2f× %s: %s", op, met.goal, pathNames[met.goalVs], verdict)
}

// part is what one slice of a rate mode measured on one path: work done
// (calls, events, MB), the time it took, messages relayed both ways.
type part struct {
	work float64
	d    time.Duration
	msgs int
}

// sliced runs a rate mode of n units per path and round in modeSlices
// slices, path after path in order within each slice, so that a burst of
// machine noise hits every path about alike. The rate is total work over
// total time.
func sliced(f func(b *testing.B, p *relayPath, n int) part, n int) func(*testing.B, []*relayPath, []int) []sample {
	return func(b *testing.B, paths []*relayPath, order []int) []sample {
		sum := make([]part, len(paths))
		for k := range modeSlices {
			m := n / modeSlices
			if k < n%modeSlices {
				m++
			}
			if m == 0 {
				continue
			}
			for _, i := range order {
				p := f(b, paths[i], m)
				sum[i].work += p.work
				sum[i].d += p.d
				sum[i].msgs += p.msgs
			}
		}
		out := make([]sample, len(paths))
		for i, s := range sum {
			out[i] = sample{[]float64{s.work / s.d.Seconds()}, s.msgs}
		}
		return out
	}
}

// runRoundTrip interleaves single Runtime.evaluate calls across the paths,
// so machine noise hits all of them alike.
func runRoundTrip(b *testing.B, paths []*relayPath, order []int) []sample {
	rtt := make([][]time.Duration, len(paths))
	for range roundTripCalls {
		for _, i := range order {
			start := time.Now()
			paths[i].main.call(b, "Runtime.evaluate", evalOne)
			rtt[i] = append(rtt[i], time.Since(start))
		}
	}
	out := make([]sample, len(paths))
	for i := range out {
		slices.Sort(rtt[i])
		p50, p99 := rtt[i][len(rtt[i])/2], rtt[i][len(rtt[i])*99/100]
		out[i] = sample{[]float64{us(p50), us(p99)}, 2 * roundTripCalls}
	}
	return out
}

// runPipelined keeps pipelineDepth calls in flight until n calls were
// answered: a new call goes out as each answer comes back.
func runPipelined(b *testing.B, p *relayPath, n int) part {
	w := p.main
	start := time.Now()
	sent, got := 0, 0
	for ; sent < min(pipelineDepth, n); sent++ {
		w.send(b, "Runtime.evaluate", evalOne)
	}
	for got < n {
		if !isAnswer(w.read(b)) {
			continue
		}
		got++
		if sent < n {
			w.send(b, "Runtime.evaluate", evalOne)
			sent++
		}
	}
	return part{float64(got), time.Since(start), 2 * got}
}

// runBurst sends pipelineDepth calls, awaits all answers, n times: the
// pattern on which a client without TCP_QUICKACK waits ~40 ms per burst for
// Node's Nagle-delayed last answer.
func runBurst(b *testing.B, p *relayPath, n int) part {
	w := p.main
	start := time.Now()
	for range n {
		for range pipelineDepth {
			w.send(b, "Runtime.evaluate", evalOne)
		}
		for got := 0; got < pipelineDepth; {
			if isAnswer(w.read(b)) {
				got++
			}
		}
	}
	calls := n * pipelineDepth
	return part{float64(calls), time.Since(start), 2 * calls}
}

// runFlood asks the host to log n console messages and counts the
// Runtime.consoleAPICalled events the window receives, until the last one.
// Every event must arrive (the window reads as fast as it can): after
// floodQuiet of silence the benchmark fails, as the read timeout has closed
// the connection anyway.
func runFlood(b *testing.B, p *relayPath, n int) part {
	w := p.main
	start := time.Now()
	w.send(b, "Runtime.evaluate", `{"expression":"flood(`+itoa(n)+`)"}`)
	got, answered := 0, false
	var last time.Time
	for got < n || !answered {
		msg, ok := w.readWithin(b, floodQuiet)
		switch {
		case !ok:
			b.Fatalf("%s: flood: %d of %d events arrived, then %v of silence (answered: %v)", p.name, got, n, floodQuiet, answered)
		case isAnswer(msg):
			answered = true
		case bytes.HasPrefix(msg, []byte(`{"method":"Runtime.consoleAPICalled"`)) && bytes.Contains(msg, []byte(`"flood"`)):
			got++
			last = time.Now()
		}
	}
	return part{float64(got), last.Sub(start), got + 2}
}

// runBigResult evaluates a 5 MB string n times.
func runBigResult(b *testing.B, p *relayPath, n int) part {
	start := time.Now()
	for range n {
		msg := p.main.call(b, "Runtime.evaluate", `{"expression":"'x'.repeat(`+itoa(bigResultBytes)+`)"}`)
		if len(msg) < bigResultBytes {
			b.Fatalf("%s: a %d-byte answer to the 5 MB evaluate", p.name, len(msg))
		}
	}
	return part{float64(n*bigResultBytes) / 1e6, time.Since(start), 2 * n}
}

// runWindows has benchWindows windows do n round trips each, all at once;
// the figure is the calls/s of all of them together.
func runWindows(b *testing.B, p *relayPath, n int) part {
	var wg sync.WaitGroup
	errs := make([]error, len(p.windows))
	start := time.Now()
	for i, w := range p.windows {
		wg.Go(func() {
			for range n {
				if _, err := w.callErr("Runtime.evaluate", evalOne); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatalf("%s: %v", p.name, err)
	}
	calls := benchWindows * n
	return part{float64(calls), time.Since(start), 2 * calls}
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
