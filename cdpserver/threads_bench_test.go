package cdpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The cost of the host's worker threads to a window (threads.go), in the
// same run against a baseline, interleaved (docs/performance.md "Worker
// threads"):
//
//	go test -run '^$' -bench 'ThreadsIdle/roundtrip' -benchtime 2000x -count 6 ./cdpserver
//	go test -run '^$' -bench 'ThreadsIdle/(pipelined|flood)' -benchtime 40x -count 6 ./cdpserver
//	go test -run '^$' -bench 'ThreadsConsole' -benchtime 10x -count 6 ./cdpserver

// threadBenchHost is hostScript's emit in a host that starts k worker
// threads and prints "host ready" once all are online. threadEmit(n, j)
// makes the first j threads each log n messages at once.
func threadBenchHost(k int) string {
	return strings.Replace(`
const { Worker, isMainThread, parentPort } = require('worker_threads');
if (!isMainThread) {
  parentPort.on('message', (n) => { for (let i = 0; i < n; i++) console.log('thread msg ' + i); });
} else {
  globalThis.emit = (n) => { for (let i = 0; i < n; i++) console.log('msg ' + i); return n; };
  const threads = [];
  const k = THREADS;
  for (let i = 0; i < k; i++) {
    const w = new Worker(__filename);
    w.on('online', () => { if (threads.push(w) === k) process.stdout.write('host ready\n'); });
  }
  if (k === 0) process.stdout.write('host ready\n');
  globalThis.threadEmit = (n, j) => { for (let i = 0; i < j; i++) threads[i].postMessage(n); return j; };
  setInterval(() => {}, 1 << 30);
}
`, "THREADS", fmt.Sprint(k), 1)
}

// benchWait bounds each wait of these benchmarks: a lost event fails the
// run instead of hanging it.
const benchWait = 60 * time.Second

// threadWindow opens a window on w as DevTools opens one: Runtime enabled,
// auto-attach with flat sessions, then Runtime and Debugger enabled in each
// of the want threads' sessions. It returns the window and those sessions.
func threadWindow(b *testing.B, w *worker, want int) (*rawClient, []string) {
	b.Helper()
	c := dialRaw(b, w.srv.PageWebSocketURL(), "")
	ctx, cancel := context.WithTimeout(context.Background(), benchWait)
	defer cancel()
	send := func(format string, args ...any) int {
		c.nextID++
		msg := fmt.Appendf(nil, `{"id":%d,`+format+`}`, append([]any{c.nextID}, args...)...)
		if err := c.c.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		return c.nextID
	}
	// await reads until every id in ids is answered and, past that, until
	// more is false; it returns the thread sessions attached meanwhile.
	await := func(ids []int, more func(attached int) bool) (sessions []string) {
		left := len(ids)
		for left > 0 || more(len(sessions)) {
			_, msg, err := c.c.Read(ctx)
			if err != nil {
				b.Fatalf("window setup: %v (%d of %d answers, %d threads attached)", err, len(ids)-left, len(ids), len(sessions))
			}
			var m struct {
				ID     *int   `json:"id"`
				Method string `json:"method"`
				Error  any    `json:"error"`
				Params struct {
					SessionID string `json:"sessionId"`
				} `json:"params"`
			}
			if json.Unmarshal(msg, &m) != nil {
				continue
			}
			if m.ID != nil && slices.Contains(ids, *m.ID) {
				if m.Error != nil {
					b.Fatalf("window setup: %s", msg)
				}
				left--
			}
			if m.Method == "Target.attachedToTarget" {
				sessions = append(sessions, m.Params.SessionID)
			}
		}
		return sessions
	}
	ids := []int{
		send(`"method":"Runtime.enable"`),
		send(`"method":"Target.setAutoAttach","params":{"autoAttach":true,"waitForDebuggerOnStart":false,"flatten":true}`),
	}
	sessions := await(ids, func(n int) bool { return n < want })
	ids = ids[:0]
	for _, s := range sessions {
		ids = append(ids, send(`"method":"Runtime.enable","sessionId":%q`, s), send(`"method":"Debugger.enable","sessionId":%q`, s))
	}
	await(ids, func(int) bool { return false })
	c.burst(b, 10) // warm the path
	return c, sessions
}

