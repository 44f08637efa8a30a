package cdpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// hiddenSpinScript is a host whose spin() runs, from a timer, a loop inside
// a script the worker hides (Options.HideScripts, as `run` hides the
// preload) until globalThis.stop is set; the loop sets globalThis.spinning. Node runs inspector requests on
// interrupts, so a Debugger.enable that arrives meanwhile is answered with
// the hidden script's frame on the stack, and V8 puts that stack into every
// scriptParsed it sends for the scripts already compiled.
const hiddenSpinScript = `
const hidden = require(%s);
globalThis.spin = () => {
  setTimeout(function spinning() {
    console.log('spinning');
    hidden.spinUntilStop();
    console.log('spun');
  }, 0);
  return 'armed';
};
setInterval(() => {}, 1 << 30);
process.stdout.write('host ready\n');
`

// A window that enables Debugger while the host runs code of a hidden
// script (the preload: its console wrapper, its host-channel flush) gets
// the host's scripts all the same; only the hidden script itself is left
// out. The hiding once matched the hidden URL anywhere in the event, so the
// frames of scriptParsed.stackTrace hid every script: an empty Sources tree
// (TestWatchWindowSurvivesRestart's flake under load; docs/agent-note.md
// "Relay rules").
func TestHiddenScriptOnStackHidesNothingElse(t *testing.T) {
	hidden := filepath.Join(t.TempDir(), "hidden.js")
	if err := os.WriteFile(hidden, []byte("exports.spinUntilStop = () => { globalThis.spinning = true; while (globalThis.stop !== true) {} };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q, _ := json.Marshal(hidden)
	w := startWorker(t, strings.Replace(hiddenSpinScript, "%s", string(q), 1), Options{HideScripts: []string{hidden}})
	c := w.dial("A")
	c.MustCall("Runtime.enable", nil)
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "spin()"})
	c.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(t, m) == "spinning" })
	// Inside the loop, not in console.log's own code any more (the
	// evaluation runs on an interrupt too).
	for deadline := time.Now().Add(cdptest.Timeout); ; time.Sleep(10 * time.Millisecond) {
		m := c.MustCall("Runtime.evaluate", map[string]any{"expression": "globalThis.spinning === true", "returnByValue": true})
		if strings.Contains(string(m.Result), `"value":true`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the host never entered the hidden script's loop")
		}
	}
	enable := c.Send("Debugger.enable", nil)
	c.ExpectResponse(enable)
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "globalThis.stop = true"})
	c.ExpectEvent("Runtime.consoleAPICalled", func(m cdptest.Msg) bool { return consoleText(t, m) == "spun" })

	var hostJS []cdptest.Msg
	all := c.Events("Debugger.scriptParsed")
	for _, m := range all {
		u := jsonString(m.Params, "url")
		if strings.HasSuffix(u, "/hidden.js") {
			t.Errorf("the hidden script reached the window: %s", m.Raw)
		}
		if strings.HasSuffix(u, "/host.js") {
			hostJS = append(hostJS, m)
		}
	}
	if len(hostJS) != 1 {
		t.Fatalf("%d scriptParsed for host.js, want 1 (%d scriptParsed in all)", len(hostJS), len(all))
	}
	// The condition this test is about, checked so it cannot pass for the
	// wrong reason: the event's stack is the hidden script's loop.
	if !strings.Contains(string(hostJS[0].Params), `"stackTrace"`) || !strings.Contains(string(hostJS[0].Params), "hidden.js") {
		t.Errorf("host.js's scriptParsed does not carry the hidden script's frame: %s", hostJS[0].Raw)
	}
}

func jsonString(raw json.RawMessage, name string) string {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	s, _ := m[name].(string)
	return s
}
