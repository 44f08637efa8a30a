package cdpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// afterID strips the {"id":N, prefix so answers to different sessions can be
// compared byte for byte.
func afterID(t *testing.T, raw []byte) []byte {
	t.Helper()
	i := bytes.IndexByte(raw, ',')
	if !bytes.HasPrefix(raw, []byte(`{"id":`)) || i < 0 {
		t.Fatalf("not an answer: %.200s", raw)
	}
	return raw[i:]
}

func scriptParsedFor(c *cdptest.Client, suffix string) cdptest.Msg {
	return c.ExpectEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool {
		var p struct{ URL string }
		json.Unmarshal(m.Params, &p)
		return strings.HasSuffix(p.URL, suffix)
	})
}

// A 50 MB script source and V8's lone surrogates pass through byte for byte.
func TestRelayIsByteExact(t *testing.T) {
	const size = 50 << 20
	script := "globalThis.big = '" + strings.Repeat("a", size) + "';\n" + hostScript
	w := startWorker(t, script, Options{})
	via, direct := w.dial("worker"), w.dialDirect("direct")
	var scriptID string
	for _, c := range []*cdptest.Client{via, direct} {
		// 50 MB through -race on a loaded machine took up to 180 s in the
		// flake check, one request more than Timeout.
		c.SetTimeout(5 * time.Minute)
		c.MustCall("Debugger.enable", nil)
		m := scriptParsedFor(c, "host.js")
		var p struct{ ScriptID string }
		json.Unmarshal(m.Params, &p)
		scriptID = p.ScriptID
	}
	a := via.MustCall("Debugger.getScriptSource", map[string]any{"scriptId": scriptID})
	b := direct.MustCall("Debugger.getScriptSource", map[string]any{"scriptId": scriptID})
	if len(a.Raw) < size || !bytes.Equal(afterID(t, a.Raw), afterID(t, b.Raw)) {
		t.Fatalf("50 MB source differs: %d bytes via the worker, %d direct", len(a.Raw), len(b.Raw))
	}
	for _, expr := range []string{`'a\ud800b'`, `'\udc00' + '\ud83d'`, `({s: 'x\ud800', t: '\u2028'})`} {
		p := map[string]any{"expression": expr, "returnByValue": true}
		a, b := via.MustCall("Runtime.evaluate", p), direct.MustCall("Runtime.evaluate", p)
		if !bytes.Equal(afterID(t, a.Raw), afterID(t, b.Raw)) {
			t.Fatalf("%s: via worker %s, direct %s", expr, a.Raw, b.Raw)
		}
		if !bytes.Contains(a.Raw, []byte(`\ud`)) && !strings.Contains(expr, "2028") {
			t.Fatalf("%s: the lone surrogate escape is gone: %s", expr, a.Raw)
		}
	}
}

// Host script URLs reach DevTools as file:// URLs, and a breakpoint set by
// that URL binds and fires.
func TestFileURLsAndBreakpointByURL(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	c := w.dial("A")
	c.MustCall("Runtime.enable", nil)
	c.MustCall("Debugger.enable", nil)
	m := scriptParsedFor(c, "host.js")
	var sp struct{ URL string }
	json.Unmarshal(m.Params, &sp)
	if want := "file://" + w.script; sp.URL != want {
		t.Fatalf("scriptParsed url %q, want %q", sp.URL, want)
	}
	line := strings.Count(hostScript[:strings.Index(hostScript, "return x * 2")], "\n")
	bp := c.MustCall("Debugger.setBreakpointByUrl", map[string]any{"url": sp.URL, "lineNumber": line})
	var res struct {
		BreakpointID string `json:"breakpointId"`
		Locations    []any  `json:"locations"`
	}
	json.Unmarshal(bp.Result, &res)
	if res.BreakpointID == "" || len(res.Locations) == 0 {
		t.Fatalf("breakpoint by file:// url did not bind: %s", bp.Raw)
	}
	c.Send("Runtime.evaluate", map[string]any{"expression": "emit(traced(1), 'bp')"})
	p := c.ExpectEvent("Debugger.paused", nil)
	var paused struct {
		HitBreakpoints []string `json:"hitBreakpoints"`
	}
	json.Unmarshal(p.Params, &paused)
	if len(paused.HitBreakpoints) != 1 || paused.HitBreakpoints[0] != res.BreakpointID {
		t.Fatalf("paused without hitting the breakpoint: %.300s", p.Raw)
	}
	c.MustCall("Debugger.resume", nil)
	ev := c.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(t, m) == "bp 0" })
	if !strings.Contains(string(ev.Params), `"url":"file://`+w.script) {
		t.Fatalf("console stack trace url not rewritten: %s", ev.Params)
	}
}

// A request in flight when the host dies is answered with an error, and the
// window is closed with the reason.
func TestHostDeathAnswersPendingRequests(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	c := w.dial("A")
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
	// The host spins inside the request, then dies without answering it.
	id := c.Send("Runtime.evaluate", map[string]any{"expression": "for (;;) {}"})
	time.Sleep(100 * time.Millisecond) // not an assertion: the kill may come before or after Node starts the loop
	w.proc.Kill()
	m := c.ExpectResponse(id)
	if m.Error == nil || m.Error.Code != codeServerError || !strings.Contains(m.Error.Message, "'Runtime.evaluate' was not answered") {
		t.Fatalf("answer to the request the host died in: %s", m.Raw)
	}
	err := c.ExpectClosed()
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway || !strings.Contains(ce.Reason, "exited") {
		t.Fatalf("close: %v, want 1001 with the exit reason", err)
	}
}

