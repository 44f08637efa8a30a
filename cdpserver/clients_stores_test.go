package cdpserver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/pagerealm"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// What one page can do to the worker's per-window stores, with real
// pages on ws /client (clients_wspage_test.go): its scripts, its page
// items and its objects in a window's table.

// scriptBatch is n script items with URLs unique to prefix, from i0 on.
func scriptBatch(prefix string, i0, n int) []sourceproto.Item {
	items := make([]sourceproto.Item, n)
	for k := range items {
		items[k] = scriptItem(fmt.Sprintf("http://127.0.0.1:1/%s/chunk-%d.js", prefix, i0+k))
	}
	return items
}

// floodScripts sends n scripts in batches of the protocol's size and
// returns the last sequence number.
func (pg *wsPage) floodScripts(prefix string, n int) uint64 {
	var last uint64
	for i := 0; i < n; i += sourceproto.MaxBatchItems {
		last = pg.send(scriptBatch(prefix, i, min(sourceproto.MaxBatchItems, n-i))...)
	}
	return last
}

// linearIngestRatio bounds how much more CPU 10× the scripts may cost to
// ingest: at most 10 for linear work (~4–9 measured: past a page's bound a
// script costs its decode and a map lookup), 48 measured for the quadratic
// scan it guards against (100 without the constant costs). Twice the
// linear worst case, measured in the process's CPU time, which other
// processes' load does not inflate as it does wall time (3,000 scripts
// took 12–197 ms of wall time in one run), the minimum of five runs of
// each size compared.
const linearIngestRatio = 20

// A page's scripts are ingested in time linear in their count: the CPU
// time from the first script sent to the worker's ack of the last, 3,000
// vs 30,000, each size five times on fresh pages (after one warm-up),
// interleaved, the minimum of each compared. A window with the Debugger on
// receives them.
func TestClientScriptIngestIsLinear(t *testing.T) {
	sw := startSocketWorker(t, Options{})
	a := sw.dial("A")
	a.MustCall("Debugger.enable", nil)
	ingest := func(round, n int) (cpu, wall time.Duration) {
		pg := sw.dialPage(t, fmt.Sprintf("linear-%d-%d", round, n), "linear", sourceproto.CapScripts, nil)
		c0, w0 := processCPU(), time.Now()
		pg.waitAcked(pg.floodScripts("r"+strconv.Itoa(round), n))
		cpu, wall = processCPU()-c0, time.Since(w0)
		pg.c.CloseNow()
		<-pg.done
		a.Forget()
		return cpu, wall
	}
	const small, large = 3_000, 30_000
	ingest(-1, small)
	ingest(-1, large)
	var smalls, larges, smallWall, largeWall []time.Duration
	for round := range 5 {
		c, w := ingest(round, small)
		smalls, smallWall = append(smalls, c), append(smallWall, w)
		c, w = ingest(round, large)
		larges, largeWall = append(larges, c), append(largeWall, w)
	}
	s, l := slices.Min(smalls), slices.Min(larges)
	ratio := float64(l) / float64(s)
	t.Logf("ingest of %d scripts: %v CPU (runs %v; wall %v); of %d: %v CPU (runs %v; wall %v); ratio %.1f (linear: ≤ 10; bound %d)",
		small, s, smalls, smallWall, large, l, larges, largeWall, ratio, linearIngestRatio)
	if ratio >= linearIngestRatio {
		t.Fatalf("%d scripts took %.1f× the CPU of %d (bound %d×): ingest is not linear in the count", large, ratio, small, linearIngestRatio)
	}
}

// honestEvalP50Bound is the acceptance bound on the median evaluation
// latency of an honest page while another page floods scripts: 200 ms
// ("stays under 200 ms"), which a loaded machine does not reach with the
// fix (figures in the log) and the old linear lookup under the hub lock
// passed within seconds of the flood.
const honestEvalP50Bound = 200 * time.Millisecond

var leftOutRx = regexp.MustCompile(`Sources lists (\d+) scripts of the page hostile; (\d+) are left out`)

