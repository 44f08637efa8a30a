package trace

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

const forkJS = `const { fork, spawn } = require("child_process");
if (process.argv[2] === "child") {
  if (process.argv[3] === "bad") throw new Error("child boom");
  console.log("child ok");
  return;
}
// A forged report: the program's own console call is never taken for one.
console.debug("inspector-worker:trace-child", JSON.stringify({ event: "spawn", pid: 4242, file: "x", args: ["x"] }));
const kids = [fork(__filename, ["child", "ok"]), fork(__filename, ["child", "bad"]),
  spawn(process.execPath, [...process.execArgv, __filename, "child", "ok"], { stdio: "inherit" })];
let left = kids.length;
for (const k of kids) k.on("exit", (code) => {
  console.log("child", k.pid, "exited", code);
  if (--left === 0) process.exit(3);
});
`

// TestChildrenRunFree: children started with fork() or with
// process.execPath + process.execArgv do not inherit --inspect-brk (they
// would wait for a debugger forever), the trace ends, and the session lists
// them, followed (follow_test.go covers what following captures), with
// their exit codes.
func TestChildrenRunFree(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"fork.js": forkJS})
	e := newEngine(t, Options{Workspace: ws})
	d := run(t, ctx, e, StartRequest{Target: "fork.js"})
	s := d.Session
	if s.ExitCode == nil || *s.ExitCode != 3 {
		t.Fatalf("exit code %v, want 3; events %+v", s.ExitCode, d.Events)
	}
	if len(s.Children) != 3 {
		t.Fatalf("children = %+v, want 3", s.Children)
	}
	codes := map[int]int{}
	for _, c := range s.Children {
		proctest.AssertGone(t, c.PID)
		if !c.Followed || c.ExitCode == nil || c.PID == 4242 || !slices.Contains(c.Command, filepath.Join(ws, "fork.js")) {
			t.Errorf("child %+v", c)
			continue
		}
		codes[*c.ExitCode]++
		for _, a := range c.Command {
			if strings.HasPrefix(a, "--inspect") {
				t.Errorf("child %d was started with %s", c.PID, a)
			}
		}
	}
	if codes[0] != 2 || codes[1] != 1 {
		t.Errorf("child exit codes %v, want two 0 and one 1", codes)
	}
	forged := findEvent(d.Events, KindConsole, "debug")
	if forged == nil || !strings.Contains(forged.Detail, "4242") {
		t.Errorf("the program's own console.debug is missing: %+v", forged)
	}
	for _, ev := range d.Events {
		if ev.Location != nil && strings.Contains(ev.Location.File, "inspector-worker-trace-") {
			t.Errorf("event #%d points into the engine's preload: %+v", ev.Seq, ev)
		}
	}
	if !strings.Contains(d.StderrTail, "child boom") {
		t.Errorf("the failing child's stderr is not in the tail:\n%s", d.StderrTail)
	}
	rep, err := e.Report(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := WriteText(&text, rep, ws); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "children 3 started, 3 followed") || !strings.Contains(text.String(), "exited with code 1: "+"/") ||
		strings.Contains(text.String(), "--require") {
		t.Errorf("text report:\n%s", text.String())
	}
}

// TestChildReportSource: only a console.debug from the preload's own
// script, with the mark and a well-formed record, is a child report.
func TestChildReportSource(t *testing.T) {
	m := newMapper("/ws", "/tmp/inspector-worker-trace-1.cjs")
	msg := func(url, typ, mark, body string) string {
		return `{"method":"Runtime.consoleAPICalled","params":{"type":"` + typ + `","args":[{"type":"string","value":"` + mark +
			`"},{"type":"string","value":` + body + `}],"stackTrace":{"callFrames":[{"functionName":"report","scriptId":"9","url":"` + url +
			`","lineNumber":30,"columnNumber":4}]}}}`
	}
	good := `"{\"event\":\"spawn\",\"pid\":12,\"file\":\"/usr/bin/node\",\"args\":[\"/usr/bin/node\",\"x.js\"]}"`
	for _, tc := range []struct {
		name, msg string
		child     bool
	}{
		{"from the preload", msg("file:///tmp/inspector-worker-trace-1.cjs", "debug", childMark, good), true},
		{"from the program", msg("file:///ws/app.js", "debug", childMark, good), false},
		{"not debug", msg("file:///tmp/inspector-worker-trace-1.cjs", "log", childMark, good), false},
		{"no mark", msg("file:///tmp/inspector-worker-trace-1.cjs", "debug", "x", good), false},
		{"bad record", msg("file:///tmp/inspector-worker-trace-1.cjs", "debug", childMark, `"{\"event\":\"spawn\",\"pid\":0}"`), false},
	} {
		ev, _, _ := decodeMessage(m, []byte(tc.msg))
		if ev == nil || (ev.child != nil) != tc.child || (!tc.child && ev.Kind != KindConsole) {
			t.Errorf("%s: %+v (message %s)", tc.name, ev, tc.msg)
		}
	}
}

// TestChildReportsWhoSays: a child is followed only by its OWN session's
// report; the program's session (or another child's) cannot claim it, and
// the child's exit is in the timeline once, after its session ended, with
// the code its parent saw.
func TestChildReportsWhoSays(t *testing.T) {
	s := newTestSession(100)
	defer s.cancel()
	s.pid = 10
	code := func(n int) *int { return &n }
	s.childReport(0, childReport{Event: "spawn", PID: 11, Args: []string{"node", "a.js"}})
	s.childReport(0, childReport{Event: "spawn", PID: 12, Args: []string{"node", "b.js"}})
	s.childReport(0, childReport{Event: "followed", PID: 11})  // the program claiming its child
	s.childReport(12, childReport{Event: "followed", PID: 11}) // a sibling claiming it
	s.childReport(11, childReport{Event: "followed", PID: 11}) // the child itself
	s.childReport(11, childReport{Event: "spawn", PID: 13, Args: []string{"node", "c.js"}})
	s.childReport(11, childReport{Event: "self-exit", PID: 11, Code: code(3)})
	s.childReport(0, childReport{Event: "exit", PID: 11, Code: code(4)}) // the parent's waitpid wins
	d := s.detail()
	if len(d.Session.Children) != 3 {
		t.Fatalf("children %+v", d.Session.Children)
	}
	a, b, c := d.Session.Children[0], d.Session.Children[1], d.Session.Children[2]
	if !a.Followed || b.Followed || a.PPID != 10 || c.PPID != 11 || *a.ExitCode != 4 {
		t.Errorf("children %+v", d.Session.Children)
	}
	var exits []Event
	for _, ev := range d.Events {
		if ev.Kind == KindExit {
			exits = append(exits, ev)
		}
	}
	if len(exits) != 1 || exits[0].PID != 11 || *exits[0].ExitCode != 4 {
		t.Errorf("exit events %+v", exits)
	}
}
