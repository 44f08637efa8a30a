package cdpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// consoleRound sends one Runtime.evaluate of expr in the main thread's
// session and reads until its answer and want console events arrived. It
// returns the time to the last of them and the events by thread sessionId
// ("" for the main thread's). direct: r is on Node's own inspector, where
// a thread's event comes inside NodeWorker.receivedMessageFromWorker.
func (r *rawClient) consoleRound(b *testing.B, expr string, want int, direct bool) (time.Duration, map[string]int) {
	ctx, cancel := context.WithTimeout(context.Background(), benchWait)
	defer cancel()
	r.nextID++
	answer := fmt.Appendf(nil, `{"id":%d,`, r.nextID)
	start := time.Now()
	msg := fmt.Appendf(nil, `{"id":%d,"method":"Runtime.evaluate","params":{"expression":%q,"awaitPromise":true}}`, r.nextID, expr)
	if err := r.c.Write(ctx, websocket.MessageText, msg); err != nil {
		b.Fatal(err)
	}
	sessionKey := []byte(`"sessionId":"`)
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
		session := ""
		switch {
		case direct && bytes.HasPrefix(msg, []byte(`{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"`)) &&
			bytes.Contains(msg, []byte(`Runtime.consoleAPICalled`)):
			rest := msg[bytes.Index(msg, sessionKey)+len(sessionKey):]
			session = string(rest[:bytes.IndexByte(rest, '"')])
		case !direct && bytes.HasPrefix(msg, []byte(`{"method":"Runtime.consoleAPICalled"`)):
			if i := bytes.LastIndex(msg, sessionKey); i >= 0 && bytes.HasSuffix(msg, []byte(`"}`)) {
				session = string(msg[i+len(sessionKey) : len(msg)-2])
			}
		default:
			continue
		}
		events++
		bySession[session]++
	}
	return time.Since(start), bySession
}

// directThreads opens a client on w's Node inspector with NodeWorker
// enabled and Runtime enabled in each of the want threads, as the worker
// does for a window. It returns the client and the threads' sessions.
func directThreads(b *testing.B, w *worker, want int) (*rawClient, []string) {
	b.Helper()
	c := dialRaw(b, w.proc.InspectorURL(), hostOf(w.proc.InspectorURL()))
	ctx, cancel := context.WithTimeout(context.Background(), benchWait)
	defer cancel()
	write := func(msg string) {
		if err := c.c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			b.Fatal(err)
		}
	}
	write(`{"id":1,"method":"NodeWorker.enable","params":{"waitForDebuggerOnStart":false}}`)
	var sessions []string
	for enabled := 0; enabled < want; {
		_, msg, err := c.c.Read(ctx)
		if err != nil {
			b.Fatalf("direct setup: %v (%d threads attached, %d enabled)", err, len(sessions), enabled)
		}
		if bytes.HasPrefix(msg, []byte(`{"method":"NodeWorker.attachedToWorker"`)) {
			var m struct {
				Params struct {
					SessionID string `json:"sessionId"`
				} `json:"params"`
			}
			if err := json.Unmarshal(msg, &m); err != nil {
				b.Fatal(err)
			}
			sessions = append(sessions, m.Params.SessionID)
			write(fmt.Sprintf(`{"id":%d,"method":"NodeWorker.sendMessageToWorker","params":{"sessionId":%q,"message":"{\"id\":1,\"method\":\"Runtime.enable\"}"}}`,
				1+len(sessions), m.Params.SessionID))
		}
		if bytes.Contains(msg, []byte(`"message":"{\"id\":1,\"result\"`)) {
			enabled++
		}
	}
	c.nextID = 1 + want
	return c, sessions
}

// BenchmarkThreadsConsole measures console events from worker threads
// delivered to one window, each on its thread's sessionId: 8 threads
// logging 1,000 messages each at once, against 1 thread logging 8,000 and
// the main thread logging 8,000; and the same thread modes on a second
// host read straight from Node's inspector (direct: what Node alone
// delivers). Five modes per round, the order rotated every round. Metrics:
// events/s of each; 8threads/1thread, direct-8threads/1thread,
// 1thread/main, 8threads/direct and 1thread/direct (medians of the
// per-round ratios of the rates); and the CPU this process (the worker and
// the reading client) spent per event of each worker mode.
func BenchmarkThreadsConsole(b *testing.B) {
	const threads, n = 8, 1000
	quiet := Options{Logf: func(string, ...any) {}}
	c, sessions := threadWindow(b, startWorker(b, threadBenchHost(threads), quiet), threads)
	d, direct := directThreads(b, startWorker(b, threadBenchHost(threads), quiet), threads)
	type mode struct {
		name   string
		c      *rawClient
		expr   string
		per, k int // events each thread logs, threads logging (0: the main thread logs)
	}
	one, eight := fmt.Sprintf("threadEmit(%d, 1)", threads*n), fmt.Sprintf("threadEmit(%d, %d)", n, threads)
	modes := []mode{
		{"main", c, fmt.Sprintf("emit(%d)", threads*n), 0, 0},
		{"1thread", c, one, threads * n, 1},
		{"8threads", c, eight, n, threads},
		{"direct-1thread", d, one, threads * n, 1},
		{"direct-8threads", d, eight, n, threads},
	}
	rates := make([][]float64, len(modes))
	cpu := make([]time.Duration, len(modes)) // this process's: the worker's and the reader's
	b.ResetTimer()
	for i := range b.N {
		for j := range modes {
			k := (i + j) % len(modes)
			m := modes[k]
			cpu0 := processCPU()
			took, got := m.c.consoleRound(b, m.expr, threads*n, m.c == d)
			b.StopTimer()
			cpu[k] += processCPU() - cpu0
			want := sessions
			if m.c == d {
				want = direct
			}
			checkSessions(b, m.expr, got, want, m.k, m.per, threads*n)
			rates[k] = append(rates[k], float64(threads*n)/took.Seconds())
			// Unclocked: the host's main thread writes what the threads
			// logged to stdout after their events arrived; that must not
			// spill into the next mode's figures.
			m.c.consoleRound(b, "new Promise((r) => setTimeout(r, 100))", 0, false)
			b.StartTimer()
		}
	}
	b.StopTimer()
	for k, m := range modes {
		b.ReportMetric(medianFloat(slices.Clone(rates[k])), m.name+"-events/s")
		if m.c == c {
			b.ReportMetric(float64(cpu[k].Nanoseconds())/1e3/float64(b.N*threads*n), m.name+"-proc-cpu-µs/event")
		}
	}
	ratio := func(name string, x, y int) {
		r := make([]float64, b.N)
		for i := range r {
			r[i] = rates[x][i] / rates[y][i]
		}
		b.ReportMetric(medianFloat(r), name)
	}
	ratio("8threads/1thread", 2, 1)
	ratio("direct-8threads/1thread", 4, 3)
	ratio("1thread/main", 1, 0)
	ratio("8threads/direct", 2, 4)
	ratio("1thread/direct", 1, 3)
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
