package main

import (
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// plainPageHost serves an HTML page with NO bootstrapSnippet: only `run
// --inject` (client/js/inject.mjs) can bring it into the window.
const plainPageHost = `
const http = require('http');
const page = '<!doctype html><html><head><title>Plain page</title></head><body><script src="/app.js"></script></body></html>';
http.createServer((req, res) => {
  if (req.url === '/app.js') { res.setHeader('content-type', 'text/javascript'); res.end("console.log('plain page ran')"); return; }
  res.setHeader('content-type', 'text/html');
  res.setHeader('content-length', Buffer.byteLength(page));
  res.end(page);
}).listen(0, '127.0.0.1', function () { console.log('page http://127.0.0.1:' + this.address().port + '/'); });
`

// A page whose HTML has no snippet joins the window under plain `run`: its
// console.log arrives under a page context (negative id), in real Chromium.
func TestRunInjectPageJoinsWithoutCode(t *testing.T) {
	dir, script := writeScript(t, plainPageHost)
	w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
	page := w.waitFor(w.stdout, `page (http://127\.0\.0\.1:\d+/)`)
	c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
	c.MustCall("Runtime.enable", nil)
	openPage(t, page)
	m := c.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool {
		return isClientConsole(m) && firstArg(t, m) == "plain page ran"
	})
	t.Logf("the page's console.log arrived: %.120s", m.Params)
	w.cmd.Process.Signal(syscall.SIGTERM)
	w.wait()
}

// What the browser gets: with --inject (the default) the tag is in the
// head and Content-Length matches; --inject=false serves the app's bytes.
func TestRunInjectFlag(t *testing.T) {
	for _, tc := range []struct {
		flag string
		want bool
	}{{"", true}, {"--inject=false", false}} {
		t.Run("flag="+tc.flag, func(t *testing.T) {
			dir, script := writeScript(t, plainPageHost)
			args := []string{"run", "--port", "0"}
			if tc.flag != "" {
				args = append(args, tc.flag)
			}
			w := startCmd(t, dir, append(args, "--", "node", script)...)
			page := w.waitFor(w.stdout, `page (http://127\.0\.0\.1:\d+/)`)
			resp, err := http.Get(page)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(body)) != resp.ContentLength {
				t.Fatalf("Content-Length %d, body %d bytes", resp.ContentLength, len(body))
			}
			tag := `<head><script src="http://` + w.addr() + `/client.js" data-endpoint="ws://` + w.addr() + `/client"`
			if got := strings.Contains(string(body), tag); got != tc.want {
				t.Fatalf("tag after <head> = %v, want %v: %s", got, tc.want, body)
			}
			w.cmd.Process.Signal(syscall.SIGTERM)
			w.wait()
		})
	}
}

// helmet's default Content-Security-Policy blocks the client: the page is
// served as the app wrote it and the host prints ONE line naming the header
// and the fix, however many pages it serves.
func TestRunInjectCSPHint(t *testing.T) {
	const cspHost = `
const http = require('http');
const csp = "default-src 'self';base-uri 'self';font-src 'self' https: data:;form-action 'self';frame-ancestors 'self';img-src 'self' data:;object-src 'none';script-src 'self';script-src-attr 'none';style-src 'self' https: 'unsafe-inline';upgrade-insecure-requests";
http.createServer((req, res) => {
  res.setHeader('content-security-policy', csp);
  res.setHeader('content-type', 'text/html');
  res.end('<!doctype html><html><head><title>CSP page</title></head><body></body></html>');
}).listen(0, '127.0.0.1', function () { console.log('page http://127.0.0.1:' + this.address().port + '/'); });
`
	dir, script := writeScript(t, cspHost)
	w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
	page := w.waitFor(w.stdout, `page (http://127\.0\.0\.1:\d+/)`)
	for i := 0; i < 3; i++ {
		resp, err := http.Get(page)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), "data-endpoint") {
			t.Fatalf("a page whose CSP blocks the client got the tag: %s", body)
		}
	}
	hint := w.waitFor(w.stderr, `(inspector-worker: the page's Content-Security-Policy \(script-src 'self'\) blocks the client.*connect-src)`)
	if !strings.Contains(hint, "add http://"+w.addr()+" to script-src and ws://"+w.addr()+" to connect-src") {
		t.Fatalf("hint %q does not name the fix for %s", hint, w.addr())
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	w.wait()
	if n := strings.Count(w.stderr.String(), "Content-Security-Policy"); n != 1 {
		t.Fatalf("%d CSP lines on stderr, want 1:\n%s", n, w.stderr)
	}
}

// metaCSPHost serves two pages whose policy (default-src 'self') is in a
// <meta http-equiv> tag: /head has it in <head>, where the client's tag goes
// before it; /nohead has no <head>, so the tag would go before the first
// <script>, after the policy. Both load /app.js (allowed: 'self').
const metaCSPHost = `
const http = require('http');
const meta = '<meta http-equiv="Content-Security-Policy" content="default-src \'self\'">';
const pages = {
  '/head': '<!doctype html><html><head>' + meta + '<title>meta in head</title></head><body><script src="/app.js"></script></body></html>',
  '/nohead': '<!doctype html>' + meta + '<title>meta, no head</title><script src="/app.js"></script>',
};
http.createServer((req, res) => {
  if (req.url === '/app.js') { res.setHeader('content-type', 'text/javascript'); res.end("console.log('meta page ran ' + location.pathname)"); return; }
  res.setHeader('content-type', 'text/html');
  res.end(pages[req.url] || '');
}).listen(0, '127.0.0.1', function () { console.log('page http://127.0.0.1:' + this.address().port + '/'); });
`

// A Content-Security-Policy in a <meta http-equiv> tag applies only to what
// follows it: in <head> the client's tag goes first and the page joins in
// real Chromium, with no hint line; before the insertion point (no <head>)
// it blocks the client, the page is served as written and the host prints
// the CSP line once.
func TestRunInjectMetaCSP(t *testing.T) {
	dir, script := writeScript(t, metaCSPHost)
	w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
	page := w.waitFor(w.stdout, `page (http://127\.0\.0\.1:\d+/)`)
	c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
	c.MustCall("Runtime.enable", nil)
	openPage(t, page+"head")
	c.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool {
		return isClientConsole(m) && firstArg(t, m) == "meta page ran /head"
	})
	if strings.Contains(w.stderr.String(), "Content-Security-Policy") {
		t.Fatalf("a hint line for a page that joined:\n%s", w.stderr)
	}
	body, enc := rawGet(t, page+"nohead", map[string]string{"Accept": "text/html", "Sec-Fetch-Dest": "document"})
	if enc != "" || strings.Contains(body, "data-endpoint") {
		t.Fatalf("a page whose <meta> policy before the tag blocks the client got the tag: %s", body)
	}
	hint := w.waitFor(w.stderr, `(inspector-worker: the page's Content-Security-Policy <meta> tag \(default-src 'self'\) blocks the client.*connect-src)`)
	if !strings.Contains(hint, "add http://"+w.addr()+" to script-src and ws://"+w.addr()+" to connect-src") {
		t.Fatalf("hint %q does not name the fix for %s", hint, w.addr())
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	w.wait()
}
