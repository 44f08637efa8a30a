//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// cancelHost is a real Node host that serves a never-ending event stream
// (~120 B/s) and stops reading it in the four ways an app does, then
// prints, per form, whether and when its cancel settled and when its own
// server saw the connection close. It starts when the file ./go exists.
const cancelHost = `
const http = require('http'), fs = require('fs');
const GUARD_MS = 6000; // the app gives up waiting here (the test's bound is below)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const closes = new Map();
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let i = 0;
  const ev = () => 'data: tick ' + String(i++).padStart(3, '0') + '\n\n';
  res.write(ev());
  const t = setInterval(() => res.write(ev()), 130);
  res.on('close', () => { clearInterval(t); closes.set(req.url, Date.now()); });
});
async function one(base, form) {
  const path = '/sse?c=' + form;
  const r = await fetch(base + path);
  let stop, cancelAt = 0;
  if (form === 'reader') {
    const rd = r.body.getReader();
    await rd.read();
    stop = () => rd.cancel();
  } else if (form === 'body') {
    stop = () => r.body.cancel();
  } else if (form === 'break') {
    let atBreak;
    const breaking = new Promise((res) => { atBreak = res; });
    const loop = (async () => { for await (const c of r.body) { cancelAt = Date.now(); atBreak(); break; } })();
    await breaking;
    stop = () => loop;
  } else {
    const rd = r.body.pipeThrough(new TextDecoderStream()).getReader();
    await rd.read();
    stop = () => rd.cancel();
  }
  if (!cancelAt) cancelAt = Date.now();
  const settled = await Promise.race([stop().then(() => true, () => true), sleep(GUARD_MS).then(() => false)]);
  const out = { settled, settleMs: settled ? Date.now() - cancelAt : null, closeMs: null };
  while (settled && Date.now() - cancelAt < GUARD_MS) {
    if (closes.has(path)) { out.closeMs = closes.get(path) - cancelAt; break; }
    await sleep(5);
  }
  return out;
}
server.listen(0, '127.0.0.1', async () => {
  const base = 'http://127.0.0.1:' + server.address().port;
  console.log('cancel host ready');
  while (!fs.existsSync('go')) await sleep(20);
  const out = {};
  for (const form of ['reader', 'body', 'break', 'pipe']) out[form] = await one(base, form);
  console.log('results ' + JSON.stringify(out));
  // Stays up: the window reads bodies after this (the test ends the worker).
});
`

// cancelResult is one form's line in cancelHost's results.
type cancelResult struct {
	Settled  bool     `json:"settled"`
	SettleMs *float64 `json:"settleMs"`
	CloseMs  *float64 `json:"closeMs"`
}

func msOrNever(p *float64) string {
	if p == nil {
		return "not within 6 s"
	}
	return strconv.FormatFloat(*p, 'f', 0, 64) + " ms"
}

// The host app stops reading a streamed response under `run` (capture
// on): each cancel settles and the server sees the close as without
// capture, and a window's Network log shows each request canceled with
// the bytes the capture read.
func TestHostFetchCancel(t *testing.T) {
	run := func(withWindow bool, flags ...string) (map[string]cancelResult, *cdptest.Client) {
		dir, script := writeScript(t, cancelHost)
		w := startCmd(t, dir, append(append([]string{"run", "--port", "0"}, flags...), "--", "node", script)...)
		w.waitFor(w.stdout, `(cancel host ready)`)
		var c *cdptest.Client
		if withWindow {
			c = cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
			c.MustCall("Network.enable", nil)
		}
		if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		var res map[string]cancelResult
		if err := json.Unmarshal([]byte(w.waitFor(w.stdout, `results (\{.*\})`)), &res); err != nil {
			t.Fatal(err)
		}
		return res, c
	}
	plain, _ := run(false, "--no-capture")
	captured, c := run(true)
	forms := []string{"reader", "body", "break", "pipe"}
	for _, f := range forms {
		p, cp := plain[f], captured[f]
		t.Logf("%s: cancel settled: --no-capture %s, capture %s; the server saw the close after: --no-capture %s, capture %s",
			f, msOrNever(p.SettleMs), msOrNever(cp.SettleMs), msOrNever(p.CloseMs), msOrNever(cp.CloseMs))
	}
	bound := float64((5 * time.Second).Milliseconds()) // far above the few ms it takes, far below a hang
	for _, f := range forms {
		p, cp := plain[f], captured[f]
		if !p.Settled || p.CloseMs == nil {
			t.Fatalf("%s: without capture the cancel did not settle or close: %+v", f, p)
		}
		if !cp.Settled || *cp.SettleMs > bound {
			t.Errorf("%s: with capture the cancel did not settle within %v ms: %s", f, bound, msOrNever(cp.SettleMs))
		}
		if cp.CloseMs == nil || *cp.CloseMs > bound {
			t.Errorf("%s: with capture the server did not see the close within %v ms: %s", f, bound, msOrNever(cp.CloseMs))
		}
	}

	// The window: each request failed as canceled, saying how many bytes
	// were read, and those bytes are its body.
	ids := map[string]string{}
	failed := map[string]string{}
	for deadline := time.Now().Add(cdptest.Timeout); len(failed) < len(forms) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, m := range c.All() {
			var p struct {
				RequestID string `json:"requestId"`
				Request   struct {
					URL string `json:"url"`
				} `json:"request"`
				ErrorText string `json:"errorText"`
				Canceled  bool   `json:"canceled"`
			}
			_ = json.Unmarshal(m.Params, &p)
			switch m.Method {
			case "Network.requestWillBeSent":
				if i := strings.Index(p.Request.URL, "?c="); i >= 0 {
					ids[p.RequestID] = p.Request.URL[i+3:]
				}
			case "Network.loadingFailed":
				if f, ok := ids[p.RequestID]; ok && p.Canceled {
					failed[f] = p.RequestID + " " + p.ErrorText
				}
			}
		}
	}
	said := regexp.MustCompile(`^(\S+) the application cancelled the response body after (\d+) bytes$`)
	sent := ""
	for i := 0; i < 200; i++ {
		sent += fmt.Sprintf("data: tick %03d\n\n", i)
	}
	for _, f := range forms {
		m := said.FindStringSubmatch(failed[f])
		if m == nil {
			t.Errorf("%s: the window saw no loadingFailed canceled saying the bytes read: %q", f, failed[f])
			continue
		}
		r := c.MustCall("Network.getResponseBody", map[string]any{"requestId": m[1]})
		var b struct {
			Body string `json:"body"`
		}
		_ = json.Unmarshal(r.Result, &b)
		if n, _ := strconv.Atoi(m[2]); n != len(b.Body) || !strings.HasPrefix(sent, b.Body) {
			t.Errorf("%s: %s bytes said, body %q", f, m[2], b.Body)
		}
	}
}