// A hostile page floods scripts while a window evaluates in an honest page:
// the evaluations stay fast, the hostile page's scripts past its bound are
// dropped and announced once, and a window opened afterwards is answered
// Debugger.enable with the bounded list and a notice of how many were left
// out, instead of 100,000 messages and a close.
func TestClientScriptFloodIsBounded(t *testing.T) {
	sw := startSocketWorker(t, Options{})
	a := sw.dial("A")
	enableAll(a)
	sw.dialPage(t, "honest", "honest", sourceproto.CapRuntime|sourceproto.CapScripts, answerNumber)
	ctx := pageContext(t, a, "honest")
	hostile := sw.dialPage(t, "hostile", "hostile", sourceproto.CapScripts, nil)
	hctx := pageContext(t, a, "hostile")

	// The flood: at least floodScripts, as fast as the socket takes them,
	// and on until minEvals evaluations started; it ends when the worker
	// has taken them all (acked; within floodCap, a hang bound: the
	// quadratic ingest took 35.7 s for 100,000). Meanwhile the window
	// evaluates in the honest page every evalEvery.
	const floodScripts, minEvals, floodCap, evalEvery = 60_000, 20, 60 * time.Second, 10 * time.Millisecond
	type flood struct {
		last uint64
		end  time.Time
		err  error
	}
	flooded := make(chan flood, 1)
	var evals atomic.Int32
	start := time.Now()
	stop := make(chan struct{})
	stopped := make(chan struct{})
	t.Cleanup(func() { close(stop); <-stopped }) // before the page's close
	go func() {
		defer close(stopped)
		var f flood
		for sent := 0; sent < floodScripts || evals.Load() < minEvals; sent += sourceproto.MaxBatchItems {
			f.last = hostile.send(scriptBatch("flood", sent, sourceproto.MaxBatchItems)...)
			if time.Since(start) > floodCap || isClosed(stop) {
				break
			}
		}
		f.err = hostile.awaitAcked(f.last, floodCap)
		f.end = time.Now()
		flooded <- f
	}()
	var lat []time.Duration
	var f flood
	for done := false; !done; {
		evals.Add(1)
		t0 := time.Now()
		m := a.MustCall("Runtime.evaluate", map[string]any{"expression": "1", "contextId": ctx.Context.ID})
		if !strings.Contains(string(m.Result), `"value":42`) {
			t.Fatalf("evaluate in the honest page: %s", m.Raw)
		}
		lat = append(lat, time.Since(t0))
		select {
		case f = <-flooded:
			done = true
		case <-time.After(evalEvery):
		}
	}
	sent := int(f.last) // one item per sequence number, from 1
	if len(lat) < minEvals {
		t.Fatalf("%d evaluations during the flood, want %d", len(lat), minEvals)
	}
	slices.Sort(lat)
	p50 := lat[len(lat)/2]
	t.Logf("%d evaluations in the honest page while the hostile page sent %d scripts in %v: p50 %v, max %v",
		len(lat), sent, f.end.Sub(start).Round(time.Millisecond), p50.Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	if p50 > honestEvalP50Bound {
		t.Errorf("the honest page's evaluation p50 was %v during the flood, want under %v", p50, honestEvalP50Bound)
	}
	if f.err != nil {
		t.Fatal(f.err)
	}

	// Window A, on all along, heard once that the page's scripts are cut.
	announced := 0
	for _, m := range a.Events("Log.entryAdded") {
		if strings.Contains(string(m.Params), "the page hostile announced more than") {
			announced++
		}
	}
	if announced != 1 {
		t.Errorf("window A was told %d times that the page's scripts past its bound are dropped, want once", announced)
	}

	// A new window enables the Debugger: the bounded list, then the notice.
	b := sw.dial("B")
	id := b.Send("Debugger.enable", nil)
	b.ExpectResponse(id)
	listed, notice := 0, ""
	for _, m := range b.All() {
		if m.ID != nil && *m.ID == id {
			break
		}
		switch {
		case m.Method == "Debugger.scriptParsed" && strings.Contains(string(m.Params), `"executionContextId":`+strconv.Itoa(hctx.Context.ID)+`,`):
			listed++
		case m.Method == "Log.entryAdded" && leftOutRx.Match(m.Params):
			notice = string(m.Params)
		}
	}
	t.Logf("a new window's Debugger.enable: %d of the hostile page's scripts listed; notice: %s", listed, notice)
	if listed > pagerealm.MaxPageScripts {
		t.Errorf("Debugger.enable listed %d scripts of the hostile page, want at most %d", listed, pagerealm.MaxPageScripts)
	}
	sub := leftOutRx.FindStringSubmatch(notice)
	if sub == nil {
		t.Fatalf("no notice of the scripts left out before the Debugger.enable answer")
	}
	if n, _ := strconv.Atoi(sub[1]); n != listed {
		t.Errorf("the notice says %d scripts are listed, the window got %d", n, listed)
	}
	if n, _ := strconv.Atoi(sub[2]); n != sent-listed {
		t.Errorf("the notice says %d scripts are left out, want %d (sent %d, listed %d)", n, sent-listed, sent, listed)
	}
	// The window is open and answers.
	b.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
}

// A window that pauses reading for 2 s while a page floods page items
// (title changes, and loss reports with them) stays open, as it does
// through a console flood, and gets the page's final state after.
//
// The window's queue is bounded at queueBound messages here, so that the
// flood outgrows it within the pause under -race too; the policy is the
// same at any bound.
const queueBound = 10_000

func TestClientPageItemFloodWindowPausedStaysOpen(t *testing.T) {
	sw := startSocketWorker(t, Options{MaxQueuedMessages: queueBound, Logf: func(string, ...any) {}})
	win := dialSlowWindow(t, sw.srv.PageWebSocketURL())
	win.send(`{"id":1,"method":"Page.enable"}`)
	win.untilAnswer(1)
	pg := sw.dialPage(t, "titles", "titles", sourceproto.CapScripts, nil)

	// The window reads nothing for pause, and until the worker has taken
	// three queues' worth of page items (under -race the worker takes
	// ~20,000 a second, 150,000 without); the page floods until a second
	// after that (at most floodCap, a hang bound), so the window then reads
	// during the flood.
	const pause, after, floodCap = 2 * time.Second, time.Second, time.Minute
	type flood struct {
		items, dropped int
		last           uint64
	}
	done := make(chan flood, 1)
	stop := make(chan struct{})
	reading := make(chan struct{})
	stopped := make(chan struct{})
	t.Cleanup(func() { close(stop); <-stopped }) // before the page's close
	go func() {
		defer close(stopped)
		var f flood
		var readFrom time.Time
		batch := make([]sourceproto.Item, sourceproto.MaxBatchItems)
		for start := time.Now(); time.Since(start) < floodCap && !isClosed(stop); {
			if readFrom.IsZero() && isClosed(reading) {
				readFrom = time.Now()
			}
			if !readFrom.IsZero() && time.Since(readFrom) > after {
				break
			}
			for k := range batch {
				title := "title " + strconv.Itoa(f.items+k)
				batch[k] = sourceproto.Item{Topic: sourceproto.TopicPage, Page: &sourceproto.PageInfo{URL: "http://127.0.0.1:1/titles#" + title, Title: title}}
			}
			if f.items%(8*len(batch)) == 0 {
				pg.dropNext(1) // a loss report with the batch
				f.dropped++
			}
			pg.send(batch...)
			f.items += len(batch)
		}
		f.last = pg.send(sourceproto.Item{Topic: sourceproto.TopicPage, Page: &sourceproto.PageInfo{URL: "http://127.0.0.1:1/final", Title: "final"}})
		f.items++
		done <- f
	}()
	paused := time.Now()
	time.Sleep(pause) // the window reads nothing
	for pg.ackedSeq() < 3*queueBound && time.Since(paused) < floodCap {
		time.Sleep(10 * time.Millisecond)
	}
	pausedFor, taken := time.Since(paused), pg.ackedSeq()
	close(reading)

	var f *flood
	navigated, final, lost := 0, false, 0
	lostRx := regexp.MustCompile(`\] (\d+) observations from [^"]* were lost`)
	for f == nil || !final || lost < f.dropped {
		select {
		case fl := <-done:
			f = &fl
			continue
		default:
		}
		if final && f == nil { // the last item is sent: the flood is over
			fl := <-done
			f = &fl
			continue
		}
		msg, err := win.read(10 * time.Second)
		if err != nil {
			t.Fatalf("the window paused for %v (the worker took %d page items meanwhile) is gone: %v (it got %d frameNavigated, final title: %v, %d losses announced; flood: %+v)",
				pausedFor.Round(time.Millisecond), taken, err, navigated, final, lost, f)
		}
		s := string(msg)
		switch {
		case strings.HasPrefix(s, `{"method":"Page.frameNavigated"`):
			navigated++
			final = strings.Contains(s, `"name":"final"`)
		case strings.HasPrefix(s, `{"method":"Log.entryAdded"`):
			if m := lostRx.FindStringSubmatch(s); m != nil {
				n, _ := strconv.Atoi(m[1])
				lost += n
			}
		}
	}
	pg.waitAcked(f.last)
	t.Logf("a window paused for %v (the worker took %d page items meanwhile) during %d page items (%d loss reports) got %d frameNavigated, the final title, and %d losses announced",
		pausedFor.Round(time.Millisecond), taken, f.items, f.dropped, navigated, lost)
	if lost != f.dropped {
		t.Errorf("%d losses announced, the page reported %d", lost, f.dropped)
	}
}

// answerObjects answers evaluate with a new object handle each time.
func answerObjects() func(*sourceproto.RuntimeCommand) *sourceproto.RuntimeResult {
	next := 0
	return func(c *sourceproto.RuntimeCommand) *sourceproto.RuntimeResult {
		if c.Method != sourceproto.MethodEvaluate {
			return answerNumber(c)
		}
		next++
		return &sourceproto.RuntimeResult{Session: c.Session, ID: c.ID, Method: c.Method, Evaluate: &sourceproto.EvaluateResult{
			Result: sourceproto.RemoteObject{Type: sourceproto.TypeObject, ClassName: "Object", Description: "Object", Handle: "p:" + strconv.Itoa(next)}}}
	}
}

// A page floods window A with console events carrying 115,200 handles
// (more than A's whole table): it fills its own share of A's objects, and
// an honest page's evaluations in A keep returning objects, as do the
// host's.
func TestClientHandleFloodLeavesOtherPagesTheirShare(t *testing.T) {
	sw := startSocketWorker(t, Options{})
	a := sw.dial("A")
	a.MustCall("Runtime.enable", nil)
	sw.dialPage(t, "honest", "honest", sourceproto.CapRuntime, answerObjects())
	ctx := pageContext(t, a, "honest")
	hostile := sw.dialPage(t, "hostile", "hostile", sourceproto.CapConsole|sourceproto.CapRuntime, answerObjects())
	hctx := pageContext(t, a, "hostile")
	wire := hostile.waitSession(1)

	evalObjectIn := func(ctx ctxEvent) (string, string) {
		t.Helper()
		m := a.Call("Runtime.evaluate", map[string]any{"expression": "obj", "contextId": ctx.Context.ID, "objectGroup": "console"})
		if m.Error != nil {
			return "", m.Error.Message
		}
		var ans evalAnswer
		json.Unmarshal(m.Result, &ans)
		return ans.Result.ObjectID, ""
	}
	evalObject := func() (string, string) { t.Helper(); return evalObjectIn(ctx) }
	const events, perEvent, batch = 1800, sourceproto.MaxConsoleArgs, 60
	handles := 0
	var last uint64
	for i := 0; i < events; i += batch {
		items := make([]sourceproto.Item, batch)
		for k := range items {
			ev := &sourceproto.ConsoleEvent{Type: sourceproto.ConsoleLog, Session: wire, Timestamp: 1.7e12}
			for range perEvent {
				handles++
				ev.Args = append(ev.Args, sourceproto.RemoteObject{Type: sourceproto.TypeObject, ClassName: "Object", Description: "Object", Handle: "h:" + strconv.Itoa(handles)})
			}
			items[k] = sourceproto.Item{Topic: sourceproto.TopicConsole, Console: ev}
		}
		last = hostile.send(items...)
		if i%(10*batch) == 0 { // and the honest page is used meanwhile
			if id, why := evalObject(); !object.Owns(id) {
				t.Errorf("an evaluation during the flood failed: %s", why)
			}
		}
	}
	hostile.waitAcked(last)

	okCount, failures := 0, []string{}
	for range 20 {
		id, why := evalObject()
		if object.Owns(id) {
			okCount++
		} else {
			failures = append(failures, why)
		}
	}
	t.Logf("after %d handles from the hostile page: %d of 20 honest evaluations returned objects", handles, okCount)
	if len(failures) > 0 {
		t.Fatalf("%d of 20 evaluations in the honest page failed after the flood, e.g.: %s", len(failures), failures[0])
	}
	told := a.ExpectAnyEvent("Log.entryAdded", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), "the page hostile holds")
	})
	t.Logf("the window was told: %.200s", told.Params)
	hostRes := a.MustCall("Runtime.evaluate", map[string]any{"expression": "({host: true})"})
	if !strings.Contains(string(hostRes.Result), `"objectId"`) || strings.Contains(string(hostRes.Result), `"iw:`) {
		t.Errorf("the host's evaluation: %s", hostRes.Raw)
	}
	// The flooding page itself is refused, with its name and what to do.
	if id, why := evalObjectIn(hctx); id != "" || !strings.Contains(why, `the page "hostile" holds 25000 objects in this window`) || !strings.Contains(why, "clear the Console") {
		t.Errorf("an evaluation in the flooding page: objectId %q, error %q", id, why)
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
