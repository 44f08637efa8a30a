package cdpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// versionInfo is /json/version's answer.
type versionInfo struct {
	Browser string `json:"Browser"`
	WS      string `json:"webSocketDebuggerUrl"`
}

func (w *worker) version(t *testing.T, path, host string) versionInfo {
	t.Helper()
	resp, err := w.get(path, host)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d: %s", path, resp.StatusCode, body)
	}
	var v versionInfo
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
	return v
}

// dialBrowser opens the browser endpoint /json/version names.
func (w *worker) dialBrowser(t *testing.T, name string) *cdptest.Client {
	return cdptest.Dial(t, name, w.version(t, "/json/version", "").WS, nil)
}

func mustError(t *testing.T, m cdptest.Msg, what, want string) {
	t.Helper()
	if m.Error == nil || !strings.Contains(m.Error.Message, want) {
		t.Fatalf("%s: want an error saying %q, got %s", what, want, m.Raw)
	}
	t.Logf("%s refused: %d %s", what, m.Error.Code, m.Error.Message)
}

func evalPID(t *testing.T, cl *cdptest.Client, sessionID string) int {
	t.Helper()
	m := cl.CallIn(sessionID, "Runtime.evaluate", map[string]any{"expression": "process.pid", "returnByValue": true})
	var r struct {
		Result struct {
			Value int `json:"value"`
		} `json:"result"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil {
		t.Fatalf("Runtime.evaluate in session %q: %s", sessionID, m.Raw)
	}
	return r.Result.Value
}

// TestBrowserEndpoint walks a browser client's conversation over the raw
// browser socket: discovery, the browser target's answers, a flat session
// on the combined target evaluating in the host, session-less commands
// acting on the combined target, the refusals with their reasons, detach.
func TestBrowserEndpoint(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	// Discovery: the Host header decides the URL, as for /json/list; the
	// trailing-slash forms answer too.
	for _, path := range []string{"/json/version", "/json/version/"} {
		v := w.version(t, path, "localhost:9441")
		if want := "ws://localhost:9441/devtools/browser/"; !strings.HasPrefix(v.WS, want) {
			t.Fatalf("%s: webSocketDebuggerUrl %q, want it under %s", path, v.WS, want)
		}
	}
	for _, path := range []string{"/json", "/json/", "/json/list", "/json/list/"} {
		resp, err := w.get(path, "")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: HTTP %d", path, resp.StatusCode)
		}
	}
	cl := w.dialBrowser(t, "browser")

	m := cl.MustCall("Browser.getVersion", nil)
	if !strings.Contains(string(m.Result), `"product":"inspector-worker/`) {
		t.Fatalf("Browser.getVersion: %s", m.Raw)
	}
	m = cl.MustCall("Target.getBrowserContexts", nil)
	if !strings.Contains(string(m.Result), `"browserContextIds":[]`) || !strings.Contains(string(m.Result), `"defaultBrowserContextId":"`) {
		t.Fatalf("Target.getBrowserContexts: %s", m.Raw)
	}

	// targetCreated for the combined target comes before the answer.
	id := cl.Send("Target.setDiscoverTargets", map[string]any{"discover": true})
	cl.ExpectResponse(id)
	created, answered := -1, -1
	for i, m := range cl.All() {
		switch {
		case m.Method == "Target.targetCreated" && strings.Contains(string(m.Params), w.srv.TargetID()):
			created = i
		case m.ID != nil && *m.ID == id:
			answered = i
		}
	}
	if created < 0 || created > answered {
		t.Fatalf("targetCreated for %s at %d, the answer at %d", w.srv.TargetID(), created, answered)
	}
	m = cl.MustCall("Target.getTargets", nil)
	if !strings.Contains(string(m.Result), `"targetId":"`+w.srv.TargetID()+`","type":"page"`) {
		t.Fatalf("Target.getTargets lacks the combined target: %s", m.Raw)
	}

	// A flat session on the combined target evaluates in the host.
	m = cl.MustCall("Target.attachToTarget", map[string]any{"targetId": w.srv.TargetID(), "flatten": true})
	var att struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(m.Result, &att)
	cl.ExpectAnyEvent("Target.attachedToTarget", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"sessionId":"`+att.SessionID+`"`)
	})
	pid := w.proc.PID()
	if got := evalPID(t, cl, att.SessionID); got != pid {
		t.Fatalf("flat session evaluated process.pid = %d, the host is %d", got, pid)
	}
	// Session-less, other domains act on the combined target.
	if got := evalPID(t, cl, ""); got != pid {
		t.Fatalf("session-less process.pid = %d, the host is %d", got, pid)
	}

	mustError(t, cl.Call("Target.createTarget", map[string]any{"url": "about:blank"}), "Target.createTarget", "cannot open or close tabs")
	mustError(t, cl.Call("Target.closeTarget", map[string]any{"targetId": w.srv.TargetID()}), "Target.closeTarget", "cannot open or close tabs")
	mustError(t, cl.Call("Browser.close", nil), "Browser.close", "never stops the app")
	mustError(t, cl.Call("Target.attachToTarget", map[string]any{"targetId": w.srv.TargetID()}), "non-flat attach", "flatten: true")
	mustError(t, cl.Call("Target.attachToTarget", map[string]any{"targetId": "nope", "flatten": true}), "unknown target", "no target")
	mustError(t, cl.CallIn("no-such-session", "Runtime.evaluate", map[string]any{"expression": "1"}), "unknown session", "Session with given id not found")

	cl.MustCall("Target.detachFromTarget", map[string]any{"sessionId": att.SessionID})
	cl.ExpectAnyEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), att.SessionID)
	})
	mustError(t, cl.CallIn(att.SessionID, "Runtime.evaluate", map[string]any{"expression": "1"}), "detached session", "Session with given id not found")
	// The host still runs, and so does the session-less session.
	if got := evalPID(t, cl, ""); got != pid {
		t.Fatalf("after detach: process.pid = %d", got)
	}
}

// TestBrowserAutoAttachPages: Puppeteer's browser-level setAutoAttach
// excludes "page" (it expects tab targets); the combined target is attached
// anyway, before the answer, and its session is a window's.
func TestBrowserAutoAttachPages(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	cl := w.dialBrowser(t, "puppeteer-like")
	id := cl.Send("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true,
		"filter": []map[string]any{{"type": "page", "exclude": true}, {}}})
	cl.ExpectResponse(id)
	var sessionID string
	for _, m := range cl.All() {
		if m.ID != nil && *m.ID == id {
			break
		}
		if m.Method == "Target.attachedToTarget" && strings.Contains(string(m.Params), w.srv.TargetID()) {
			var p struct {
				SessionID string `json:"sessionId"`
			}
			json.Unmarshal(m.Params, &p)
			sessionID = p.SessionID
		}
	}
	if sessionID == "" {
		t.Fatalf("no attachedToTarget for the combined target before the answer: %v", cl.All())
	}
	if got := evalPID(t, cl, sessionID); got != w.proc.PID() {
		t.Fatalf("auto-attached session: process.pid = %d", got)
	}
}

// TestBrowserSocketClosedMidRequest: a client that goes while its request
// waits on the host (an evaluation that never settles, another session
// with the host paused) leaves nothing behind: its sessions end, the
// worker serves the next client, and the test's Shutdown does not hang.
func TestBrowserSocketClosedMidRequest(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	cl := w.dialBrowser(t, "leaver")
	m := cl.MustCall("Target.attachToTarget", map[string]any{"targetId": w.srv.TargetID(), "flatten": true})
	var att struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(m.Result, &att)
	cl.MustCall("Target.attachToTarget", map[string]any{"targetId": w.srv.TargetID(), "flatten": true})
	cl.CallIn(att.SessionID, "Debugger.enable", nil)
	cl.SendTo(att.SessionID, "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
	cl.CallIn(att.SessionID, "Runtime.evaluate", map[string]any{"expression": "pauseSoon()"})
	cl.ExpectEvent("Debugger.paused", nil)
	// The browser target still answers while the host is paused.
	cl.MustCall("Browser.getVersion", nil)
	if n := w.srv.sessionCount(); n != 2 {
		t.Fatalf("%d sessions open, want the 2 flat sessions", n)
	}
	cl.Conn().CloseNow()
	closed := time.Now()
	deadline := closed.Add(cdptest.Timeout)
	for w.srv.sessionCount() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still open %v after the client went", w.srv.sessionCount(), cdptest.Timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	gone := time.Since(closed)
	// The host was resumed when its session closed, and serves the next.
	next := w.dialBrowser(t, "next")
	if got := evalPID(t, next, ""); got != w.proc.PID() {
		t.Fatalf("next client: process.pid = %d", got)
	}
	t.Logf("both sessions ended %v after the client went; the next client was served", gone)
}

// TestBrowserMethodTable: every named no-op and refusal of the browser
// target's table is answered as the table says (the local ones have their
// own tests above).
func TestBrowserMethodTable(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	cl := w.dialBrowser(t, "table")
	for _, m := range sortedKeys(browserMethods) {
		e := browserMethods[m]
		switch e.kind {
		case answerNoop:
			if got := cl.MustCall(m, nil); string(got.Result) != e.result {
				t.Errorf("%s answered %s, want %s", m, got.Result, e.result)
			}
		case answerRefusal:
			got := cl.Call(m, nil)
			if got.Error == nil || got.Error.Code != codeServerError || got.Error.Message != e.reason {
				t.Errorf("%s answered %s, want -32000 %q", m, got.Raw, e.reason)
			}
		case answerLocal:
		default:
			t.Errorf("%s has no kind", m)
		}
	}
}

// TestBrowserFlatSessionThreads: a flat session on the combined target
// gets the host's worker threads as its children, as a window does; on the
// browser connection each thread's session is "<flat>.<thread>", so two
// flat sessions' threads (Node numbers them per Node session) never share
// an id.
func TestBrowserFlatSessionThreads(t *testing.T) {
	w := startWorker(t, threadHostScript, Options{})
	cl := w.dialBrowser(t, "threads")
	var flats []string
	for range 2 {
		m := cl.MustCall("Target.attachToTarget", map[string]any{"targetId": w.srv.TargetID(), "flatten": true})
		var att struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(m.Result, &att)
		flats = append(flats, att.SessionID)
	}
	seen := map[string]bool{}
	for _, flat := range flats {
		if m := cl.CallIn(flat, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}); m.Error != nil {
			t.Fatalf("setAutoAttach in %s: %s", flat, m.Raw)
		}
		threads := map[int]bool{}
		for range 2 {
			a := cl.Expect("a thread attached in "+flat, func(m cdptest.Msg) bool {
				return m.Method == "Target.attachedToTarget" && m.SessionID == flat
			})
			var p struct {
				SessionID  string `json:"sessionId"`
				TargetInfo struct {
					Type string `json:"type"`
				} `json:"targetInfo"`
			}
			json.Unmarshal(a.Params, &p)
			if !strings.HasPrefix(p.SessionID, flat+".") || p.TargetInfo.Type != "worker" || seen[p.SessionID] {
				t.Fatalf("thread attached in %s: %s", flat, a.Raw)
			}
			seen[p.SessionID] = true
			threads[cl.ThreadIDIn(p.SessionID)] = true
		}
		if !threads[1] || !threads[2] {
			t.Fatalf("flat session %s: thread sessions run in threads %v, want 1 and 2", flat, threads)
		}
	}
	mustError(t, cl.CallIn(flats[0]+".no-such-thread", "Runtime.evaluate", map[string]any{"expression": "1"}), "unknown thread", "Session with given id not found")
	t.Logf("thread sessions: %v", seen)
}
