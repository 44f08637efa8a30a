//go:build linux

package clientjs_test

// The page realm in a real browser: headless Chromium loads a page with
// the shipped client.js, which connects to a real client carrier
// (sourceproto/carrier) and Registry; the test plays the worker's Runtime
// consumer with Registry.Send and reads the page's runtime.result frames.

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	clientjs "github.com/inspector-worker/inspector-worker/client/js"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
)

// chromium is proctest.Chromium (one copy for every package).
func chromium(t testing.TB) string { t.Helper(); return proctest.Chromium(t) }

// openChromium starts headless chromium on url; its whole process group
// is killed at test end.
func openChromium(t testing.TB, url string) {
	t.Helper()
	startChromium(t, t.TempDir(), url)
}

// startChromium starts headless chromium with the tests' flags, more, a
// profile in dir and url, and returns its pid; its whole process group is
// killed at test end.
func startChromium(t testing.TB, dir, url string, more ...string) int {
	t.Helper()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + dir}, more...)
	cmd := exec.Command(chromium(t), append(args, url)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		proctest.AssertGone(t, cmd.Process.Pid)
	})
	return cmd.Process.Pid
}

// pageServer serves "/" (the page), "/csp" (the same page with a
// Content-Security-Policy that forbids eval) and the client carrier.
func pageServer(t testing.TB, reg *sourceproto.Registry, token sourceproto.Token) string {
	t.Helper()
	h, err := carrier.NewClientHandler(carrier.ClientOptions{Registry: reg, Token: token, ClientJS: clientjs.ClientJS()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	page := `<!doctype html><html><head><title>Chromium page</title>` +
		`<script src="/client.js" data-endpoint="ws://` + ln.Addr().String() + `/client" data-token="` + token.Reveal() + `"></script>` +
		`</head><body><div id="app" class="card wide">app</div></body></html>`
	mux := http.NewServeMux()
	mux.Handle("/client", h)
	mux.Handle("/client.js", h)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/csp" {
			w.Header().Set("Content-Security-Policy", "script-src 'self'")
		} else if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return base
}

// pageRuntime sends runtime commands to one page source and waits for
// each answer.
type pageRuntime struct {
	t   testing.TB
	reg *sourceproto.Registry
	rec *recorder
	ref sourceproto.SourceRef
	id  uint64
}

func (p *pageRuntime) evaluate(e sourceproto.EvaluateParams) *sourceproto.RuntimeResult {
	p.t.Helper()
	p.id++
	id := p.id
	if err := p.reg.Send(p.ref, &sourceproto.RuntimeCommand{Session: "s1", ID: id, Method: sourceproto.MethodEvaluate, Evaluate: &e}); err != nil {
		p.t.Fatal(err)
	}
	var got *sourceproto.RuntimeResult
	p.rec.wait(p.t, "runtime.result "+e.Expression, func() bool {
		for _, b := range p.rec.responses {
			if r, ok := b.(*sourceproto.RuntimeResult); ok && r.ID == id && r.Session == "s1" {
				got = r
				return true
			}
		}
		return false
	})
	return got
}

func openedPage(t testing.TB, rec *recorder, n int) sourceproto.SourceRef {
	t.Helper()
	rec.wait(t, "page source", func() bool { return len(rec.opened) >= n })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.opened[n-1].Ref
}

// chromiumClientPage opens one client page in headless Chromium, served
// with a real carrier and Registry, and returns its source's runtime (and
// through it the recorder of what the page sent) and the server's base URL.
func chromiumClientPage(t *testing.T) (*pageRuntime, string) {
	t.Helper()
	token, err := sourceproto.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	reg := sourceproto.NewRegistry(rec)
	base := pageServer(t, reg, token)
	openChromium(t, base+"/")
	return &pageRuntime{t: t, reg: reg, rec: rec, ref: openedPage(t, rec, 1)}, base
}

func TestChromiumPageRuntime(t *testing.T) {
	p, base := chromiumClientPage(t)
	rec, reg := p.rec, p.reg

	if r := p.evaluate(sourceproto.EvaluateParams{Expression: "document.title"}); r.Evaluate == nil || string(r.Evaluate.Result.Value) != `"Chromium page"` {
		t.Fatalf("document.title: %+v %+v", r.Evaluate, r.Error)
	}
	node := p.evaluate(sourceproto.EvaluateParams{Expression: "document.getElementById('app')"})
	if res := node.Evaluate.Result; res.Subtype != "node" || res.Description != "div#app.card.wide" || res.ClassName != "HTMLDivElement" || res.Handle == "" {
		t.Fatalf("DOM node: %+v", res)
	}
	thrown := p.evaluate(sourceproto.EvaluateParams{Expression: "nope()"})
	if d := thrown.Evaluate.ExceptionDetails; d == nil || d.Exception == nil || !strings.HasPrefix(d.Exception.Description, "ReferenceError: nope is not defined") {
		t.Fatalf("exception: %+v", thrown.Evaluate)
	}
	awaited := p.evaluate(sourceproto.EvaluateParams{Expression: "new Promise((r) => setTimeout(() => r(location.pathname), 10))", AwaitPromise: true})
	if string(awaited.Evaluate.Result.Value) != `"/"` {
		t.Fatalf("awaitPromise: %+v", awaited.Evaluate)
	}

	// A console call's stack starts at the page's caller: the client's own
	// frames (its console wrapper) are left out, string and object calls alike.
	p.evaluate(sourceproto.EvaluateParams{Expression: "(function pageCaller() { console.log('stack check', 1); console.log('stack check', { a: 1 }); })()"})
	rec.wait(t, "two stack-check items", func() bool {
		n := 0
		for _, it := range rec.items {
			if c := it.Console; c != nil && len(c.Args) == 2 && string(c.Args[0].Value) == `"stack check"` {
				n++
				if c.StackTrace == nil || len(c.StackTrace.CallFrames) == 0 || c.StackTrace.CallFrames[0].FunctionName != "pageCaller" {
					t.Fatalf("console stack does not start at the page's caller: %+v", c.StackTrace)
				}
			}
		}
		return n == 2
	})

	// A page whose CSP forbids eval: a transport error that says so.
	openChromium(t, base+"/csp")
	csp := &pageRuntime{t: t, reg: reg, rec: rec, ref: openedPage(t, rec, 2), id: 1000}
	r := csp.evaluate(sourceproto.EvaluateParams{Expression: "1 + 1"})
	if r.Error == nil || r.Error.Code != "unsupported" || !strings.Contains(r.Error.Message, "Content-Security-Policy forbids eval") {
		t.Fatalf("CSP page: %+v %+v", r.Evaluate, r.Error)
	}
	fmt.Fprintln(os.Stderr, "chromium page runtime:", r.Error.Message)
}
