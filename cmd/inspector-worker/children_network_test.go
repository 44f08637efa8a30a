//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// childFetchScript is a host that, once the file ./go exists, fork()s a
// child; the child serves on loopback, fetches /child-text from itself
// (and node:http's /child-http), prints "child fetched N" and stays until
// ./stop exists. Once ./hold exists the host forks a child that only
// waits for ./stop (it takes a slot of --max-children). The host also fetches once, from its own server, so a
// test can tell the host's entry from the child's.
const childFetchScript = `
const fs = require('fs'), http = require('http');
const { fork } = require('child_process');
const stopWhen = (name, then) => {
  const t = setInterval(() => { if (fs.existsSync(name)) { clearInterval(t); then(); } }, 20);
};
const serve = (body) => new Promise((resolve) => {
  const server = http.createServer((req, res) => { res.setHeader('content-type', 'text/plain'); res.setHeader('x-from', body); res.end(body + ' ' + req.url); });
  server.listen(0, '127.0.0.1', () => resolve('http://127.0.0.1:' + server.address().port));
});
if (process.argv[2] === 'hold') {
  stopWhen('stop', () => process.exit(0));
} else if (process.argv[2] === 'child') {
  serve('child').then(async (base) => {
    const r = await fetch(base + '/child-text');
    const text = await r.text();
    await new Promise((done) => http.get(base + '/child-http', (res) => { res.resume(); res.on('end', done); }));
    console.log('child fetched ' + r.status + ' ' + text + ' pid ' + process.pid);
    stopWhen('stop', () => process.exit(0));
  });
} else {
  console.log('pid ' + process.pid);
  serve('host').then(async (base) => {
    console.log('host ready');
    stopWhen('go', async () => {
      await (await fetch(base + '/host-text')).text();
      fork(__filename, ['child']);
    });
    stopWhen('hold', () => fork(__filename, ['hold']));
    stopWhen('stop', () => setTimeout(() => process.exit(0), 200));
  });
}
`

// A fork()ed child's fetch capture reaches the window's Network panel as
// the host's does: the window sees the child's requestWillBeSent,
// responseReceived and loadingFinished in the main frame, the Initiator
// names the child's script by URL (no scriptId of the child's isolate),
// and Network.getResponseBody returns the body the child got; also for a
// child that waits at its start for a window that asked it to. With
// --no-children, and for a child refused past --max-children, the child
// sends nothing and only the host's request shows.
func TestRunChildFetchCapture(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		wait  bool
		shown bool
	}{
		{"followed", nil, false, true},
		{"waiting", nil, true, true},
		{"no-children", []string{"--no-children"}, false, false},
		{"refused", []string{"--max-children", "1"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, script := writeScript(t, childFetchScript)
			args := append(append([]string{"run", "--port", "0"}, tc.flags...), "--", "node", script)
			w := startCmdEnv(t, dir, []string{"INSPECTOR_WORKER_DEBUG=1"}, args...)
			host := w.nodePID()
			w.waitFor(w.stdout, `(host ready)`)
			c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
			c.MustCall("Network.enable", nil)
			if tc.name == "refused" {
				// A child already followed takes the one slot.
				touch(t, dir, "hold")
				w.waitFor(w.stderr, `(following child)`)
			}
			if tc.wait {
				c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
			}
			if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.wait {
				a := c.ExpectAttached()
				if !a.WaitingForDebugger {
					t.Fatalf("the child does not wait for the window: %+v", a)
				}
				c.CallIn(a.SessionID, "Runtime.runIfWaitingForDebugger", nil)
			}
			child, _ := strconv.Atoi(w.waitFor(w.stdout, `child fetched 200 child /child-text pid (\d+)`))
			if tc.name == "refused" {
				w.waitFor(w.stderr, `child `+strconv.Itoa(child)+` (not followed): already following 1`)
			}
			start := time.Now()
			seen := childNetwork(t, c, tc.shown)
			if tc.shown {
				t.Logf("the child's entries reached the window %v after it printed its result", time.Since(start).Round(time.Millisecond))
			}
			host2 := seen["/host-text"]
			if host2 == nil || !host2.finished {
				t.Fatalf("the host's own request is not in the window: %+v", seen)
			}
			ct, ch := seen["/child-text"], seen["/child-http"]
			if !tc.shown {
				if ct != nil || ch != nil {
					t.Fatalf("the child's requests reached the window: %+v %+v", ct, ch)
				}
			} else {
				if ct == nil || ct.status != 200 || !ct.finished || ct.typ != "Fetch" || ct.frameID != host2.frameID {
					t.Fatalf("the child's fetch in the window: %+v (the host's frame %q)", ct, host2.frameID)
				}
				if ct.topScriptID != "" || !strings.HasSuffix(ct.initiatorURL, "/host.js") {
					t.Errorf("the child's initiator must name host.js by URL only: %s", ct.raw)
				}
				if ch == nil || ch.status != 200 || !ch.finished || ch.typ != "Other" {
					t.Fatalf("the child's node:http request in the window: %+v", ch)
				}
				m := c.MustCall("Network.getResponseBody", map[string]any{"requestId": ct.id})
				var b struct {
					Body string `json:"body"`
				}
				json.Unmarshal(m.Result, &b)
				if b.Body != "child /child-text" || ct.headers["x-from"] != "child" {
					t.Fatalf("the child's body %q, headers %v", b.Body, ct.headers)
				}
			}
			touch(t, dir, "stop")
			if got := w.wait(); got != 0 {
				t.Fatalf("exit code %d, want 0", got)
			}
			proctest.AssertGone(t, child)
			proctest.AssertGone(t, host)
		})
	}
}

