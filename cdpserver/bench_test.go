package cdpserver

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The relay benchmarks compare a DevTools-like client talking to Node
// directly with the same client talking through the worker, in the same run,
// alternating single operations so that machine noise hits both sides alike
// (sequential A-then-B ratios swing widely on a shared 2-core machine).
//
//	go test -run '^$' -bench 'RelayRoundTrip|RelayPipelined' -benchtime 2000x ./cdpserver
//
// Reported metrics: direct-µs and worker-µs (median round trip), ratio
// (worker/direct, goal ≤ 1.15), and for the pipelined burst throughput-ratio
// (worker rate / direct rate, goal ≥ 0.9).

type rawClient struct {
	c      *websocket.Conn
	nextID int
}

func dialRaw(b *testing.B, url, host string) *rawClient {
	b.Helper()
	c, _, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{Host: host})
	if err != nil {
		b.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	b.Cleanup(func() { c.CloseNow() })
	return &rawClient{c: c}
}

// burst sends n Runtime.evaluate requests without waiting, then reads until
// the last answer arrived.
func (r *rawClient) burst(b *testing.B, n int) {
	ctx := context.Background()
	first := r.nextID + 1
	for range n {
		r.nextID++
		msg := fmt.Appendf(nil, `{"id":%d,"method":"Runtime.evaluate","params":{"expression":"1"}}`, r.nextID)
		if err := r.c.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
	}
	last := fmt.Appendf(nil, `{"id":%d,`, first+n-1)
	for {
		_, msg, err := r.c.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if bytes.HasPrefix(msg, last) {
			return
		}
	}
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func relayPair(b *testing.B) (direct, via *rawClient) {
	w := startWorker(b, hostScript, Options{Logf: func(string, ...any) {}})
	direct = dialRaw(b, w.proc.InspectorURL(), hostOf(w.proc.InspectorURL()))
	via = dialRaw(b, w.srv.PageWebSocketURL(), "")
	direct.burst(b, 10) // warm both paths
	via.burst(b, 10)
	return direct, via
}

func BenchmarkRelayRoundTrip(b *testing.B) {
	direct, via := relayPair(b)
	var dd, vd []time.Duration
	b.ResetTimer()
	for i := range b.N {
		order := []*rawClient{direct, via}
		if i%2 == 1 {
			order = []*rawClient{via, direct}
		}
		for _, c := range order {
			start := time.Now()
			c.burst(b, 1)
			if c == direct {
				dd = append(dd, time.Since(start))
			} else {
				vd = append(vd, time.Since(start))
			}
		}
	}
	b.StopTimer()
	md, mv := median(dd), median(vd)
	b.ReportMetric(float64(md.Nanoseconds())/1e3, "direct-µs")
	b.ReportMetric(float64(mv.Nanoseconds())/1e3, "worker-µs")
	b.ReportMetric(float64(mv)/float64(md), "ratio")
}

func BenchmarkRelayPipelined(b *testing.B) {
	const burst = 100
	direct, via := relayPair(b)
	var dd, vd []time.Duration
	b.ResetTimer()
	for i := range b.N {
		order := []*rawClient{direct, via}
		if i%2 == 1 {
			order = []*rawClient{via, direct}
		}
		for _, c := range order {
			start := time.Now()
			c.burst(b, burst)
			if c == direct {
				dd = append(dd, time.Since(start))
			} else {
				vd = append(vd, time.Since(start))
			}
		}
	}
	b.StopTimer()
	md, mv := median(dd), median(vd)
	b.ReportMetric(burst/md.Seconds(), "direct-req/s")
	b.ReportMetric(burst/mv.Seconds(), "worker-req/s")
	b.ReportMetric(float64(md)/float64(mv), "throughput-ratio")
}

// BenchmarkRelayFlood measures host console events relayed to one window:
// each iteration asks the host for 1,000 console.log calls and reads the
// events and the answer. The host runs as a CommonJS file, so every event's
// stack trace carries a bare-path url the worker rewrites (hostrealm/rewrite.go).
// Profile the relay with
//
//	go test -run '^$' -bench RelayFlood -benchtime 200x -cpuprofile cpu.out ./cdpserver
func BenchmarkRelayFlood(b *testing.B) {
	const n = 1000
	w := startWorker(b, hostScript, Options{Logf: func(string, ...any) {}})
	via := dialRaw(b, w.srv.PageWebSocketURL(), "")
	ctx := context.Background()
	write := func(msg string) {
		if err := via.c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			b.Fatal(err)
		}
	}
	write(`{"id":1,"method":"Runtime.enable"}`)
	await := func(prefix []byte) (events int) {
		for {
			_, msg, err := via.c.Read(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if bytes.HasPrefix(msg, prefix) {
				return events
			}
			if bytes.Contains(msg, []byte(`"Runtime.consoleAPICalled"`)) {
				events++
			}
		}
	}
	await([]byte(`{"id":1,`))
	b.ResetTimer()
	start, cpu0 := time.Now(), processCPU()
	total := 0
	for i := range b.N {
		id := i + 2
		write(fmt.Sprintf(`{"id":%d,"method":"Runtime.evaluate","params":{"expression":"emit(%d)"}}`, id, n))
		total += await(fmt.Appendf(nil, `{"id":%d,`, id))
	}
	b.StopTimer()
	if total < b.N*n {
		b.Fatalf("got %d console events, want %d", total, b.N*n)
	}
	b.ReportMetric(float64(total)/time.Since(start).Seconds(), "events/s")
	// The worker and the reading client share this process; Node does not.
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(total), "proc-cpu-µs/event")
}

// processCPU is this process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRelayBig relays a 5 MB Runtime.evaluate answer per iteration
// (proc-cpu-ms/op: this process's CPU per answer, the worker's and the
// reading client's).
func BenchmarkRelayBig(b *testing.B) {
	w := startWorker(b, hostScript, Options{Logf: func(string, ...any) {}})
	via := dialRaw(b, w.srv.PageWebSocketURL(), "")
	ctx := context.Background()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := range b.N {
		msg := fmt.Appendf(nil, `{"id":%d,"method":"Runtime.evaluate","params":{"expression":"'x'.repeat(5e6)"}}`, i+1)
		if err := via.c.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		_, ans, err := via.c.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(ans) < 5e6 {
			b.Fatalf("answer has %d bytes, want > 5e6", len(ans))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1e3/float64(b.N), "proc-cpu-ms/op")
}