// consoleRound sends one Runtime.evaluate of expr in the main thread's
// session and reads until its answer and want console events arrived. It
// returns the time to the last of them and the events by sessionId ("" for
// the main thread's).
func (r *rawClient) consoleRound(b *testing.B, expr string, want int) (time.Duration, map[string]int) {
	ctx, cancel := context.WithTimeout(context.Background(), benchWait)
	defer cancel()
	r.nextID++
	answer := fmt.Appendf(nil, `{"id":%d,`, r.nextID)
	start := time.Now()
	msg := fmt.Appendf(nil, `{"id":%d,"method":"Runtime.evaluate","params":{"expression":%q,"awaitPromise":true}}`, r.nextID, expr)
	if err := r.c.Write(ctx, websocket.MessageText, msg); err != nil {
		b.Fatal(err)
	}
	bySession := map[string]int{}
	events, answered := 0, false
	for !answered || events < want {
		_, msg, err := r.c.Read(ctx)
		if err != nil {
			b.Fatalf("%s: %v after %d of %d console events", expr, err, events, want)
		}
		if bytes.HasPrefix(msg, answer) {
			answered = true
			continue
		}
		if !bytes.HasPrefix(msg, []byte(`{"method":"Runtime.consoleAPICalled"`)) {
			continue
		}
		events++
		session := ""
		if i := bytes.LastIndex(msg, []byte(`"sessionId":"`)); i >= 0 && bytes.HasSuffix(msg, []byte(`"}`)) {
			session = string(msg[i+len(`"sessionId":"`) : len(msg)-2])
		}
		bySession[session]++
	}
	return time.Since(start), bySession
}

// pairs runs op b.N times on each of a and c, alternating which goes first,
// and returns their durations and the per-pair ratios c/a.
func pairs(b *testing.B, a, c *rawClient, op func(*rawClient) time.Duration) (da, dc []time.Duration, ratios []float64) {
	b.ResetTimer()
	for i := range b.N {
		var ta, tc time.Duration
		if i%2 == 0 {
			ta, tc = op(a), op(c)
		} else {
			tc, ta = op(c), op(a)
		}
		da, dc = append(da, ta), append(dc, tc)
		ratios = append(ratios, float64(tc)/float64(ta))
	}
	b.StopTimer()
	return da, dc, ratios
}

func medianFloat(f []float64) float64 {
	slices.Sort(f)
	return f[len(f)/2]
}

// BenchmarkThreadsIdle measures the main thread's relay through the worker
// from a window on a host without threads (none) and from one on a host
// with 8 idle worker threads attached to the window (8threads: auto-attach
// flatten, Runtime and Debugger enabled in each thread's session), one
// operation on each in turn. Metrics: each side's median, and
// 8threads/none, the median of the per-pair ratios of the figure: of round
// trip times (> 1: the threads cost the main thread), or of rates (< 1).
func BenchmarkThreadsIdle(b *testing.B) {
	quiet := Options{Logf: func(string, ...any) {}}
	none, _ := threadWindow(b, startWorker(b, threadBenchHost(0), quiet), 0)
	eight, _ := threadWindow(b, startWorker(b, threadBenchHost(8), quiet), 8)
	report := func(b *testing.B, da, dc []time.Duration, ratios []float64, unit string, per float64) {
		b.ReportMetric(per/median(da).Seconds(), "none-"+unit)
		b.ReportMetric(per/median(dc).Seconds(), "8threads-"+unit)
		for i, r := range ratios {
			ratios[i] = 1 / r // of the rates
		}
		b.ReportMetric(medianFloat(ratios), "8threads/none")
	}
	b.Run("roundtrip", func(b *testing.B) {
		da, dc, ratios := pairs(b, none, eight, func(c *rawClient) time.Duration {
			start := time.Now()
			c.burst(b, 1)
			return time.Since(start)
		})
		b.ReportMetric(float64(median(da).Nanoseconds())/1e3, "none-µs")
		b.ReportMetric(float64(median(dc).Nanoseconds())/1e3, "8threads-µs")
		b.ReportMetric(medianFloat(ratios), "8threads/none")
	})
	b.Run("pipelined", func(b *testing.B) {
		const n = 100
		da, dc, ratios := pairs(b, none, eight, func(c *rawClient) time.Duration {
			start := time.Now()
			c.burst(b, n)
			return time.Since(start)
		})
		report(b, da, dc, ratios, "req/s", n)
	})
	b.Run("flood", func(b *testing.B) {
		const n = 1000
		da, dc, ratios := pairs(b, none, eight, func(c *rawClient) time.Duration {
			d, _ := c.consoleRound(b, fmt.Sprintf("emit(%d)", n), n)
			return d
		})
		report(b, da, dc, ratios, "events/s", n)
	})
}

