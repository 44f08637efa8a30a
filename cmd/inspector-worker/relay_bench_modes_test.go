//go:build linux

package main

import (
	"bytes"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// Sizes of one round of each mode, per path: big enough that one round
// takes a few hundred ms per path, small enough that the whole benchmark
// with 5 rounds takes about a minute on the 2-core machine.
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
	run     func(b *testing.B, paths [numPaths]*relayPath, order []int) [numPaths]sample
}

type metric struct {
	name         string
	higherBetter bool // throughput (ratio ≥ 1 is good) or latency (≤ 1 is good)
}

var relayModes = []relayMode{
	{"roundtrip", []metric{{"p50-µs", false}, {"p99-µs", false}}, runRoundTrip},
	{"pipelined", []metric{{"calls/s", true}}, eachPath(runPipelined)},
	{"burst", []metric{{"calls/s", true}}, eachPath(runBurst)},
	{"flood", []metric{{"events/s", true}}, eachPath(runFlood)},
	{"5MB", []metric{{"MB/s", true}}, eachPath(runBigResult)},
	{"8windows", []metric{{"calls/s", true}}, eachPath(runWindows)},
}

// eachPath runs a mode path after path, in order.
func eachPath(f func(b *testing.B, p *relayPath) sample) func(*testing.B, [numPaths]*relayPath, []int) [numPaths]sample {
	return func(b *testing.B, paths [numPaths]*relayPath, order []int) (out [numPaths]sample) {
		for _, i := range order {
			out[i] = f(b, paths[i])
		}
		return out
	}
}

// runRoundTrip interleaves single Runtime.evaluate calls across the paths,
// so machine noise hits all of them alike.
func runRoundTrip(b *testing.B, paths [numPaths]*relayPath, order []int) (out [numPaths]sample) {
	var rtt [numPaths][]time.Duration
	for range roundTripCalls {
		for _, i := range order {
			start := time.Now()
			paths[i].main.call(b, "Runtime.evaluate", evalOne)
			rtt[i] = append(rtt[i], time.Since(start))
		}
	}
	for i := range out {
		slices.Sort(rtt[i])
		p50, p99 := rtt[i][len(rtt[i])/2], rtt[i][len(rtt[i])*99/100]
		out[i] = sample{[]float64{us(p50), us(p99)}, 2 * roundTripCalls}
	}
	return out
}

// runPipelined keeps pipelineDepth calls in flight: a new call goes out as
// each answer comes back.
func runPipelined(b *testing.B, p *relayPath) sample {
	w := p.main
	start := time.Now()
	sent, got := 0, 0
	for ; sent < pipelineDepth; sent++ {
		w.send(b, "Runtime.evaluate", evalOne)
	}
	for got < pipelineCalls {
		if !isAnswer(w.read(b)) {
			continue
		}
		got++
		if sent < pipelineCalls {
			w.send(b, "Runtime.evaluate", evalOne)
			sent++
		}
	}
	return sample{[]float64{perSec(got, time.Since(start))}, 2 * got}
}

// runBurst sends pipelineDepth calls, awaits all answers, and repeats: the
// pattern on which a client without TCP_QUICKACK waits ~40 ms per burst for
// Node's Nagle-delayed last answer.
func runBurst(b *testing.B, p *relayPath) sample {
	w := p.main
	start := time.Now()
	for range burstCount {
		for range pipelineDepth {
			w.send(b, "Runtime.evaluate", evalOne)
		}
		for got := 0; got < pipelineDepth; {
			if isAnswer(w.read(b)) {
				got++
			}
		}
	}
	n := burstCount * pipelineDepth
	return sample{[]float64{perSec(n, time.Since(start))}, 2 * n}
}

// runFlood asks the host to log floodMessages console messages and counts
// the Runtime.consoleAPICalled events the window receives, until the last
// one. Every event must arrive (the window reads as fast as it can): after
// floodQuiet of silence the benchmark fails, as the read timeout has closed
// the connection anyway.
func runFlood(b *testing.B, p *relayPath) sample {
	w := p.main
	start := time.Now()
	w.send(b, "Runtime.evaluate", `{"expression":"flood(`+itoa(floodMessages)+`)"}`)
	got, answered := 0, false
	var last time.Time
	for got < floodMessages || !answered {
		msg, ok := w.readWithin(b, floodQuiet)
		switch {
		case !ok:
			b.Fatalf("%s: flood: %d of %d events arrived, then %v of silence (answered: %v)", p.name, got, floodMessages, floodQuiet, answered)
		case isAnswer(msg):
			answered = true
		case bytes.HasPrefix(msg, []byte(`{"method":"Runtime.consoleAPICalled"`)) && bytes.Contains(msg, []byte(`"flood"`)):
			got++
			last = time.Now()
		}
	}
	return sample{[]float64{perSec(got, last.Sub(start))}, got + 2}
}

// runBigResult evaluates a 5 MB string, bigResultCalls times.
func runBigResult(b *testing.B, p *relayPath) sample {
	start := time.Now()
	for range bigResultCalls {
		msg := p.main.call(b, "Runtime.evaluate", `{"expression":"'x'.repeat(`+itoa(bigResultBytes)+`)"}`)
		if len(msg) < bigResultBytes {
			b.Fatalf("%s: a %d-byte answer to the 5 MB evaluate", p.name, len(msg))
		}
	}
	mb := float64(bigResultCalls*bigResultBytes) / 1e6
	return sample{[]float64{mb / time.Since(start).Seconds()}, 2 * bigResultCalls}
}

// runWindows has benchWindows windows do windowCalls round trips each, all
// at once; the figure is the calls/s of all of them together.
func runWindows(b *testing.B, p *relayPath) sample {
	var wg sync.WaitGroup
	errs := make([]error, len(p.windows))
	start := time.Now()
	for i, w := range p.windows {
		wg.Go(func() {
			for range windowCalls {
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
	n := benchWindows * windowCalls
	return sample{[]float64{perSec(n, time.Since(start))}, 2 * n}
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func perSec(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }
