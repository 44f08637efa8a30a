//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Worker memory: a real worker process, a real node host and real sockets;
// the figure is the worker's peak resident set (VmHWM in /proc/PID/status),
// reported, never asserted (the machine is shared). Goals and current
// figures: docs/performance.md, "Memory".
//
//	go test -run '^$' -bench Mem -benchtime 1x ./cmd/inspector-worker

// memHost prints the page bootstrap (endpoint and token for Go pages) and
// offers flood(n): n console.log calls in chunks of 1000 per macrotask,
// then a "flood-end" line. stdout is muted while flooding: the figure is
// the relay's, not the host's terminal.
const memHost = `
console.log('pid ' + process.pid + ' snippet ' + globalThis.inspectorWorker.bootstrapSnippet());
globalThis.flood = (n) => {
  const write = process.stdout.write;
  process.stdout.write = () => true;
  let i = 0;
  (function chunk() {
    for (const end = Math.min(n, i + 1000); i < end; i++) console.log('flood', i);
    if (i < n) { setImmediate(chunk); return; }
    console.log('flood-end');
    process.stdout.write = write;
  })();
  return 'started';
};
setInterval(() => {}, 1000);
`

// procKiB reads one field (VmHWM, VmRSS) of /proc/PID/status, in KiB.
func procKiB(tb testing.TB, pid int, field string) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + field + `:\s+(\d+) kB`).FindSubmatch(data)
	if m == nil {
		tb.Fatalf("no %s in /proc/%d/status", field, pid)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

func mib(kib int) float64 { return float64(kib) / 1024 }

// rawWindow is a DevTools window on a bare socket: the cdptest client keeps
// every message, which is no way to read a million.
type rawWindow struct {
	tb testing.TB
	c  *websocket.Conn
}

func dialRawWindow(tb testing.TB, addr string) *rawWindow {
	c, _, err := websocket.Dial(context.Background(), pageURL(tb, addr), nil)
	if err != nil {
		tb.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	tb.Cleanup(func() { c.CloseNow() })
	return &rawWindow{tb, c}
}

func (w *rawWindow) send(s string) {
	if err := w.c.Write(context.Background(), websocket.MessageText, []byte(s)); err != nil {
		w.tb.Fatal(err)
	}
}

// read returns the next message, or an error after d of silence or on close.
func (w *rawWindow) read(d time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, msg, err := w.c.Read(ctx)
	return msg, err
}

// untilAnswer reads until the answer to request id and returns it.
func (w *rawWindow) untilAnswer(id int) []byte {
	prefix := []byte(`{"id":` + strconv.Itoa(id) + `,`)
	for {
		msg, err := w.read(30 * time.Second)
		if err != nil {
			w.tb.Fatalf("no answer to request %d: %v", id, err)
		}
		if bytes.HasPrefix(msg, prefix) {
			return msg
		}
	}
}

// startFloodHost starts the worker with memHost and returns it with the
// worker's pid.
func startFloodHost(b *testing.B, env ...string) (*workerProc, int) {
	dir, script := writeScript(b, memHost)
	w := startCmdEnv(b, dir, env, "run", "--port", "0", "--", "node", script)
	w.nodePID()
	return w, w.cmd.Process.Pid
}

// BenchmarkMemHostFlood: the host logs 1M console messages to one window
// that reads as fast as it can. Goal: worker peak RSS ≤ 64 MiB.
func BenchmarkMemHostFlood(b *testing.B) {
	const n = 1_000_000
	w, pid := startFloodHost(b)
	win := dialRawWindow(b, w.addr())
	win.send(`{"id":1,"method":"Runtime.enable"}`)
	win.untilAnswer(1)
	base := procKiB(b, pid, "VmRSS")
	b.ResetTimer()
	got, el := win.flood(2, n)
	b.StopTimer()
	peak := procKiB(b, pid, "VmHWM")
	b.ReportMetric(mib(peak), "peak-MiB")
	b.ReportMetric(float64(got)/el.Seconds(), "msgs/s")
	b.Logf("host flood of %d console messages to one reading window: %d delivered in %v (%.0f/s); worker RSS %.1f MiB before, peak %.1f MiB (goal ≤ 64)",
		n, got, el.Round(time.Millisecond), float64(got)/el.Seconds(), mib(base), mib(peak))
}

// flood has the host log n messages (request id) and reads them all; it
// returns how many arrived and how long that took.
func (w *rawWindow) flood(id, n int) (int, time.Duration) {
	start := time.Now()
	w.send(`{"id":` + strconv.Itoa(id) + `,"method":"Runtime.evaluate","params":{"expression":"flood(` + strconv.Itoa(n) + `)"}}`)
	got := 0
	for {
		msg, err := w.read(60 * time.Second)
		if err != nil {
			w.tb.Fatalf("after %d messages: %v", got, err)
		}
		if bytes.HasPrefix(msg, []byte(`{"method":"Runtime.consoleAPICalled"`)) {
			if bytes.Contains(msg, []byte(`"value":"flood-end"`)) {
				return got, time.Since(start)
			}
			got++
		}
	}
}

// BenchmarkMemFloodLimitAB: the cost of the worker's soft memory limit
// (main.go, softMemoryLimit) on a host flood. Two workers, one with the
// limit and one started with GOMEMLIMIT=off, each with a reading window;
// floods of 200k messages alternate between them for 3 rounds. Figures:
// delivered msgs/s of each and their ratio, and each worker's peak RSS.
func BenchmarkMemFloodLimitAB(b *testing.B) {
	const n, rounds = 200_000, 3
	type side struct {
		name string
		pid  int
		win  *rawWindow
		got  int
		el   time.Duration
	}
	var sides []*side
	for _, env := range [][]string{nil, {"GOMEMLIMIT=off"}} {
		w, pid := startFloodHost(b, env...)
		win := dialRawWindow(b, w.addr())
		win.send(`{"id":1,"method":"Runtime.enable"}`)
		win.untilAnswer(1)
		name := "limit"
		if env != nil {
			name = "GOMEMLIMIT=off"
		}
		sides = append(sides, &side{name: name, pid: pid, win: win})
	}
	b.ResetTimer()
	for r := range rounds {
		for _, s := range sides {
			got, el := s.win.flood(2+r, n)
			s.got += got
			s.el += el
		}
	}
	b.StopTimer()
	rate := func(s *side) float64 { return float64(s.got) / s.el.Seconds() }
	b.ReportMetric(rate(sides[0])/rate(sides[1]), "rate-ratio")
	b.ReportMetric(mib(procKiB(b, sides[0].pid, "VmHWM")), "peak-MiB-limit")
	b.ReportMetric(mib(procKiB(b, sides[1].pid, "VmHWM")), "peak-MiB-nolimit")
	b.Logf("host flood, %d rounds of %d each, interleaved: with the soft limit %.0f msgs/s, peak %.1f MiB; GOMEMLIMIT=off %.0f msgs/s, peak %.1f MiB; rate ratio %.2f",
		rounds, n, rate(sides[0]), mib(procKiB(b, sides[0].pid, "VmHWM")), rate(sides[1]), mib(procKiB(b, sides[1].pid, "VmHWM")), rate(sides[0])/rate(sides[1]))
}

// BenchmarkMemStuckWindow: a window enables Runtime, then stops reading
// while the host floods. The worker must close it (1008) once its queue
// passes a bound (cdpserver/queue.go); the figures are the peak RSS, when
// the worker closed it and what the window had been sent by then.
func BenchmarkMemStuckWindow(b *testing.B) {
	const n = 1_000_000
	w, pid := startFloodHost(b, "INSPECTOR_WORKER_DEBUG=1") // the worker logs the close
	win := dialRawWindow(b, w.addr())
	win.send(`{"id":1,"method":"Runtime.enable"}`)
	win.untilAnswer(1)
	base := procKiB(b, pid, "VmRSS")
	b.ResetTimer()
	start := time.Now()
	win.send(`{"id":2,"method":"Runtime.evaluate","params":{"expression":"flood(` + strconv.Itoa(n) + `)"}}`)
	closedRx := regexp.MustCompile(`DevTools connection \d+: closed, it stopped reading[^\n]*`)
	var logLine string
	for deadline := time.Now().Add(3 * time.Minute); logLine == ""; time.Sleep(20 * time.Millisecond) {
		logLine = closedRx.FindString(w.stderr.String())
		if time.Now().After(deadline) {
			b.Fatalf("the worker did not close the stuck window within 3 minutes (RSS %.1f MiB)", mib(procKiB(b, pid, "VmRSS")))
		}
	}
	closedAfter := time.Since(start)
	peakAtClose := procKiB(b, pid, "VmHWM")
	// Now read: what the kernel held, then the close frame.
	got := 0
	var closeErr error
	for {
		msg, err := win.read(30 * time.Second)
		if err != nil {
			closeErr = err
			break
		}
		if bytes.HasPrefix(msg, []byte(`{"method":"Runtime.consoleAPICalled"`)) {
			got++
		}
	}
	time.Sleep(time.Second) // the queue is dropped; let the retiring session drain
	b.StopTimer()
	peak := procKiB(b, pid, "VmHWM")
	after := procKiB(b, pid, "VmRSS")
	b.ReportMetric(mib(peak), "peak-MiB")
	b.ReportMetric(float64(closedAfter.Milliseconds()), "ms-to-close")
	b.Logf("stuck window: closed %v after the flood started (%q); it then read %d console messages and %v; worker RSS %.1f MiB before, peak %.1f MiB (%.1f at the close), %.1f MiB 1 s later",
		closedAfter.Round(time.Millisecond), logLine, got, closeErr, mib(base), mib(peak), mib(peakAtClose), mib(after))
	if websocket.CloseStatus(closeErr) != websocket.StatusPolicyViolation {
		b.Errorf("the stuck window ended with %v, want a 1008 close", closeErr)
	}
}

// BenchmarkMemReplay: 20 pages (Go clients speaking the page protocol on
// ws /client, as client.js does) keep 1,000 console messages each; then 8
// windows open at once and send Runtime.enable. Figures: the worker's peak
// RSS, the time to each Runtime.enable answer (goal ≤ 200 ms) and to the
// end of each window's replay.
func BenchmarkMemReplay(b *testing.B) {
	const pages, perPage, windows = 20, 1000, 8
	w, pid := startFloodHost(b)
	addr := w.addr()
	snippet := w.waitFor(w.stdout, `snippet (<script[^\n]*)`)
	m := regexp.MustCompile(`data-endpoint="([^"]+)" data-token="([^"]+)"`).FindStringSubmatch(snippet)
	if m == nil {
		b.Fatalf("no endpoint and token in %q", snippet)
	}
	for i := range pages {
		startGoPage(b, m[1], m[2], fmt.Sprintf("page%02d", i), perPage)
	}
	// Every page's messages are in the worker once a window sees them all.
	probe := dialRawWindow(b, addr)
	probe.send(`{"id":1,"method":"Runtime.enable"}`)
	if got := countReplay(probe, pages*perPage, 60*time.Second); got != pages*perPage {
		b.Fatalf("the probe window saw %d page messages, want %d", got, pages*perPage)
	}
	probe.c.Close(websocket.StatusNormalClosure, "")
	time.Sleep(500 * time.Millisecond)
	base := procKiB(b, pid, "VmRSS")
	hwmBefore := procKiB(b, pid, "VmHWM")

	b.ResetTimer()
	answers := make([]time.Duration, windows)
	ends := make([]time.Duration, windows)
	counts := make([]int, windows)
	var wg sync.WaitGroup
	wins := make([]*rawWindow, windows)
	for i := range wins {
		wins[i] = dialRawWindow(b, addr)
	}
	start := time.Now()
	for i, win := range wins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			win.send(`{"id":1,"method":"Runtime.enable"}`)
			counts[i] = countReplayTimed(win, pages*perPage, 60*time.Second, func() { answers[i] = time.Since(t0) })
			ends[i] = time.Since(t0)
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	peak := procKiB(b, pid, "VmHWM")
	for i, c := range counts {
		if c != pages*perPage {
			b.Errorf("window %d got %d replayed page messages, want %d", i, c, pages*perPage)
		}
	}
	slices.Sort(answers)
	slices.Sort(ends)
	b.ReportMetric(mib(peak), "peak-MiB")
	b.ReportMetric(float64(answers[windows-1].Milliseconds()), "ms-enable-answer-max")
	b.ReportMetric(float64(ends[windows-1].Milliseconds()), "ms-replay-max")
	b.Logf("%d pages × %d kept messages, %d windows enabling Runtime at once: enable answered in %v median, %v max; replay complete in %v median, %v max (all %v); worker RSS %.1f MiB before (peak so far %.1f), peak %.1f MiB",
		pages, perPage, windows, answers[windows/2].Round(time.Millisecond), answers[windows-1].Round(time.Millisecond),
		ends[windows/2].Round(time.Millisecond), ends[windows-1].Round(time.Millisecond), el.Round(time.Millisecond),
		mib(base), mib(hwmBefore), mib(peak))
}

// countReplay reads until want page console messages arrived (or silence).
func countReplay(w *rawWindow, want int, quiet time.Duration) int {
	return countReplayTimed(w, want, quiet, func() {})
}

// countReplayTimed is countReplay that calls answered on the answer to
// request 1 (Runtime.enable), and keeps reading until it came.
func countReplayTimed(w *rawWindow, want int, quiet time.Duration, answered func()) int {
	got, answer := 0, false
	for got < want || !answer {
		msg, err := w.read(quiet)
		if err != nil {
			return got
		}
		switch {
		case bytes.HasPrefix(msg, []byte(`{"id":1,`)):
			answered()
			answer = true
		case bytes.HasPrefix(msg, []byte(`{"method":"Runtime.consoleAPICalled"`)) && bytes.Contains(msg, []byte(`"executionContextId":-`)):
			got++
		}
	}
	return got
}

// startGoPage connects one page over ws /client and logs perPage console
// messages (a string, an object preview and a three-frame stack: what a
// page's console.log('…', obj) looks like), waiting for each batch's ack.
// The page then stays connected, discarding what the worker sends, until
// the benchmark ends.
func startGoPage(b *testing.B, endpoint, token, id string, perPage int) {
	ctx, cancel := context.WithCancel(context.Background())
	c, _, err := websocket.Dial(ctx, endpoint, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://127.0.0.1:1"}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cancel(); c.CloseNow() })
	c.SetReadLimit(16 << 20)
	p := newGoPage(id, token)
	roundTrip := func(frame []byte) []byte {
		if err := c.Write(ctx, websocket.MessageText, frame); err != nil {
			b.Fatal(err)
		}
		_, ans, err := c.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return ans
	}
	p.welcomed(b, roundTrip(p.hello(b)))
	roundTrip(p.initial(b))
	const batch = 250
	for i := 0; i < perPage; i += batch {
		roundTrip(p.appendLogs(b, i, min(batch, perPage-i)))
	}
	go func() {
		for {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
		}
	}()
}