// BenchmarkThreadsConsole measures console events from worker threads
// delivered to one window, each on its thread's sessionId: 8 threads
// logging 1,000 messages each at once, against 1 thread logging 8,000 and
// the main thread logging 8,000, in the same rounds, the order rotated
// every round. Metrics: events/s of each, 8threads/1thread and
// 1thread/main (medians of the per-round ratios of the rates), and the CPU
// this process (the worker and the reading client) spent per event of each.
func BenchmarkThreadsConsole(b *testing.B) {
	const threads, n = 8, 1000
	w := startWorker(b, threadBenchHost(threads), Options{Logf: func(string, ...any) {}})
	c, sessions := threadWindow(b, w, threads)
	type mode struct {
		expr string
		per  int // events each of sessions logs; 0: the main thread logs
		n    int // threads logging
	}
	modes := []mode{
		{fmt.Sprintf("emit(%d)", threads*n), 0, 0},
		{fmt.Sprintf("threadEmit(%d, 1)", threads*n), threads * n, 1},
		{fmt.Sprintf("threadEmit(%d, %d)", n, threads), n, threads},
	}
	rates := make([][]float64, len(modes))
	cpu := make([]time.Duration, len(modes)) // this process's: the worker's and the reader's
	b.ResetTimer()
	for i := range b.N {
		for j := range modes {
			k := (i + j) % len(modes)
			m := modes[k]
			cpu0 := processCPU()
			d, got := c.consoleRound(b, m.expr, threads*n)
			b.StopTimer()
			cpu[k] += processCPU() - cpu0
			// Unclocked: the host's main thread writes what the threads
			// logged to stdout after their events arrived; that must not
			// spill into the next mode's figures.
			c.consoleRound(b, "new Promise((r) => setTimeout(r, 100))", 0)
			b.StartTimer()
			checkSessions(b, m.expr, got, sessions, m.n, m.per, threads*n)
			rates[k] = append(rates[k], float64(threads*n)/d.Seconds())
		}
	}
	b.StopTimer()
	var eightToOne, oneToMain []float64
	for i := range b.N {
		eightToOne = append(eightToOne, rates[2][i]/rates[1][i])
		oneToMain = append(oneToMain, rates[1][i]/rates[0][i])
	}
	b.ReportMetric(medianFloat(slices.Clone(rates[0])), "main-events/s")
	b.ReportMetric(medianFloat(slices.Clone(rates[1])), "1thread-events/s")
	b.ReportMetric(medianFloat(slices.Clone(rates[2])), "8threads-events/s")
	for k, name := range []string{"main", "1thread", "8threads"} {
		b.ReportMetric(float64(cpu[k].Nanoseconds())/1e3/float64(b.N*threads*n), name+"-proc-cpu-µs/event")
	}
	b.ReportMetric(medianFloat(eightToOne), "8threads/1thread")
	b.ReportMetric(medianFloat(oneToMain), "1thread/main")
}

// checkSessions fails the benchmark unless the round's events came on the
// sessions they belong to: nThreads thread sessions with per events each,
// or (nThreads 0) the main thread's session with all of them.
func checkSessions(b *testing.B, expr string, got map[string]int, sessions []string, nThreads, per, total int) {
	b.Helper()
	if nThreads == 0 {
		if got[""] != total || len(got) != 1 {
			b.Fatalf("%s: events by session %v, want %d on the main thread's", expr, got, total)
		}
		return
	}
	if len(got) != nThreads {
		b.Fatalf("%s: events on %d sessions %v, want %d", expr, len(got), got, nThreads)
	}
	for s, k := range got {
		if !slices.Contains(sessions, s) || k != per {
			b.Fatalf("%s: %d events on session %q, want %d on one of %v", expr, k, s, per, sessions)
		}
	}
}

// BenchmarkWorkerMessage decodes a thread's console event as Node wraps it
// (NodeWorker.receivedMessageFromWorker): workerMessage against the
// encoding/json decoding it replaced, in one run (-count for the spread).
func BenchmarkWorkerMessage(b *testing.B) {
	event := `{"method":"Runtime.consoleAPICalled","params":{"type":"log","args":[{"type":"string","value":"thread msg 0"}],` +
		`"executionContextId":1,"timestamp":1796315057320.257,"stackTrace":{"callFrames":[{"functionName":"","scriptId":"172",` +
		`"url":"file:///tmp/app/pool.js","lineNumber":3,"columnNumber":72},{"functionName":"[nodejs.internal.kHybridDispatch]",` +
		`"scriptId":"128","url":"node:internal/event_target","lineNumber":830,"columnNumber":19},{"functionName":"","scriptId":"79",` +
		`"url":"node:internal/per_context/messageport","lineNumber":22,"columnNumber":27}]}}}`
	quoted, _ := json.Marshal(event)
	msg := []byte(`{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"1","message":` + string(quoted) + `}}`)
	b.Run("workerMessage", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, inner, ok := workerMessage(msg); !ok || len(inner) != len(event) {
				b.Fatal("not decoded")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, inner, err := workerMessageByJSON(msg); err != nil || len([]byte(inner)) != len(event) {
				b.Fatal("not decoded")
			}
		}
	})
}