type childSeen struct {
	id, typ, frameID, topScriptID, initiatorURL, raw string
	status                                           float64
	headers                                          map[string]any
	finished                                         bool
}

// childNetwork waits until the window saw the host's request end, and the
// child's two when want, and returns what it saw by URL path.
func childNetwork(t *testing.T, c *cdptest.Client, want bool) map[string]*childSeen {
	t.Helper()
	need := []string{"/host-text"}
	if want {
		need = append(need, "/child-text", "/child-http")
	} else {
		// Nothing is to come from the child: give it the time it would take.
		time.Sleep(time.Second)
	}
	for deadline := time.Now().Add(cdptest.Timeout); ; time.Sleep(20 * time.Millisecond) {
		seen := map[string]*childSeen{}
		ids := map[string]*childSeen{}
		for _, m := range c.All() {
			var p struct {
				RequestID string `json:"requestId"`
				FrameID   string `json:"frameId"`
				Type      string `json:"type"`
				Request   struct {
					URL string `json:"url"`
				} `json:"request"`
				Initiator struct {
					URL   string `json:"url"`
					Stack struct {
						CallFrames []struct {
							ScriptID string `json:"scriptId"`
							URL      string `json:"url"`
						} `json:"callFrames"`
					} `json:"stack"`
				} `json:"initiator"`
				Response struct {
					Status  float64        `json:"status"`
					Headers map[string]any `json:"headers"`
				} `json:"response"`
			}
			json.Unmarshal(m.Params, &p)
			switch m.Method {
			case "Network.requestWillBeSent":
				s := &childSeen{id: p.RequestID, typ: p.Type, frameID: p.FrameID, initiatorURL: p.Initiator.URL, raw: string(m.Raw)}
				if f := p.Initiator.Stack.CallFrames; len(f) > 0 {
					s.topScriptID = f[0].ScriptID
					if s.initiatorURL == "" {
						s.initiatorURL = f[0].URL
					}
				}
				seen[p.Request.URL[strings.LastIndex(p.Request.URL, "/"):]] = s
				ids[p.RequestID] = s
			case "Network.responseReceived":
				if s := ids[p.RequestID]; s != nil {
					s.status, s.headers = p.Response.Status, p.Response.Headers
				}
			case "Network.loadingFinished":
				if s := ids[p.RequestID]; s != nil {
					s.finished = true
				}
			}
		}
		done := true
		for _, path := range need {
			if s := seen[path]; s == nil || !s.finished {
				done = false
			}
		}
		if done {
			return seen
		}
		if time.Now().After(deadline) {
			t.Fatalf("the window saw %v, want %v finished", keys(seen), need)
		}
	}
}
