package cdpserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

func consoleText(t *testing.T, m cdptest.Msg) string {
	t.Helper()
	var p struct {
		Args []struct {
			Value any `json:"value"`
		} `json:"args"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || len(p.Args) == 0 {
		t.Fatalf("bad consoleAPICalled %s", m.Raw)
	}
	return fmt.Sprint(p.Args[0].Value)
}

// Two windows at once each get every host console message, in order, once.
func TestTwoClientsSeeEveryConsoleMessageInOrder(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	a, b := w.dial("A"), w.dial("B")
	a.MustCall("Runtime.enable", nil)
	b.MustCall("Runtime.enable", nil)
	// The message logged before any window opened is replayed by V8 on enable.
	for _, c := range []*cdptest.Client{a, b} {
		c.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(t, m) == "early message" })
	}
	const n = 500
	a.MustCall("Runtime.evaluate", map[string]any{"expression": fmt.Sprintf("emit(%d, 'flood')", n)})
	for _, c := range []*cdptest.Client{a, b} {
		for i := range n {
			m := c.ExpectEvent("Runtime.consoleAPICalled", nil)
			if got, want := consoleText(t, m), fmt.Sprintf("flood %d", i); got != want {
				t.Fatalf("message %d: got %q, want %q", i, got, want)
			}
		}
	}
	// A sync round trip after the flood proves nothing more is on the way.
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
	b.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
	for _, c := range []*cdptest.Client{a, b} {
		count := 0
		for _, m := range c.Events("Runtime.consoleAPICalled") {
			if strings.HasPrefix(consoleText(t, m), "flood ") {
				count++
			}
		}
		if count != n {
			t.Errorf("a client got %d flood messages, want exactly %d", count, n)
		}
	}
}

// The host pauses at debugger;: both windows see it, B evaluates on the call
// frame and resumes, A sees the resume. Discovery answers during the pause.
func TestPauseInOneResumeFromTheOther(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	a, b := w.dial("A"), w.dial("B")
	for _, c := range []*cdptest.Client{a, b} {
		c.MustCall("Runtime.enable", nil)
		if m := c.MustCall("Debugger.enable", nil); !strings.Contains(string(m.Result), `"debuggerId"`) {
			t.Fatalf("Debugger.enable without debuggerId: %s", m.Raw)
		}
	}
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "pauseSoon()"})
	var frameID string
	for _, c := range []*cdptest.Client{a, b} {
		m := c.ExpectEvent("Debugger.paused", nil)
		var p struct {
			CallFrames []struct {
				CallFrameID  string `json:"callFrameId"`
				FunctionName string `json:"functionName"`
			} `json:"callFrames"`
		}
		json.Unmarshal(m.Params, &p)
		if len(p.CallFrames) == 0 || p.CallFrames[0].FunctionName != "paused" {
			t.Fatalf("paused in the wrong place: %s", m.Raw)
		}
		if c == b {
			frameID = p.CallFrames[0].CallFrameID
		}
	}
	resp, err := w.get("/json/list", "")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/json/list while paused: %v %v", resp, err)
	}
	resp.Body.Close()
	m := b.MustCall("Debugger.evaluateOnCallFrame", map[string]any{"callFrameId": frameID, "expression": "typeof emit + ':' + (6*7)"})
	if !strings.Contains(string(m.Result), `"function:42"`) {
		t.Fatalf("evaluateOnCallFrame: %s", m.Raw)
	}
	b.MustCall("Debugger.resume", nil)
	a.ExpectEvent("Debugger.resumed", nil)
	a.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(t, m) == "after pause" })
}

// Closing one window ends its own Node session only.
func TestClosingOneWindowLeavesTheOther(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	a, b := w.dial("A"), w.dial("B")
	a.MustCall("Runtime.enable", nil)
	b.MustCall("Runtime.enable", nil)
	a.Conn().Close(1000, "bye")
	m := b.MustCall("Runtime.evaluate", map[string]any{"expression": "emit(1, 'still here')"})
	if !strings.Contains(string(m.Result), `"value":1`) {
		t.Fatalf("evaluate after A closed: %s", m.Raw)
	}
	b.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(t, m) == "still here 0" })
	// A new window can still attach.
	c := w.dial("C")
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
}

// Requests a window sends back to back reach the worker together, and
// readLoop holds their writes to Node until the last of them
// (hostnode.SessionIO): every one must still be answered, in order of its
// id, including the last of each burst, which nothing follows to release it.
func TestBurstOfRequestsAllAnswered(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	a := w.dial("A")
	for burst := range 20 {
		ids := make([]int64, 0, 64)
		for i := range 64 {
			ids = append(ids, a.Send("Runtime.evaluate", map[string]any{"expression": fmt.Sprintf("%d * 2", burst*64+i)}))
		}
		for i, id := range ids {
			m := a.ExpectResponse(id)
			if want := fmt.Sprintf(`"value":%d`, (burst*64+i)*2); !strings.Contains(string(m.Result), want) {
				t.Fatalf("burst %d, request %d: %s, want %s", burst, i, m.Raw, want)
			}
		}
	}
}
