package cdpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// TestVSCodeAttachThroughVersionURL plays VS Code's node attach, which
// takes /json/version's webSocketDebuggerUrl and sends session-less
// commands there: Runtime.evaluate in context 1 is the host's process.pid,
// and a breakpoint by URL pauses the host and resumes.
func TestVSCodeAttachThroughVersionURL(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	cl := w.dialBrowser(t, "vscode")
	cl.MustCall("Runtime.enable", nil)
	cl.ExpectAnyEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"id":1,`)
	})
	m := cl.MustCall("Runtime.evaluate", map[string]any{"expression": "process.pid", "contextId": 1, "returnByValue": true})
	var r struct {
		Result struct {
			Value int `json:"value"`
		} `json:"result"`
	}
	json.Unmarshal(m.Result, &r)
	if r.Result.Value != w.proc.PID() {
		t.Fatalf("process.pid in context 1 = %s, the host is %d", m.Result, w.proc.PID())
	}

	cl.MustCall("Debugger.enable", nil)
	line := strings.Count(hostScript[:strings.Index(hostScript, "return x * 2")], "\n")
	bp := cl.MustCall("Debugger.setBreakpointByUrl", map[string]any{"url": "file://" + w.script, "lineNumber": line})
	if !strings.Contains(string(bp.Result), `"lineNumber":`+jsonInt(line)) {
		t.Fatalf("breakpoint not resolved at line %d: %s", line, bp.Raw)
	}
	call := cl.Send("Runtime.evaluate", map[string]any{"expression": "traced(21)", "returnByValue": true})
	paused := cl.ExpectEvent("Debugger.paused", nil)
	if !strings.Contains(string(paused.Params), `"hitBreakpoints":["`) {
		t.Fatalf("paused, but not on the breakpoint: %.300s", paused.Params)
	}
	cl.MustCall("Debugger.resume", nil)
	cl.ExpectEvent("Debugger.resumed", nil)
	if got := cl.ExpectResponse(call); !strings.Contains(string(got.Result), `"value":42`) {
		t.Fatalf("traced(21) after the resume: %s", got.Raw)
	}
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }
