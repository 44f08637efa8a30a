package hostrealm

import (
	"encoding/json"
	"strings"
	"testing"
)

// testTable is the watch column of cdpserver's method table for the
// methods the test sends, with the settings in the table's order
// (cdpserver's TestMethodTableWatchColumn checks the table's own).
var testTable = &WatchTable{
	Rule: func(method string) WatchRule {
		switch method {
		case "Runtime.enable", "Runtime.disable", "Debugger.enable", "Debugger.disable", "Profiler.enable", "Profiler.disable":
			return WatchEnable
		case "Debugger.setPauseOnExceptions", "Debugger.setAsyncCallStackDepth", "Debugger.setBlackboxPatterns",
			"Debugger.setBreakpointsActive", "Debugger.setSkipAllPauses", "Runtime.setAsyncCallStackDepth":
			return WatchSetting
		case "Debugger.setBreakpointByUrl", "Debugger.setBreakpoint", "Debugger.removeBreakpoint":
			return WatchBreakpoint
		}
		return WatchNo
	},
	Settings: []string{
		"Debugger.setPauseOnExceptions", "Debugger.setAsyncCallStackDepth", "Debugger.setBlackboxPatterns",
		"Debugger.setBreakpointsActive", "Debugger.setSkipAllPauses", "Runtime.setAsyncCallStackDepth",
	},
}

// The recorded state of one window, driven by the messages a real
// conversation has (a unit test of the bookkeeping; the acceptance tests
// with real Node are in cmd/inspector-worker/watch_test.go).
func TestWatchStateRecordsAndMapsBreakpoints(t *testing.T) {
	w := NewWatchState(testTable)
	req := func(id int64, method, params string) []byte {
		return w.Request(id, method, []byte(`{"id":1,"method":"`+method+`","params":`+params+`}`))
	}
	req(1, "Runtime.enable", `{}`)
	w.Answered(1, []byte(`{"id":1,"result":{}}`))
	req(2, "Debugger.enable", `{"maxScriptsCacheSize":100}`)
	w.Answered(2, []byte(`{"id":2,"result":{"debuggerId":"x"}}`))
	req(3, "Debugger.setPauseOnExceptions", `{"state":"all"}`)
	w.Answered(3, []byte(`{"id":3,"result":{}}`))
	req(4, "Debugger.setBlackboxPatterns", `{"patterns":["x"]}`)
	w.Answered(4, []byte(`{"id":4,"error":{"code":-32000,"message":"no"}}`)) // refused: not recorded
	msg := []byte(`{"method":"Debugger.scriptParsed","params":{"scriptId":"7","url":"/app/app.js"}}`)
	w.Event("Debugger.scriptParsed", &msg)
	req(5, "Debugger.setBreakpointByUrl", `{"lineNumber":2,"urlRegex":"^app$"}`)
	w.Answered(5, []byte(`{"id":5,"result":{"breakpointId":"B1","locations":[]}}`))
	req(6, "Debugger.setBreakpoint", `{"location":{"scriptId":"7","lineNumber":3}}`)
	w.Answered(6, []byte(`{"id":6,"result":{"breakpointId":"7:3:0","actualLocation":{}}}`))

	ctx := []byte(`{"method":"Runtime.executionContextCreated","params":{"context":{"id":1,"uniqueId":"u1"}}}`)
	w.Event("Runtime.executionContextCreated", &ctx)
	gone, _ := w.HostGone()
	if len(gone) != 1 || !strings.Contains(string(gone[0]), `Runtime.executionContextsCleared`) {
		t.Fatalf("host gone: %q, want executionContextsCleared", gone)
	}

	var methods []string
	var bpAnswers []func([]byte) [][]byte
	for _, r := range w.Replay() {
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		json.Unmarshal(r.Msg, &m)
		methods = append(methods, m.Method+" "+string(m.Params))
		if r.OnAnswer != nil {
			bpAnswers = append(bpAnswers, r.OnAnswer)
		}
	}
	want := []string{
		`Runtime.enable {}`,
		`Debugger.enable {"maxScriptsCacheSize":100}`,
		`Debugger.setPauseOnExceptions {"state":"all"}`,
		`Debugger.setBreakpointByUrl {"lineNumber":2,"urlRegex":"^app$"}`,
		`Debugger.setBreakpointByUrl {"lineNumber":3,"urlRegex":"^(?:file:///app/app\\.js|/app/app\\.js)$"}`,
	}
	if strings.Join(methods, "\n") != strings.Join(want, "\n") {
		t.Fatalf("replay:\n%s\nwant:\n%s", strings.Join(methods, "\n"), strings.Join(want, "\n"))
	}
	// The new host names the by-location breakpoint differently: the window
	// keeps its id in events and in removeBreakpoint.
	bpAnswers[0]([]byte(`{"id":9,"result":{"breakpointId":"B1","locations":[]}}`))
	evs := bpAnswers[1]([]byte(`{"id":10,"result":{"breakpointId":"2:3:0:re","locations":[{"scriptId":"9","lineNumber":3,"columnNumber":2}]}}`))
	if len(evs) != 1 || !strings.Contains(string(evs[0]), `"breakpointId":"7:3:0"`) {
		t.Fatalf("resolved events %q, want one with the window's id 7:3:0", evs)
	}
	paused := []byte(`{"method":"Debugger.paused","params":{"callFrames":[],"hitBreakpoints":["2:3:0:re","B1"],"reason":"other"}}`)
	w.Event("Debugger.paused", &paused)
	if !strings.Contains(string(paused), `"hitBreakpoints":["7:3:0","B1"]`) {
		t.Fatalf("paused rewritten to %s", paused)
	}
	resolved := []byte(`{"method":"Debugger.breakpointResolved","params":{"breakpointId":"2:3:0:re","location":{}}}`)
	w.Event("Debugger.breakpointResolved", &resolved)
	if !strings.Contains(string(resolved), `"breakpointId":"7:3:0"`) {
		t.Fatalf("breakpointResolved rewritten to %s", resolved)
	}
	out := req(11, "Debugger.removeBreakpoint", `{"breakpointId":"7:3:0"}`)
	if !strings.Contains(string(out), `"params":{"breakpointId":"2:3:0:re"}`) {
		t.Fatalf("removeBreakpoint sent as %s, want the host's id", out)
	}
	if n := len(w.Replay()); n != 4 {
		t.Fatalf("after removeBreakpoint the replay has %d requests, want 4", n)
	}
	gone, _ = w.HostGone()
	if len(gone) != 2 || !strings.Contains(string(gone[0]), "Debugger.resumed") {
		t.Fatalf("host gone while paused: %q, want Debugger.resumed, then the reset", gone)
	}
}
