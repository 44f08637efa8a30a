//go:build linux

package clientjs_test

// What the page client costs a page in a real headless Chromium, always
// against plain pages (no client) in the same browser and the same run,
// interleaved: figures are reported as ratios, never asserted (wall clock
// and CPU on a shared machine). The client pages connect to a real client
// carrier and Registry; a console.enable from session "s1" plays an open
// DevTools window (handles for object arguments, as the worker asks).
//
//	go test -run '^$' -bench 'ChromiumConsole(Cost|CPU)$' -benchtime 1x ./client/js/
//	go test -run '^$' -bench ChromiumConsoleProfile -benchtime 1x -v ./client/js/
//
// -v: without it go test cuts a benchmark's log to its first lines.
// IW_BENCH_ROUNDS sets the rounds (default 5). ChromiumConsoleCPU only:
// IW_BENCH_ALT_CLIENT=path/to/client.js runs another version of client.js
// in a third browser in the same rounds (a same-run A/B; the third browser
// starts last and its first round reads ~1.3× in an A/A run: compare the
// later rounds); IW_BENCH_ROUND_THREADS=1 logs each round's CPU by thread;
// IW_BENCH_PROFILE=1 logs a CDP CPU profile of one page of each kind.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientjs "github.com/inspector-worker/inspector-worker/client/js"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
)

// benchJS is loaded by both kinds of page, before client.js on a client
// page: the same loops call whatever console.log the page has.
const benchJS = `
const __log = console.log;
// The floor of any wrapper: a function that only calls the native one.
function __bare() { return __log.apply(this, arguments); }
window.__cost = (n, kind) => {
  const t0 = performance.now();
  if (kind === 'obj') for (let i = 0; i < n; i++) console.log('user', { id: i, name: 'x', nested: { a: 1 }, list: [1, 2, 3] });
  else if (kind === 'bare') for (let i = 0; i < n; i++) __bare.call(console, 'plain string', i);
  else for (let i = 0; i < n; i++) console.log('plain string', i);
  return performance.now() - t0;
};
// addEventListener/removeEventListener on fresh elements: the client
// notes each (listeners.mjs), the plain page does not. native: the
// methods as they were before client.js, in the same page.
const __add = EventTarget.prototype.addEventListener, __remove = EventTarget.prototype.removeEventListener;
window.__listen = (n, native) => {
  const els = [];
  for (let i = 0; i < n; i++) els.push(document.createElement('div'));
  const f = () => {};
  const add = native ? __add : EventTarget.prototype.addEventListener;
  const remove = native ? __remove : EventTarget.prototype.removeEventListener;
  const t0 = performance.now();
  for (const el of els) add.call(el, 'click', f);
  for (const el of els) add.call(el, 'keydown', f, { passive: true });
  for (const el of els) remove.call(el, 'click', f);
  return performance.now() - t0;
};
window.__rate = (perSec, ms) => new Promise((resolve) => {
  let sent = 0;
  const t0 = performance.now();
  const iv = setInterval(() => {
    const now = performance.now();
    const due = Math.min(Math.floor((now - t0) * perSec / 1000), Math.floor(ms * perSec / 1000));
    for (; sent < due; sent++) {
      if (sent % 2) console.log('tick', sent);
      else console.log('tick', sent, { id: sent, name: 'x', nested: { a: 1 }, list: [1, 2, 3] });
    }
    if (now - t0 >= ms) { clearInterval(iv); resolve(sent); }
  }, 10);
});
`

// counter is a recorder that counts console items instead of keeping them.
type counter struct {
	recorder
	console, appends int
}

func (c *counter) Appended(_ sourceproto.SourceRef, _ uint64, a *sourceproto.Append) {
	c.mu.Lock()
	c.appends++
	for _, it := range a.Items {
		if it.Console != nil {
			c.console++
		}
	}
	c.mu.Unlock()
}

