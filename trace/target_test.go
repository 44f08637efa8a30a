package trace

import (
	"path/filepath"
	"strings"
	"testing"
)

// Real-node tests of what a traced program can do to the engine: print
// Node's own banner lines, fail to parse, exit after logging an error.

const steerJS = `console.error("Waiting for the debugger to disconnect...");
console.error("Debugger listening on ws://127.0.0.1:9/fake");
setTimeout(() => {
  console.log("still running");
  throw new Error("late failure");
}, 50);
`

// TestTargetCannotSteer: a target that prints Node's banners mid-run keeps
// running, its exception is captured with its location, and both lines
// are in its output.
func TestTargetCannotSteer(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"steer.js": steerJS})
	e := newEngine(t, Options{Workspace: ws})
	d := run(t, ctx, e, StartRequest{Target: "steer.js"})
	exc := findEvent(d.Events, KindException, "")
	if exc == nil || exc.ErrorMessage != "Error: late failure" {
		t.Fatalf("exception = %+v; events %+v", exc, d.Events)
	}
	if exc.Location == nil || exc.Location.File != filepath.Join(ws, "steer.js") || exc.Location.Line != 5 || exc.Location.Column != 9 {
		t.Errorf("exception location = %+v, want steer.js:5:9", exc.Location)
	}
	if findEvent(d.Events, KindConsole, "log") == nil {
		t.Errorf("the console.log after the banners was lost")
	}
	var out []string
	for _, ev := range d.Events {
		if ev.Kind == KindOutput && ev.Subtype == "stderr" {
			out = append(out, ev.Detail)
		}
	}
	joined := strings.Join(out, "\n")
	for _, want := range []string{"Waiting for the debugger to disconnect...", "Debugger listening on ws://127.0.0.1:9/fake"} {
		if !strings.Contains(joined, want) {
			t.Errorf("stderr output lacks %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "Debugger attached.") || strings.Contains(joined, "Debugger ending") {
		t.Errorf("Node's own banners reached the output:\n%s", joined)
	}
	if d.Session.ExitCode == nil || *d.Session.ExitCode != 1 {
		t.Errorf("exit code = %v, want 1", d.Session.ExitCode)
	}
}