// A panic while handling one request answers it with -32603; the session
// goes on.
func TestPanicIsContained(t *testing.T) {
	methods["Test.panic"] = local(func(*Session, request) { panic("boom") })
	t.Cleanup(func() { delete(methods, "Test.panic") })
	w := startWorker(t, hostScript, Options{})
	c := w.dial("A")
	m := c.Call("Test.panic", nil)
	if m.Error == nil || m.Error.Code != codeInternal || !strings.Contains(m.Error.Message, "boom") {
		t.Fatalf("panic answer: %s", m.Raw)
	}
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
}

// Malformed requests get an error answer, never silence.
func TestMalformedRequests(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	c := w.dial("A")
	for _, tc := range []struct {
		in   string
		code int
	}{
		{`not json`, codeParseError},
		{`[1,2]`, codeParseError},
		{`{"method":"Runtime.evaluate"}`, codeInvalidRequest},
		{`{"id":"7","method":"Runtime.evaluate"}`, codeInvalidRequest},
		{`{"id":8}`, codeInvalidRequest},
		{`{"id":9,"method":"Runtime.evaluate","params":[1]}`, codeInvalidParams},
		{`{"id":10,"method":"Runtime.evaluate","sessionId":"S1","params":{}}`, codeSessionUnknown},
	} {
		c.SendRaw([]byte(tc.in))
		c.Expect(fmt.Sprintf("error %d for %s", tc.code, tc.in), func(m cdptest.Msg) bool { return m.Error != nil && m.Error.Code == tc.code })
	}
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
}

// A window that stops reading is closed once its queue passes the bound;
// the other window gets every message.
func TestStuckWindowDoesNotBlockOthers(t *testing.T) {
	// 1 MB messages against a 16 MB bound: the stuck window passes it after
	// ~20 messages (plus what kernel buffers hold), a reading window never.
	w := startWorker(t, hostScript, Options{MaxQueuedBytes: 16 << 20})
	// A small receive buffer makes the stuck window's kernel buffers fill
	// after a few hundred messages, so the worker's queue must take the rest.
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	stuck, _, err := websocket.Dial(context.Background(), w.srv.PageWebSocketURL(), &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.CloseNow()
	stuck.Write(context.Background(), websocket.MessageText, []byte(`{"id":1,"method":"Runtime.enable"}`))
	// B reads as fast as it can and only looks at each message's head; the
	// host logs the next big message only once B has seen the last, so B is
	// never the one that falls behind, however starved of CPU the test is
	// (an unpaced flood of 80 MB closed B too, on a loaded machine).
	b, _, err := websocket.Dial(context.Background(), w.srv.PageWebSocketURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.CloseNow()
	b.SetReadLimit(64 << 20)
	const n = 80
	seen := make(chan string, n)
	answered := make(chan struct{}, n+1) // evaluate answers
	var readErr error
	go func() {
		defer close(seen)
		re := regexp.MustCompile(`"value":"(big \d+)"`)
		for {
			_, msg, err := b.Read(context.Background())
			if err != nil {
				readErr = err
				return
			}
			head := msg[:min(len(msg), 300)]
			if m := re.FindSubmatch(head); m != nil {
				seen <- string(m[1])
			} else if bytes.HasPrefix(head, []byte(`{"id":`)) {
				answered <- struct{}{}
			}
		}
	}()
	b.Write(context.Background(), websocket.MessageText, []byte(`{"id":1,"method":"Runtime.enable"}`))
	// The host's own stdout copy of each 1 MB line is beside the point here
	// and, written to a pipe while its inspector is busy, sometimes killed
	// Node 20 with ERR_MULTIPLE_CALLBACK (1 run in 2-7 on a loaded
	// machine); the inspector traffic is the same without it.
	b.Write(context.Background(), websocket.MessageText, []byte(`{"id":1000,"method":"Runtime.evaluate","params":{"expression":"process.stdout.write = () => true"}}`))
	for range 2 {
		select {
		case <-answered:
		case <-time.After(cdptest.Timeout):
			t.Fatal("B: Runtime.enable or the stdout evaluate never answered")
		}
	}
	for i := range n {
		b.Write(context.Background(), websocket.MessageText, []byte(fmt.Sprintf(
			`{"id":%d,"method":"Runtime.evaluate","params":{"expression":"console.log('big %d', 'x'.repeat(%d))"}}`, i+2, i, 1<<20)))
		select {
		case got, ok := <-seen:
			if want := fmt.Sprintf("big %d", i); got != want {
				t.Fatalf("B: message %d is %q (connection open: %v, read error: %v, host exited: %v, host stderr: %s)", i, got, ok, readErr, w.proc.ExitCode(), w.proc.StderrTail())
			}
		case <-time.After(cdptest.Timeout):
			t.Fatalf("B: message %d never came", i)
		}
		// The next evaluate once this one is answered: one at a time.
		select {
		case <-answered:
		case <-time.After(cdptest.Timeout):
			t.Fatalf("B: evaluate %d never answered", i)
		}
	}
	// The stuck window's session ends on the worker's side while it still
	// reads nothing (reading would relieve the pressure the test is about).
	deadline := time.Now().Add(cdptest.Timeout)
	for w.srv.sessionCount() > 1 {
		if time.Now().After(deadline) {
			t.Fatal("the stuck window was never closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Draining it now ends in an error, not in a hang.
	ctx, cancel := context.WithTimeout(context.Background(), cdptest.Timeout)
	defer cancel()
	stuck.SetReadLimit(1 << 30)
	for {
		if _, _, err := stuck.Read(ctx); err != nil {
			if ctx.Err() != nil {
				t.Fatal("the stuck window's connection is still open")
			}
			break
		}
	}
}
