package cdpserver

import (
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
//	go test -run '^$' -bench 'ThreadsConsole' -benchtime 8x -count 6 ./cdpserver

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
			d, _ := c.consoleRound(b, fmt.Sprintf("emit(%d)", n), n, false)
			return d
		})
		report(b, da, dc, ratios, "events/s", n)
	})
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
