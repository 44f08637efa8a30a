//go:build linux

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// fetchHost is a real Node host that serves and fetches every kind of
// response the issue names, then prints what the APP got (status, error,
// sha256 of the body) as one "results" line, so a test compares the app's
// view with and without capture. It starts fetching when the file ./go
// exists, so a window can enable Network first.
const fetchHost = `
const http = require('http'), crypto = require('crypto'), fs = require('fs');
const binary = Buffer.from(Array.from({length: 256}, (_, i) => i));
const big = Buffer.alloc(3 << 20, 'x');
const server = http.createServer((req, res) => {
  if (req.url === '/text') { res.setHeader('content-type', 'text/plain; charset=utf-8'); res.setHeader('x-probe', 'p1'); res.end('héllo wörld'); return; }
  if (req.url === '/binary') { res.setHeader('content-type', 'application/octet-stream'); res.end(binary); return; }
  if (req.url === '/redirect') { res.statusCode = 302; res.setHeader('location', '/text'); res.end(); return; }
  if (req.url === '/big') { res.end(big); return; }
  if (req.url === '/stream') {
    let i = 0;
    const t = setInterval(() => { res.write('chunk ' + i + '\n'); if (++i === 5) { clearInterval(t); res.end(); } }, 20);
    return;
  }
  if (req.url === '/hang') { res.writeHead(200); res.write('partial'); return; }
  res.statusCode = 404; res.end();
});
const sha = (b) => crypto.createHash('sha256').update(Buffer.from(b)).digest('hex').slice(0, 16);
async function readSlowly(res) {
  const parts = [];
  for await (const c of res.body) { parts.push(Buffer.from(c)); await new Promise((r) => setTimeout(r, 15)); }
  return Buffer.concat(parts);
}
server.listen(0, '127.0.0.1', async () => {
  const base = 'http://127.0.0.1:' + server.address().port;
  const free = await new Promise((r) => { const s = http.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => r(p)); }); });
  console.log('fetch host ready');
  while (!fs.existsSync('go')) await new Promise((r) => setTimeout(r, 20));
  const out = {};
  const run = async (name, f) => {
    try { const r = await f(); out[name] = r; } catch (e) { out[name] = {error: e.name + ': ' + e.message + (e.cause ? ' / ' + e.cause.code : '')}; }
  };
  await run('text', async () => { const r = await fetch(base + '/text'); return {status: r.status, hash: sha(await r.arrayBuffer())}; });
  await run('binary', async () => { const r = await fetch(base + '/binary'); return {status: r.status, hash: sha(await r.arrayBuffer())}; });
  await run('redirect', async () => { const r = await fetch(base + '/redirect'); return {status: r.status, url: r.url.replace(base, ''), redirected: r.redirected, hash: sha(await r.arrayBuffer())}; });
  await run('big', async () => { const r = await fetch(base + '/big'); return {status: r.status, hash: sha(await r.arrayBuffer())}; });
  await run('stream', async () => { const r = await fetch(base + '/stream'); return {status: r.status, hash: sha(await readSlowly(r))}; });
  await run('refused', async () => { await fetch('http://127.0.0.1:' + free + '/refused'); return {}; });
  await run('aborted', async () => { const ac = new AbortController(); const r = await fetch(base + '/hang', {signal: ac.signal}); setTimeout(() => ac.abort(), 50); await r.arrayBuffer(); return {}; });
  await run('post', async () => { const r = await fetch(base + '/text', {method: 'POST', body: 'form=1&x=2'}); return {status: r.status, hash: sha(await r.arrayBuffer())}; });
  console.log('results ' + JSON.stringify(out));
  // Stays up: the window reads bodies after this (the test ends the worker).
});
`

