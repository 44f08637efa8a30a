//go:build linux

package cdpserver

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientjs "github.com/inspector-worker/inspector-worker/client/js"
	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
)

// The worker → page command path with a real page: headless Chromium loads
// the shipped client.js, which connects to a real client carrier and the
// hub; a DevTools client drives it. In-process, so the tests read the
// window's object table and the hub's calls in flight directly.

// flowBurst is the burst the flow-control tests send at once: the figure
// of the report that found lost acks and a closed page (10,000 concurrent
// evaluations).
const flowBurst = 10_000

// chromiumBinary is proctest.Chromium (one copy for every package).
func chromiumBinary(t testing.TB) string { t.Helper(); return proctest.Chromium(t) }

// flowPage serves a page with the shipped client.js on a real carrier for
// reg, opens it in headless Chromium, and returns the carrier's log (every
// refused or ended page connection, e.g. "client too slow").
func flowPage(t *testing.T, reg *sourceproto.Registry, token sourceproto.Token) *syncLog {
	t.Helper()
	logs := &syncLog{}
	h, err := carrier.NewClientHandler(carrier.ClientOptions{Registry: reg, Token: token, ClientJS: clientjs.ClientJS(), Logf: logs.logf})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	page := `<!doctype html><html><head><title>Flow page</title>` +
		`<script src="/client.js" data-endpoint="ws://` + ln.Addr().String() + `/client" data-token="` + token.Reveal() + `"></script>` +
		`</head><body>flow</body></html>`
	mux := http.NewServeMux()
	mux.Handle("/client", h)
	mux.Handle("/client.js", h)
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	cmd := exec.Command(chromiumBinary(t), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
		"--user-data-dir="+t.TempDir(), "http://"+ln.Addr().String()+"/")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		proctest.AssertGone(t, cmd.Process.Pid)
	})
	return logs
}

type syncLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *syncLog) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// flowWindow dials a window, enables Runtime and returns the page's context.
func flowWindow(t *testing.T, w *worker, name string) (*cdptest.Client, ctxEvent) {
	t.Helper()
	c := w.dial(name)
	c.SetTimeout(5 * time.Minute) // a hang detector for a burst under -race
	c.MustCall("Runtime.enable", nil)
	m := c.ExpectAnyEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"name":"Flow page"`)
	})
	var ev ctxEvent
	if err := json.Unmarshal(m.Params, &ev); err != nil {
		t.Fatal(err)
	}
	return c, ev
}

// pageRuntimeStats reads the page agent's counters (client.js
// __inspectorWorkerClient.stats().runtime) by value: the evaluation itself
// makes no handle.
type pageRuntimeStats struct {
	Handles      int `json:"handles"`
	Provisional  int `json:"provisional"`
	Running      int `json:"running"`
	AwaitingAck  int `json:"awaitingAck"`
	FreedUnacked int `json:"freedUnacked"`
}

func readPageStats(t *testing.T, c *cdptest.Client, ctx ctxEvent) pageRuntimeStats {
	t.Helper()
	m := c.MustCall("Runtime.evaluate", map[string]any{"expression": "__inspectorWorkerClient.stats().runtime",
		"uniqueContextId": ctx.Context.UniqueID, "returnByValue": true})
	var ans struct {
		Result struct {
			Value pageRuntimeStats `json:"value"`
		} `json:"result"`
	}
	if err := json.Unmarshal(m.Result, &ans); err != nil {
		t.Fatalf("page stats %s: %v", m.Raw, err)
	}
	return ans.Result.Value
}

// burst sends n evaluations of an object at once and returns the answers'
// objectIds (failing on any error answer, with how many failed and why).
func burst(t *testing.T, c *cdptest.Client, ctx ctxEvent, n int, pad string) []string {
	t.Helper()
	ids := make([]int64, n)
	start := time.Now()
	for i := range ids {
		ids[i] = c.Send("Runtime.evaluate", map[string]any{"expression": fmt.Sprintf("({i: %d})%s", i, pad),
			"uniqueContextId": ctx.Context.UniqueID})
	}
	objs := make([]string, 0, n)
	failed, first := 0, ""
	for _, id := range ids {
		m := c.ExpectResponse(id)
		var ans evalAnswer
		_ = json.Unmarshal(m.Result, &ans)
		if m.Error != nil || !object.Owns(ans.Result.ObjectID) {
			if failed++; first == "" {
				first = string(m.Raw)
			}
			continue
		}
		objs = append(objs, ans.Result.ObjectID)
	}
	t.Logf("%d evaluations answered in %v; %d failed", n, time.Since(start).Round(time.Millisecond), failed)
	if failed > 0 {
		t.Fatalf("%d of %d evaluations failed; the first: %s", failed, n, first)
	}
	return objs
}

// contextDestroyed reports whether a window saw the page's context go (its
// connection closed).
func contextDestroyed(c *cdptest.Client, ctx ctxEvent) bool {
	for _, m := range c.Events("Runtime.executionContextDestroyed") {
		if strings.Contains(string(m.Params), ctx.Context.UniqueID) {
			return true
		}
	}
	return false
}

// 10,000 evaluations sent at once into a real page: every returned objectId
// stays usable (1,000 sampled with getProperties), and after the window lets
// go (Runtime.disable) the window's table, the hub's calls in flight and the
// page's handle table are all at 0 — the page was never closed meanwhile.
func TestClientPageBurstObjectsStayUsable(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: 5 * time.Minute})
	logs := flowPage(t, reg, token)
	a, ctx := flowWindow(t, w, "A")
	watch, _ := flowWindow(t, w, "watch") // sees the context go, reads the page's counters
	sess := firstSession(w)

	objs := burst(t, a, ctx, flowBurst, "")
	const sample = 1000
	ids := make([]int64, 0, sample)
	for i := 0; i < sample; i++ {
		ids = append(ids, a.Send("Runtime.getProperties", map[string]any{"objectId": objs[i*len(objs)/sample], "ownProperties": true}))
	}
	dead, first := 0, ""
	for _, id := range ids {
		if m := a.ExpectResponse(id); m.Error != nil || !strings.Contains(string(m.Result), `"name":"i"`) {
			if dead++; first == "" {
				first = string(m.Raw)
			}
		}
	}
	t.Logf("%d of %d sampled objectIds dead", dead, sample)
	if dead > 0 {
		t.Fatalf("%d of %d sampled objectIds are dead; the first: %s\ncarrier log:\n%s", dead, sample, first, logs)
	}
	if st := readPageStats(t, watch, ctx); st.FreedUnacked != 0 {
		t.Fatalf("the page freed %d handles the window holds: %+v", st.FreedUnacked, st)
	}

	a.MustCall("Runtime.disable", nil)
	var objsLeft, calls int
	var st pageRuntimeStats
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		objsLeft, calls = w.srv.clients.ObjectCounts(sess.page)
		st = readPageStats(t, watch, ctx)
		if objsLeft == 0 && calls == 0 && st.Handles == 0 && st.AwaitingAck == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after Runtime.disable: %d objects in the window's table, %d calls in flight; page %+v", objsLeft, calls, st)
		}
	}
	if contextDestroyed(watch, ctx) {
		t.Fatalf("the page was closed during the burst (its handles went with it); carrier log:\n%s", logs)
	}
	t.Logf("after release: table %d, calls %d, page %+v", objsLeft, calls, st)
}

// A page that takes the worker's frames at once survives a 10,000-evaluation
// burst: every request is answered with its value, and the page's
// connection is never closed ("client too slow", 1008) for the worker's own
// commands and acks. The page blocks its main thread for a second as the
// burst starts (a long task, as any page has), so the burst meets a page
// that is not reading at that moment: the old unpaced path filled the
// 1,024-frame outgoing queue then every time, and 4 runs in 6 without it.
func TestClientPageSurvivesBurst(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: 5 * time.Minute})
	logs := flowPage(t, reg, token)
	a, ctx := flowWindow(t, w, "A")
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "setTimeout(() => { const t = Date.now(); while (Date.now() - t < 1000) {} }, 0); 1",
		"uniqueContextId": ctx.Context.UniqueID})
	// ~1 KiB per command, as a Console evaluation with a pasted snippet.
	pad := " // " + strings.Repeat("x", 1000)
	objs := burst(t, a, ctx, flowBurst, pad)
	if len(objs) != flowBurst {
		t.Fatalf("%d objectIds for %d evaluations", len(objs), flowBurst)
	}
	if contextDestroyed(a, ctx) || strings.Contains(logs.String(), "too slow") {
		t.Fatalf("the page was closed during the burst; carrier log:\n%s", logs)
	}
	// Still the same page generation, and it answers.
	if got := evalIn(t, a, ctx, "6*7", ""); string(got.Result.Value) != "42" {
		t.Fatalf("after the burst: %+v", got)
	}
}

// firstSession is the window dialed first (the lowest session id).
func firstSession(w *worker) *Session {
	w.srv.mu.Lock()
	defer w.srv.mu.Unlock()
	var first *Session
	for s := range w.srv.sessions {
		if first == nil || s.id < first.id {
			first = s
		}
	}
	return first
}