// delivered is the console items received and the items the pages said
// they dropped (explained gaps) or that went missing (unexplained).
func (c *counter) delivered() (n int, explained, unexplained uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.gaps {
		explained += g.Explained
		unexplained += g.Count - g.Explained
	}
	return c.console, explained, unexplained
}

// waitDelivered waits until every one of want console calls was delivered
// or announced lost, and reports how many were each.
func (c *counter) waitDelivered(b *testing.B, want int) string {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n, ex, unex := c.delivered()
		if uint64(n)+ex+unex >= uint64(want) || time.Now().After(deadline) {
			c.mu.Lock()
			frames := c.appends
			c.mu.Unlock()
			s := fmt.Sprintf("%d of %d calls delivered (%d append frames so far), %d announced lost, %d unexplained", n, want, frames, ex, unex)
			if uint64(n)+ex < uint64(want) {
				b.Errorf("not every call delivered or announced: %s", s)
			}
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// benchServer serves /plain.html (benchJS only), /client.html (benchJS +
// client.js) and the client carrier (/client, /client.js).
func benchServer(b *testing.B, reg *sourceproto.Registry, token sourceproto.Token) string {
	h, err := carrier.NewClientHandler(carrier.ClientOptions{Registry: reg, Token: token, ClientJS: clientjs.ClientJS()})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	host := ln.Addr().String()
	head := `<!doctype html><html><head><title>bench</title><script src="/bench.js"></script>`
	mux := http.NewServeMux()
	mux.Handle("/client", h)
	mux.Handle("/client.js", h)
	mux.HandleFunc("/bench.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write([]byte(benchJS))
	})
	mux.HandleFunc("/plain.html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(head + `</head><body>plain</body></html>`))
	})
	for _, name := range []string{"client", "client-alt"} {
		mux.HandleFunc("/"+name+".html", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(head + `<script src="/` + name + `.js" data-endpoint="ws://` + host + `/client" data-token="` +
				token.Reveal() + `"></script></head><body>client</body></html>`))
		})
	}
	// IW_BENCH_ALT_CLIENT=file: a second client.js (another version of the
	// code) for ChromiumConsoleCPU's third browser, to compare two versions
	// in the same rounds.
	if alt := os.Getenv("IW_BENCH_ALT_CLIENT"); alt != "" {
		js, err := os.ReadFile(alt)
		if err != nil {
			b.Fatal(err)
		}
		mux.HandleFunc("/client-alt.js", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write(js)
		})
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "http://" + host
}

func benchRounds() int {
	if n, err := strconv.Atoi(os.Getenv("IW_BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5
}

// benchSetup starts the carrier and one browser.
func benchSetup(b *testing.B) (*counter, *sourceproto.Registry, string, *cdpBrowser) {
	token, err := sourceproto.NewToken()
	if err != nil {
		b.Fatal(err)
	}
	rec := &counter{recorder: recorder{bound: 2 * time.Minute}}
	reg := sourceproto.NewRegistry(rec)
	return rec, reg, benchServer(b, reg, token), openCDPBrowser(b)
}

// enableConsole plays an open DevTools window on every opened page.
func enableConsole(b *testing.B, rec *counter, reg *sourceproto.Registry) {
	rec.mu.Lock()
	refs := make([]sourceproto.SourceRef, 0, len(rec.opened))
	for _, o := range rec.opened {
		refs = append(refs, o.Ref)
	}
	rec.mu.Unlock()
	for _, ref := range refs {
		if err := reg.Send(ref, &sourceproto.ConsoleEnable{Session: "s1"}); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond) // the enable reaches the pages
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func ratios(client, plain []float64) []string {
	out := make([]string, len(client))
	for i := range client {
		out[i] = fmt.Sprintf("%.2f", client[i]/plain[i])
	}
	return out
}

// BenchmarkChromiumConsoleCost: the time of 20,000 synchronous
// console.log calls on a client page against a plain page, object
// (a fresh small object per call) and string arguments, in rounds of
// slices of 2,000 calls that alternate between the pages, without and
// then with a DevTools window. Two measures per run: the page's own
// performance.now() around the calls (wall), and the CPU the whole browser
// used meanwhile (the other page idles; work the client defers past the
// calls runs while the next slice does: the plain page's CPU figure
// carries some of it). The headline is the median of the per-round ratios. Every call must reach
// the Registry or be announced lost (the queue holds 10,000 items; a
// 20,000-call burst overflows it).
func BenchmarkChromiumConsoleCost(b *testing.B) {
	const calls, slices = 20000, 10
	rec, reg, base, br := benchSetup(b)
	plain, client := br.open(base+"/plain.html"), br.open(base+"/client.html")
	plain.waitEval("typeof __cost === 'function'")
	client.waitEval("typeof __inspectorWorkerClient === 'object' && __inspectorWorkerClient.stats().state === 'open' && !__inspectorWorkerClient.stats().holding")
	want := 0
	timed := func(p *cdpPage, expr string) (wall, cpu float64) {
		c0 := treeCPU(br.pid)
		p.eval(expr, &wall)
		return wall, float64((treeCPU(br.pid) - c0).Milliseconds())
	}
	run := func(label string) {
		for _, kind := range []string{"str", "obj"} {
			var p, c float64
			plain.eval("__cost(2000, '"+kind+"')", &p) // warm-up
			client.eval("__cost(2000, '"+kind+"')", &c)
			want += 2000
			var pw, cw, pc, cc []float64
			for range benchRounds() {
				// A round is 20,000 calls per page in slices that alternate
				// between the pages (and which goes first): a burst of load
				// from elsewhere on the machine hits both.
				expr := "__cost(" + strconv.Itoa(calls/slices) + ", '" + kind + "')"
				var w1, c1, w2, c2 float64
				for k := range slices {
					first, second := plain, client
					if k%2 == 1 {
						first, second = client, plain
					}
					wa, ca := timed(first, expr)
					wb, cb := timed(second, expr)
					if first == client {
						wa, ca, wb, cb = wb, cb, wa, ca
					}
					w1, c1, w2, c2 = w1+wa, c1+ca, w2+wb, c2+cb
				}
				pw, cw, pc, cc = append(pw, w1), append(cw, w2), append(pc, c1), append(cc, c2)
				want += calls
			}
			name := map[string]string{"str": "string", "obj": "object"}[kind]
			b.Logf("%s, %s arg, %d calls: wall plain %v ms, client %v ms; ratios %v, median %.2fx; browser CPU plain %v ms, client %v ms; ratios %v, median %.2fx",
				label, name, calls, fmtMs(pw), fmtMs(cw), ratios(cw, pw), medianRatio(cw, pw), fmtMs(pc), fmtMs(cc), ratios(cc, pc), medianRatio(cc, pc))
			lb := strings.ReplaceAll(label, " ", "-")
			b.ReportMetric(medianRatio(cw, pw), name+"-wall-"+lb)
			b.ReportMetric(medianRatio(cc, pc), name+"-cpu-"+lb)
		}
		b.Logf("%s: %s", label, rec.waitDelivered(b, want))
	}
	for range b.N {
		run("no window")
		enableConsole(b, rec, reg)
		run("window")
		// The floor: a bare wrapper (calls the native console.log, nothing
		// else) against the native one, both on the plain page.
		var bs, ns []float64
		for range benchRounds() {
			var w1, w2 float64
			for range slices {
				var a, c float64
				plain.eval("__cost("+strconv.Itoa(calls/slices)+", 'bare')", &a)
				plain.eval("__cost("+strconv.Itoa(calls/slices)+", 'str')", &c)
				w1, w2 = w1+a, w2+c
			}
			bs, ns = append(bs, w1), append(ns, w2)
		}
		b.Logf("floor, plain page, string arg: a bare wrapper %v ms, native %v ms; ratios %v, median %.2fx", fmtMs(bs), fmtMs(ns), ratios(bs, ns), medianRatio(bs, ns))
	}
}

// BenchmarkChromiumAddEventListener: what the listener log (listeners.mjs)
// costs a page's addEventListener and removeEventListener: 3 calls on each
// of 20,000 fresh elements (two adds, one remove), client page against
// plain page, alternating, per round; and in the client page itself, the
// wrapped methods against the native ones saved before client.js loaded
// (one renderer: less noise). Headlines: medians of the per-round ratios,
// and the added time per call.
func BenchmarkChromiumAddEventListener(b *testing.B) {
	const n = 20000
	_, _, base, br := benchSetup(b)
	plain, client := br.open(base+"/plain.html"), br.open(base+"/client.html")
	plain.waitEval("typeof __listen === 'function'")
	client.waitEval("typeof __inspectorWorkerClient === 'object'")
	for range b.N {
		var p, c []float64
		var w float64
		plain.eval("__listen(2000)", &w) // warm-up
		client.eval("__listen(2000)", &w)
		for r := range benchRounds() {
			var a, d float64
			first, second := plain, client
			if r%2 == 1 {
				first, second = client, plain
			}
			first.eval("__listen("+strconv.Itoa(n)+")", &a)
			second.eval("__listen("+strconv.Itoa(n)+")", &d)
			if first == client {
				a, d = d, a
			}
			p, c = append(p, a), append(c, d)
		}
		per := (median(c) - median(p)) * 1e6 / (3 * n)
		b.Logf("%d elements x 3 calls: plain %v ms, client %v ms; ratios %v, median %.2fx; %.0f ns more per call",
			n, fmtMs(p), fmtMs(c), ratios(c, p), medianRatio(c, p), per)
		b.ReportMetric(medianRatio(c, p), "client/plain")
		var nat, wr []float64
		for r := range benchRounds() {
			var x, y float64
			if r%2 == 0 {
				client.eval("__listen("+strconv.Itoa(n)+", true)", &x)
				client.eval("__listen("+strconv.Itoa(n)+", false)", &y)
			} else {
				client.eval("__listen("+strconv.Itoa(n)+", false)", &y)
				client.eval("__listen("+strconv.Itoa(n)+", true)", &x)
			}
			nat, wr = append(nat, x), append(wr, y)
		}
		same := (median(wr) - median(nat)) * 1e6 / (3 * n)
		b.Logf("same page: native %v ms, wrapped %v ms; ratios %v, median %.2fx; %.0f ns more per call (native %.0f ns)",
			fmtMs(nat), fmtMs(wr), ratios(wr, nat), medianRatio(wr, nat), same, median(nat)*1e6/(3*n))
		b.ReportMetric(medianRatio(wr, nat), "wrapped/native")
		b.ReportMetric(same, "ns-added/call")
	}
}

// warmRounds: the rounds of ChromiumConsoleCPU in which the client's JIT
// warm-up shows.
const warmRounds = 2

// medianRatio is the median of the per-round ratios a[i]/b[i].
func medianRatio(a, b []float64) float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = a[i] / max(b[i], 1e-9)
	}
	return median(r)
}

func fmtMs(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%.0f", x)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// BenchmarkChromiumConsoleCPU: 20 pages each logging 200 messages/s
// (half with an object argument) for a few seconds, with a DevTools
// window on each client page; Chromium's total CPU (utime+stime summed
// over its process tree) for client pages against plain pages, each kind
// in its own browser, both browsers at work at the same time.
func BenchmarkChromiumConsoleCPU(b *testing.B) {
	const pages, rate, ms = 20, 200, 4000
	rec, reg, base, plainBr := benchSetup(b)
	clientBr := openCDPBrowser(b)
	open := func(br *cdpBrowser, path string) []*cdpPage {
		var ps []*cdpPage
		for range pages {
			ps = append(ps, br.open(base+path))
		}
		return ps
	}
	plainPages, clientPages := open(plainBr, "/plain.html"), open(clientBr, "/client.html")
	var altBr *cdpBrowser
	var altPages []*cdpPage
	if os.Getenv("IW_BENCH_ALT_CLIENT") != "" {
		altBr = openCDPBrowser(b)
		altPages = open(altBr, "/client-alt.html")
	}
	for _, p := range plainPages {
		p.waitEval("typeof __rate === 'function'")
	}
	for _, p := range append(append([]*cdpPage(nil), clientPages...), altPages...) {
		p.waitEval("typeof __inspectorWorkerClient === 'object' && __inspectorWorkerClient.stats().state === 'open'")
	}
	enableConsole(b, rec, reg)
	// Both browsers run at once: whatever else loads the machine (and the
	// CPU time a busy core's sibling steals) weighs on both alike.
	byType := map[string][2]time.Duration{} // summed over the rounds: plain, client
	byThread := map[string][2]time.Duration{}
	threadTypes := []string{"renderer", "utility:network.mojom.NetworkService"}
	var altCPU []float64
	var flt [3]faults // the renderers' over all rounds: plain, client, alt
	both := func() (plainCPU, clientCPU time.Duration, n int) {
		if altBr != nil {
			a0 := treeCPU(altBr.pid)
			defer func() { altCPU = append(altCPU, float64((treeCPU(altBr.pid) - a0).Milliseconds())) }()
		}
		pt0, ct0 := treeCPUByType(plainBr.pid), treeCPUByType(clientBr.pid)
		ph0, ch0 := treeCPUByThread(plainBr.pid, threadTypes...), treeCPUByThread(clientBr.pid, threadTypes...)
		defer func() {
			ph1, ch1 := treeCPUByThread(plainBr.pid, threadTypes...), treeCPUByThread(clientBr.pid, threadTypes...)
			if os.Getenv("IW_BENCH_ROUND_THREADS") != "" {
				var sb strings.Builder
				for _, k := range []string{"renderer/chromium", "renderer/ThreadPoolForeg", "renderer/Chrome_ChildIOT", "utility:network.mojom.NetworkService/Chrome_ChildIOT"} {
					fmt.Fprintf(&sb, " %s %d/%d", k, (ph1[k] - ph0[k]).Milliseconds(), (ch1[k] - ch0[k]).Milliseconds())
				}
				b.Logf("this round, ms plain/client:%s", sb.String())
			}
			addCPU(byThread, 0, ph0, ph1)
			addCPU(byThread, 1, ch0, ch1)
			addCPU(byType, 0, pt0, treeCPUByType(plainBr.pid))
			addCPU(byType, 1, ct0, treeCPUByType(clientBr.pid))
		}()
		browsers := []*cdpBrowser{plainBr, clientBr, altBr}
		var f0 [3]faults
		for i, br := range browsers {
			f0[i] = treeFaults(br)
		}
		defer func() {
			for i, br := range browsers {
				f := treeFaults(br)
				flt[i].minflt += f.minflt - f0[i].minflt
				flt[i].stime += f.stime - f0[i].stime
			}
		}()
		p0, c0 := treeCPU(plainBr.pid), treeCPU(clientBr.pid)
		// IW_BENCH_PROFILE=1: a CPU profile of one page of each kind per round.
		profiled := []*cdpPage{plainPages[0], clientPages[0]}
		if os.Getenv("IW_BENCH_PROFILE") != "" {
			for _, p := range profiled {
				for _, m := range []string{"Profiler.enable", "Profiler.setSamplingInterval", "Profiler.start"} {
					if _, err := p.call(m, map[string]any{"interval": 200}); err != nil {
						b.Fatal(err)
					}
				}
			}
			defer func() {
				for i, p := range profiled {
					res, err := p.call("Profiler.stop", map[string]any{})
					if err != nil {
						b.Fatal(err)
					}
					b.Logf("top self time, %s page:\n%s", []string{"plain", "client"}[i], topSelf(b, res, 30))
				}
			}()
		}
		var wg sync.WaitGroup
		all := append(append(append([]*cdpPage(nil), plainPages...), altPages...), clientPages...)
		sent := make([]int, len(all))
		for i, p := range all {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := p.evalErr(fmt.Sprintf("__rate(%d, %d)", rate, ms), &sent[i]); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		time.Sleep(300 * time.Millisecond) // the last batches are sent and acked
		// The client pages' calls (and the alt pages', which come before them).
		for _, s := range sent[len(plainPages):] {
			n += s
		}
		return treeCPU(plainBr.pid) - p0, treeCPU(clientBr.pid) - c0, n
	}
	for range b.N {
		want := 0
		var ps, cs []float64
		for range benchRounds() {
			p, c, n := both()
			want += n
			ps, cs = append(ps, float64(p.Milliseconds())), append(cs, float64(c.Milliseconds()))
		}
		b.Logf("%d pages x %d msg/s x %d ms, window open: chromium CPU plain %v ms, client %v ms; ratio per round %v, median %.2fx",
			pages, rate, ms, fmtMs(ps), fmtMs(cs), ratios(cs, ps), medianRatio(cs, ps))
		// The headline above counts every round. The first two are where
		// each of the 20 renderers compiles the client's hot path
		// (ChromiumConsoleTrace: ~430 Maglev compiles and ~600 ms of
		// compiler threads in round 2, ~70 and ~80 ms from round 3), so the
		// steady state is reported apart, never instead.
		if len(cs) > warmRounds {
			b.Logf("steady state (rounds after the first %d): ratio per round %v, median %.2fx",
				warmRounds, ratios(cs[warmRounds:], ps[warmRounds:]), medianRatio(cs[warmRounds:], ps[warmRounds:]))
		}
		if altBr != nil {
			b.Logf("alt client (%s): CPU %v ms; ratio to plain per round %v, median %.2fx; alt/client per round %v, median %.2fx",
				os.Getenv("IW_BENCH_ALT_CLIENT"), fmtMs(altCPU), ratios(altCPU, ps), medianRatio(altCPU, ps), ratios(altCPU, cs), medianRatio(altCPU, cs))
		}
		b.Logf("%s", rec.waitDelivered(b, want))
		types := make([]string, 0, len(byType))
		for k := range byType {
			types = append(types, k)
		}
		sort.Strings(types)
		var sb strings.Builder
		for _, k := range types {
			fmt.Fprintf(&sb, " %s %d/%d", k, byType[k][0].Milliseconds(), byType[k][1].Milliseconds())
		}
		b.Logf("CPU by process type over all rounds, ms plain/client:%s", sb.String())
		threads := make([]string, 0, len(byThread))
		for k, v := range byThread {
			if v[0] >= 50*time.Millisecond || v[1] >= 50*time.Millisecond {
				threads = append(threads, k)
			}
		}
		sort.Strings(threads)
		sb.Reset()
		for _, k := range threads {
			fmt.Fprintf(&sb, " %s %d/%d", k, byThread[k][0].Milliseconds(), byThread[k][1].Milliseconds())
		}
		b.Logf("CPU by thread (renderers, network service; >= 50 ms) over all rounds, ms plain/client:%s", sb.String())
		b.Logf("renderers over all rounds, plain/client/alt: minor page faults %d/%d/%d, system CPU %d/%d/%d ms",
			flt[0].minflt, flt[1].minflt, flt[2].minflt, flt[0].stime.Milliseconds(), flt[1].stime.Milliseconds(), flt[2].stime.Milliseconds())
		b.ReportMetric(medianRatio(cs, ps), "cpu-ratio")
	}
}

// BenchmarkChromiumConsoleProfile: CPU profiles (CDP Profiler, 100 µs
// sampling) of 20,000 string and then 20,000 object console.log calls on a
// client page with a DevTools window open, and of the same calls on a
// plain page; logs the functions with the most self time. The native
// console.log's own time shows as its caller's self time (on a client
// page the wrapper, on a plain page __cost).
func BenchmarkChromiumConsoleProfile(b *testing.B) {
	rec, reg, base, br := benchSetup(b)
	plain, client := br.open(base+"/plain.html"), br.open(base+"/client.html")
	plain.waitEval("typeof __cost === 'function'")
	client.waitEval("typeof __inspectorWorkerClient === 'object' && __inspectorWorkerClient.stats().state === 'open' && !__inspectorWorkerClient.stats().holding")
	enableConsole(b, rec, reg)
	for _, p := range []*cdpPage{plain, client} {
		p.eval("__cost(2000, 'str') + __cost(2000, 'obj')", nil)
		for _, m := range []string{"Profiler.enable", "Profiler.setSamplingInterval"} {
			if _, err := p.call(m, map[string]any{"interval": 100}); err != nil {
				b.Fatal(err)
			}
		}
	}
	for range b.N {
		for _, kind := range []string{"str", "obj"} {
			for _, pg := range []struct {
				name string
				p    *cdpPage
			}{{"plain", plain}, {"client", client}} {
				if _, err := pg.p.call("Profiler.start", map[string]any{}); err != nil {
					b.Fatal(err)
				}
				pg.p.eval("__cost(20000, '"+kind+"')", nil)
				// The flush after the calls (timers, WebSocket sends) is in the profile too.
				pg.p.eval("new Promise((r) => setTimeout(r, 500))", nil)
				res, err := pg.p.call("Profiler.stop", map[string]any{})
				if err != nil {
					b.Fatal(err)
				}
				b.Logf("top self time, %s page, %s args, window open:\n%s", pg.name, kind, topSelf(b, res, 25))
			}
		}
	}
}

// topSelf sums a CDP Profile's hit counts by function and lists the top n.
func topSelf(b *testing.B, raw json.RawMessage, n int) string {
	var r struct {
		Profile struct {
			Nodes []struct {
				CallFrame profileFrame
				HitCount  int
			}
		}
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		b.Fatal(err)
	}
	self := map[string]int{}
	total := 0
	for _, nd := range r.Profile.Nodes {
		self[nd.CallFrame.key()] += nd.HitCount
		total += nd.HitCount
	}
	keys := byCount(self)
	var sb strings.Builder
	own := 0
	for _, k := range keys {
		if strings.Contains(k, "client.js:") {
			own += self[k]
		}
	}
	idle := self["(idle)"] + self["(program)"]
	fmt.Fprintf(&sb, "%d samples (%d idle or program); client.js functions %.1f%% of self time\n", total, idle, 100*float64(own)/float64(max(total, 1)))
	for i, k := range keys {
		if i == n {
			break
		}
		fmt.Fprintf(&sb, "%6.1f%%  %s\n", 100*float64(self[k])/float64(max(total, 1)), k)
	}
	return sb.String()
}

// profileFrame is a CDP Profiler node's callFrame, as the benchmarks read it.
type profileFrame struct {
	FunctionName string
	URL          string
	LineNumber   int
}

// key names the frame "function file:line" (1-based), or the function
// alone when it has no URL ((program), (garbage collector)…).
func (f profileFrame) key() string {
	name := f.FunctionName
	if name == "" {
		name = "(anonymous)"
	}
	if f.URL == "" {
		return name
	}
	return name + " " + baseName(f.URL) + ":" + strconv.Itoa(f.LineNumber+1)
}

// baseName is a URL's last path element.
func baseName(url string) string {
	if i := strings.LastIndexByte(url, '/'); i >= 0 {
		return url[i+1:]
	}
	return url
}

// byCount is m's keys, the largest count first.
func byCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	return keys
}

// addCPU adds the CPU each key used between before and after to column col
// (0 plain, 1 client) of sum.
func addCPU(sum map[string][2]time.Duration, col int, before, after map[string]time.Duration) {
	for k, v := range after {
		e := sum[k]
		e[col] += v - before[k]
		sum[k] = e
	}
}