// hostFetchResults runs fetchHost under the worker with the given flags,
// optionally with a window that enabled Network before the host fetched,
// and returns the app's results line and that window.
func hostFetchResults(t *testing.T, withWindow bool, flags ...string) (string, *cdptest.Client) {
	t.Helper()
	dir, script := writeScript(t, fetchHost)
	w := startCmd(t, dir, append(append([]string{"run", "--port", "0"}, flags...), "--", "node", script)...)
	w.waitFor(w.stdout, `(fetch host ready)`)
	var c *cdptest.Client
	if withWindow {
		c = cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
		c.MustCall("Network.enable", nil)
		c.MustCall("Runtime.enable", nil)
		c.MustCall("Debugger.enable", nil) // as DevTools does: scriptIds for the Initiator column
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return w.waitFor(w.stdout, `results (\{.*\})`), c
}

// The host's fetches: the app gets byte-identical results with and without
// capture, and a window sees each with its status, headers, body (or its
// truncation) and its failure.
func TestHostFetchCapture(t *testing.T) {
	plain, _ := hostFetchResults(t, false, "--no-capture")
	captured, c := hostFetchResults(t, true)
	if plain != captured {
		t.Fatalf("the app's results differ with capture:\n  without %s\n  with    %s", plain, captured)
	}
	var res map[string]map[string]any
	json.Unmarshal([]byte(captured), &res)
	if res["text"]["status"] != 200.0 || res["redirect"]["redirected"] != true || !strings.Contains(res["refused"]["error"].(string), "ECONNREFUSED") ||
		!strings.Contains(res["aborted"]["error"].(string), "AbortError") {
		t.Fatalf("the app's own results are not what the server did: %s", captured)
	}

	// What the window saw, by URL path.
	type seen struct {
		id, method      string
		status          float64
		headers         map[string]any
		failed          string
		canceled        bool
		finished, hop   bool
		redirectedFrom  float64
		frameID, typ    string
		initiatorFrames int
		topScriptID     string
		initiatorURL    string
		raw             string
	}
	// The app printed its results; the window's last events may still be
	// on their way (the producer batches, the pipe acks).
	const requests = 8
	for deadline := time.Now().Add(cdptest.Timeout); ; time.Sleep(20 * time.Millisecond) {
		ended := 0
		for _, m := range c.All() {
			if m.Method == "Network.loadingFinished" || m.Method == "Network.loadingFailed" {
				ended++
			}
		}
		if ended >= requests {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the window saw %d of %d requests end", ended, requests)
		}
	}
	byPath := map[string]*seen{}
	ids := map[string]*seen{}
	for _, m := range c.All() {
		var p struct {
			RequestID string `json:"requestId"`
			FrameID   string `json:"frameId"`
			Type      string `json:"type"`
			Request   struct {
				URL    string `json:"url"`
				Method string `json:"method"`
			} `json:"request"`
			RedirectResponse *struct {
				Status float64 `json:"status"`
			} `json:"redirectResponse"`
			Initiator struct {
				URL   string `json:"url"`
				Stack struct {
					CallFrames []struct {
						ScriptID string `json:"scriptId"`
					} `json:"callFrames"`
				} `json:"stack"`
			} `json:"initiator"`
			Response struct {
				Status  float64        `json:"status"`
				Headers map[string]any `json:"headers"`
			} `json:"response"`
			ErrorText string `json:"errorText"`
			Canceled  bool   `json:"canceled"`
		}
		json.Unmarshal(m.Params, &p)
		switch m.Method {
		case "Network.requestWillBeSent":
			path := p.Request.URL[strings.LastIndex(p.Request.URL, "/"):]
			s := &seen{id: p.RequestID, method: p.Request.Method, frameID: p.FrameID, typ: p.Type, initiatorFrames: len(p.Initiator.Stack.CallFrames),
				initiatorURL: p.Initiator.URL, raw: string(m.Raw)}
			if len(p.Initiator.Stack.CallFrames) > 0 {
				s.topScriptID = p.Initiator.Stack.CallFrames[0].ScriptID
			}
			if p.RedirectResponse != nil {
				if prev := ids[p.RequestID]; prev != nil {
					prev.hop = true
				}
				s.redirectedFrom = p.RedirectResponse.Status
				path = "/redirect->" + path
			}
			if p.Request.Method == "POST" {
				path = "/post"
			}
			byPath[path] = s
			ids[p.RequestID] = s
		case "Network.responseReceived":
			if s := ids[p.RequestID]; s != nil {
				s.status, s.headers = p.Response.Status, p.Response.Headers
			}
		case "Network.loadingFinished":
			if s := ids[p.RequestID]; s != nil {
				s.finished = true
			}
		case "Network.loadingFailed":
			if s := ids[p.RequestID]; s != nil {
				s.failed, s.canceled = p.ErrorText, p.Canceled
			}
		}
	}
	body := func(path string) (string, bool) {
		s := byPath[path]
		if s == nil {
			t.Fatalf("the window saw no request for %s; saw %v", path, keys(byPath))
		}
		m := c.MustCall("Network.getResponseBody", map[string]any{"requestId": s.id})
		var b struct {
			Body          string `json:"body"`
			Base64Encoded bool   `json:"base64Encoded"`
		}
		json.Unmarshal(m.Result, &b)
		return b.Body, b.Base64Encoded
	}
	for _, path := range []string{"/text", "/binary", "/big", "/stream", "/post"} {
		if s := byPath[path]; s == nil || s.status != 200 || !s.finished || s.typ != "Fetch" {
			t.Fatalf("%s in the window: %+v", path, s)
		}
		// The Initiator column links host.js: by the script's id, or (a
		// script no window saw parsed yet) by its URL.
		if s := byPath[path]; !(s.initiatorFrames > 0 && s.topScriptID != "") && !strings.HasSuffix(s.initiatorURL, "/host.js") {
			t.Fatalf("%s initiator does not link host.js: %s", path, s.raw)
		}
	}
	if b, enc := body("/text"); b != "héllo wörld" || enc || byPath["/text"].headers["x-probe"] != "p1" {
		t.Fatalf("text body %q (base64 %v), headers %v", b, enc, byPath["/text"].headers)
	}
	if b, enc := body("/binary"); !enc {
		t.Fatalf("binary body not base64: %q", b)
	} else if raw, _ := base64.StdEncoding.DecodeString(b); len(raw) != 256 || raw[0] != 0 || raw[255] != 255 {
		t.Fatalf("binary body: %d bytes", len(raw))
	}
	if b, _ := body("/stream"); !strings.HasPrefix(b, "chunk 0\n") || !strings.HasSuffix(b, "chunk 4\n") {
		t.Fatalf("streamed body %q", b)
	}
	if b, _ := body("/big"); len(b) != 1<<20 || strings.Trim(b, "x") != "" {
		t.Fatalf("over-budget body: %d bytes kept, want the 1 MiB prefix", len(b))
	}
	c.ExpectEvent("Log.entryAdded", func(m cdptest.Msg) bool { return bytes.Contains(m.Params, []byte("/big")) })
	if pd := c.MustCall("Network.getRequestPostData", map[string]any{"requestId": byPath["/post"].id}); !strings.Contains(string(pd.Result), "form=1&x=2") {
		t.Fatalf("post data: %s", pd.Raw)
	}
	if s := byPath["/refused"]; s == nil || !strings.Contains(s.failed, "ECONNREFUSED") {
		t.Fatalf("refused in the window: %+v", s)
	}
	if s := byPath["/hang"]; s == nil || !s.canceled {
		t.Fatalf("aborted in the window: %+v", s)
	}
	// The redirect: the original request, then the hop to /text (fetch
	// tells the app only the final URL, so the hop's status is unknown).
	if s, hop := byPath["/redirect"], byPath["/redirect->/text"]; s == nil || !s.hop || hop == nil || hop.status != 200 || !hop.finished {
		t.Fatalf("redirect in the window: %+v then %+v (saw %v)", s, hop, keys(byPath))
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A real page's fetch and XMLHttpRequest reach the window's Network log on
// the page's own frame, typed Fetch and XHR; the page's results are its
// own (client/js's Chromium test compares them with and without capture).
func TestPageFetchCapture(t *testing.T) {
	_, c, page := startPageHost(t, `fetch('/?via=fetch').then((r) => r.text()).then((t) => console.log('fetched ' + t.length));
const x = new XMLHttpRequest(); x.open('GET', '/?via=xhr'); x.onload = () => console.log('xhr ' + x.status); x.send();`)
	c.MustCall("Network.enable", nil)
	openPage(t, page)
	ev := c.ExpectEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `"id":-`) })
	var ctx struct {
		Context struct {
			AuxData struct {
				FrameID string `json:"frameId"`
			} `json:"auxData"`
		} `json:"context"`
	}
	json.Unmarshal(ev.Params, &ctx)
	for _, want := range []struct{ via, typ string }{{"fetch", "Fetch"}, {"xhr", "XHR"}} {
		m := c.ExpectAnyEvent("Network.requestWillBeSent", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "via="+want.via) })
		var p struct {
			RequestID string `json:"requestId"`
			FrameID   string `json:"frameId"`
			Type      string `json:"type"`
			Initiator struct {
				Stack struct {
					CallFrames []struct {
						ScriptID string `json:"scriptId"`
						URL      string `json:"url"`
					} `json:"callFrames"`
				} `json:"stack"`
			} `json:"initiator"`
		}
		json.Unmarshal(m.Params, &p)
		if p.FrameID != ctx.Context.AuxData.FrameID || p.FrameID == "" || p.Type != want.typ {
			t.Fatalf("%s: frame %q type %q, want the page's frame %q and %s", want.via, p.FrameID, p.Type, ctx.Context.AuxData.FrameID, want.typ)
		}
		// The Initiator column links the page's script by its id.
		if f := p.Initiator.Stack.CallFrames; len(f) == 0 || !strings.HasSuffix(f[0].URL, "/app.js") || !strings.HasPrefix(f[0].ScriptID, "c") {
			t.Fatalf("%s initiator: %s", want.via, m.Params)
		}
		c.ExpectAnyEvent("Network.loadingFinished", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `"`+p.RequestID+`"`) })
		b := c.MustCall("Network.getResponseBody", map[string]any{"requestId": p.RequestID})
		if !strings.Contains(string(b.Result), "Test page") {
			t.Fatalf("%s body: %s", want.via, b.Raw)
		}
	}
}
