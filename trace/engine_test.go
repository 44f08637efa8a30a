package trace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

const logThenThrowJS = `console.log("first", 1, {a: 1}, NaN, -0, 10n);
console.error("second");
function boom(x) {
  throw new Error("bad value " + x);
}
boom(42);
`

// TestLogTwiceThenThrow is the first acceptance case: script, console and
// exception events; 1-based lines inside the workspace; no node:internal
// frame; evidence with confidence high and the caveat.
func TestLogTwiceThenThrow(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"app.js": logThenThrowJS})
	e := newEngine(t, Options{Workspace: ws})
	d := run(t, ctx, e, StartRequest{Target: "app.js"})
	app := filepath.Join(ws, "app.js")

	if d.Session.Status != StatusExited || d.Session.ExitCode == nil || *d.Session.ExitCode != 1 {
		t.Fatalf("session = %+v, want exited with code 1", d.Session)
	}
	k := kinds(d.Events)
	if k[KindScript] != 1 || k[KindConsole] != 2 || k[KindException] != 1 || k[KindExit] != 1 || k[KindContext] < 1 {
		t.Fatalf("event kinds = %v", k)
	}
	script := findEvent(d.Events, KindScript, "")
	if script.Location == nil || script.Location.File != app {
		t.Errorf("script event = %+v, want %s", script, app)
	}
	first := findEvent(d.Events, KindConsole, "log")
	wantValues := []string{"first", "1", "{a: 1}", "NaN", "-0", "10n"}
	if len(first.Values) != len(wantValues) {
		t.Fatalf("console values = %+v", first.Values)
	}
	for i, v := range first.Values {
		if v.Text != wantValues[i] {
			t.Errorf("value %d = %q, want %q", i, v.Text, wantValues[i])
		}
	}
	if first.Location == nil || first.Location.File != app || first.Location.Line != 1 || first.Location.Column != 9 {
		t.Errorf("console.log location = %+v, want %s:1:9", first.Location, app)
	}
	second := findEvent(d.Events, KindConsole, "error")
	if second.Location == nil || second.Location.Line != 2 {
		t.Errorf("console.error location = %+v, want line 2", second.Location)
	}
	exc := findEvent(d.Events, KindException, "")
	if exc.Location == nil || exc.Location.File != app || exc.Location.Line != 4 {
		t.Errorf("exception location = %+v, want %s:4", exc.Location, app)
	}
	if exc.ErrorMessage != "Error: bad value 42" {
		t.Errorf("exception message = %q", exc.ErrorMessage)
	}
	if len(exc.CallStack) != 2 || exc.CallStack[0].Function != "boom" || exc.CallStack[1].Location.Line != 6 {
		t.Errorf("exception frames = %+v, want boom then line 6", exc.CallStack)
	}
	assertNoInternalFrames(t, d.Events)

	rep, err := e.Evidence(d.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	ev := rep.Evidence
	if ev == nil {
		t.Fatal("evidence is null")
	}
	if ev.Confidence != ConfidenceHigh || ev.Caveat == "" || rep.Caveat == "" {
		t.Errorf("confidence %q (%s), caveat %q", ev.Confidence, ev.ConfidenceReason, ev.Caveat)
	}
	if ev.Failure.Kind != FailureException || ev.Failure.Location.Line != 4 || !ev.Failure.SourceResolved {
		t.Errorf("failure = %+v", ev.Failure)
	}
	if ev.ImmediateCause == nil || ev.ImmediateCause.Seq != second.Seq {
		t.Errorf("immediate cause = %+v, want the console.error event #%d", ev.ImmediateCause, second.Seq)
	}
	if ev.OriginatingValue == nil || !strings.HasPrefix(ev.OriginatingValue.Text, "Error: bad value 42") {
		t.Errorf("originating value = %+v", ev.OriginatingValue)
	}
	if ev.RelevantInput.Target != app || ev.RelevantInput.Cwd != ws {
		t.Errorf("input = %+v", ev.RelevantInput)
	}
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "node:internal") {
		t.Errorf("the evidence mentions node:internal: %s", raw)
	}
}

// assertNoInternalFrames checks every location, frame and stack text.
func assertNoInternalFrames(t *testing.T, events []Event) {
	t.Helper()
	for _, ev := range events {
		locs := []*Location{ev.Location, ev.Generated}
		for _, f := range ev.CallStack {
			locs = append(locs, &f.Location, f.Generated)
		}
		for _, l := range locs {
			if l != nil && (!filepath.IsAbs(l.File) || strings.Contains(l.File, "node:")) {
				t.Errorf("event #%d has a non-file location %+v", ev.Seq, l)
			}
		}
		if strings.Contains(ev.Stack, "node:internal") {
			t.Errorf("event #%d stack shows node:internal:\n%s", ev.Seq, ev.Stack)
		}
		for _, v := range ev.Values {
			if strings.Contains(v.Text, "node:internal") {
				t.Errorf("event #%d value shows node:internal: %q", ev.Seq, v.Text)
			}
		}
	}
}

// TestSourceMapFixture: the committed tsc output maps the failure and the
// console call back to app.ts.
func TestSourceMapFixture(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, nil)
	for _, name := range []string{"app.ts", "app.js", "app.js.map"} {
		data, err := os.ReadFile(filepath.Join("testdata", "sourcemap", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := newEngine(t, Options{Workspace: ws})
	d := run(t, ctx, e, StartRequest{Target: "app.js"})
	rep, err := e.Evidence(d.Session.ID)
	if err != nil || rep.Evidence == nil {
		t.Fatalf("evidence %+v, %v", rep, err)
	}
	f := rep.Evidence.Failure
	ts, js := filepath.Join(ws, "app.ts"), filepath.Join(ws, "app.js")
	// app.ts line 17 is the throw; tsc erased the interface, so app.js has it on line 8.
	if f.Location == nil || f.Location.File != ts || f.Location.Line != 17 {
		t.Errorf("failure location = %+v, want %s:17", f.Location, ts)
	}
	if f.Generated == nil || f.Generated.File != js || f.Generated.Line != 8 {
		t.Errorf("failure generated = %+v, want %s:8", f.Generated, js)
	}
	cause := rep.Evidence.ImmediateCause
	if cause == nil || cause.Kind != KindConsole || cause.Location.File != ts || cause.Location.Line != 15 {
		t.Errorf("immediate cause = %+v, want console.log at app.ts:15", cause)
	}
	if rep.Evidence.Confidence != ConfidenceHigh {
		t.Errorf("confidence = %s (%s)", rep.Evidence.Confidence, rep.Evidence.ConfidenceReason)
	}
	if !strings.Contains(f.Stack, "app.ts:17") {
		t.Errorf("Node's source-mapped stack = %q, want app.ts:17", f.Stack)
	}
}

// TestExitWithoutException: the failure comes from stderr, without Node's
// inspector banners; a clean exit has no failure.
func TestExitWithoutException(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{
		"fail.js":  `console.log("loading"); process.stderr.write("fatal: config missing\n"); process.exitCode = 3;`,
		"clean.js": `console.log("all good");`,
	})
	e := newEngine(t, Options{Workspace: ws})

	d := run(t, ctx, e, StartRequest{Target: "fail.js"})
	rep, err := e.Evidence(d.Session.ID)
	if err != nil || rep.Evidence == nil {
		t.Fatalf("evidence %+v, %v", rep, err)
	}
	f := rep.Evidence.Failure
	if f.Kind != FailureExit || f.Message != "fatal: config missing" || f.ExitCode == nil || *f.ExitCode != 3 {
		t.Errorf("failure = %+v", f)
	}
	if strings.Contains(f.StderrTail, "Debugger") || strings.Contains(d.StderrTail, "Debugger") {
		t.Errorf("stderr tail shows inspector banners: %q", f.StderrTail)
	}
	if rep.Evidence.Confidence != ConfidenceLow || rep.Evidence.Caveat == "" {
		t.Errorf("confidence = %s, caveat %q", rep.Evidence.Confidence, rep.Evidence.Caveat)
	}
	if c := rep.Evidence.ImmediateCause; c == nil || c.Kind != KindConsole {
		t.Errorf("immediate cause = %+v, want the console.log", c)
	}

	d = run(t, ctx, e, StartRequest{Target: "clean.js"})
	rep, err = e.Evidence(d.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Evidence != nil || rep.Caveat == "" || d.Session.HasFailure || *d.Session.ExitCode != 0 {
		t.Errorf("clean exit: evidence %+v, caveat %q, session %+v", rep.Evidence, rep.Caveat, d.Session)
	}
	if out := findEvent(d.Events, KindOutput, "stdout"); out == nil || out.Detail != "all good" {
		t.Errorf("stdout event = %+v", out)
	}
}

// TestEventCap: 20,000 console lines (40,000 events with their stdout
// lines) keep the newest 10,000, count the drops, and keep the failure.
func TestEventCap(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{
		"flood.js": `for (let i = 0; i < 20000; i++) console.log("line", i);` + "\n" + `throw new Error("after the flood");`,
	})
	e := newEngine(t, Options{Workspace: ws})
	d := run(t, ctx, e, StartRequest{Target: "flood.js"})
	s := d.Session
	t.Logf("stored %d events, dropped %d", s.Events, s.DroppedEvents)
	if s.Events != DefaultMaxEvents || len(d.Events) != DefaultMaxEvents {
		t.Errorf("stored %d (%d returned), want %d", s.Events, len(d.Events), DefaultMaxEvents)
	}
	if !s.Truncated || s.DroppedEvents < 30_000 {
		t.Errorf("dropped %d, truncated %v; want >= 30000 and true", s.DroppedEvents, s.Truncated)
	}
	if d.Events[0].Seq != s.DroppedEvents+1 {
		t.Errorf("first stored seq = %d, want %d", d.Events[0].Seq, s.DroppedEvents+1)
	}
	if d.Events[len(d.Events)-1].Kind != KindExit {
		t.Errorf("last event = %+v, want the exit", d.Events[len(d.Events)-1])
	}
	rep, _ := e.Evidence(s.ID)
	if rep.Evidence == nil || rep.Evidence.Failure.Message != "Error: after the flood" {
		t.Errorf("evidence = %+v", rep.Evidence)
	}
}

// TestSessionEviction: the 21st session evicts the oldest finished one.
func TestSessionEviction(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"ok.js": `0;`})
	e := newEngine(t, Options{Workspace: ws})
	var ids []string
	for range DefaultMaxSessions + 1 {
		d := run(t, ctx, e, StartRequest{Target: "ok.js"})
		ids = append(ids, d.Session.ID)
	}
	if _, err := e.Get(ids[0]); !errors.Is(err, ErrNotFound) {
		t.Errorf("oldest session: %v, want ErrNotFound", err)
	}
	list := e.List()
	if len(list) != DefaultMaxSessions || list[0].ID != ids[1] || list[len(list)-1].ID != ids[len(ids)-1] {
		t.Errorf("list has %d sessions from %s to %s", len(list), list[0].ID, list[len(list)-1].ID)
	}
}

// TestTooManyRunning: running sessions are never evicted.
func TestTooManyRunning(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"wait.js": `setInterval(() => {}, 1000);`})
	e := newEngine(t, Options{Workspace: ws, MaxSessions: 2})
	a, err := e.Start(ctx, StartRequest{Target: "wait.js"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(ctx, StartRequest{Target: "wait.js"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(ctx, StartRequest{Target: "wait.js"}); !errors.Is(err, ErrTooManySessions) {
		t.Fatalf("third start: %v, want ErrTooManySessions", err)
	}
	if _, err := e.Stop(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	proctest.AssertGone(t, a.PID)
	c, err := e.Start(ctx, StartRequest{Target: "wait.js"})
	if err != nil {
		t.Fatalf("start after a stop: %v", err)
	}
	if _, err := e.Get(a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("stopped session not evicted: %v", err)
	}
	if _, err := e.Stop(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
}

// TestStopStaysStopped: a stop by the user stays "stopped" after the exit
// event arrives, kills the child, and is no failure.
func TestStopStaysStopped(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"wait.js": `console.log("up"); setInterval(() => {}, 1000);`})
	e := newEngine(t, Options{Workspace: ws})
	s, err := e.Start(ctx, StartRequest{Target: "wait.js"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Stop(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	proctest.AssertGone(t, s.PID)
	if got.Status != StatusStopped || got.StopReason == "" || got.HasFailure {
		t.Errorf("after stop: %+v", got)
	}
	d, _ := e.Get(s.ID)
	if last := d.Events[len(d.Events)-1]; last.Kind != KindExit || d.Session.Status != StatusStopped {
		t.Errorf("last event %+v, status %s", last, d.Session.Status)
	}
	if rep, _ := e.Evidence(s.ID); rep.Evidence != nil {
		t.Errorf("a stopped session has evidence %+v", rep.Evidence)
	}
	if again, err := e.Stop(ctx, s.ID); err != nil || again.Status != StatusStopped {
		t.Errorf("second stop: %+v, %v", again, err)
	}
}

// TestShutdownKillsChildren: no child survives the engine.
func TestShutdownKillsChildren(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"wait.js": `setInterval(() => {}, 1000);`})
	e := New(Options{Workspace: ws})
	var pids []int
	for range 2 {
		s, err := e.Start(ctx, StartRequest{Target: "wait.js"})
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, s.PID)
	}
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		proctest.AssertGone(t, pid)
	}
	for _, s := range e.List() {
		if s.Status != StatusStopped {
			t.Errorf("after shutdown %s is %s", s.ID, s.Status)
		}
	}
	if _, err := e.Start(ctx, StartRequest{Target: "wait.js"}); !errors.Is(err, ErrClosed) {
		t.Errorf("start after shutdown: %v, want ErrClosed", err)
	}
}

// TestTargetEnvironment: the session id is in the environment, stdin is
// closed, a debugger statement does not stop the trace, and a logged
// object's id never reaches the store.
func TestTargetEnvironment(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"env.js": `
debugger;
console.log(process.env.INSPECTOR_WORKER_TRACE_SESSION);
console.log({secret: "x".repeat(2000)}, "y".repeat(2000));
process.stdin.on("data", () => {}).on("end", () => console.log("stdin closed"));
`})
	e := newEngine(t, Options{Workspace: ws})
	d := run(t, ctx, e, StartRequest{Target: "env.js"})
	var logs []Event
	for _, ev := range d.Events {
		if ev.Kind == KindConsole {
			logs = append(logs, ev)
		}
	}
	if len(logs) != 3 || logs[0].Detail != d.Session.ID || logs[2].Detail != "stdin closed" {
		t.Fatalf("console events = %+v", logs)
	}
	big := logs[1]
	if v := big.Values[1]; !v.Truncated || len([]rune(v.Text)) != maxValueChars {
		t.Errorf("long string value: %d chars, truncated %v", len([]rune(v.Text)), v.Truncated)
	}
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "objectId") {
		t.Error("an objectId reached the store")
	}
}

// TestSnapshotsAreCopies: changing what the engine returned changes nothing
// inside it.
func TestSnapshotsAreCopies(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"app.js": logThenThrowJS})
	e := newEngine(t, Options{Workspace: ws})
	d := run(t, ctx, e, StartRequest{Target: "app.js", Args: []string{"a"}})
	exc := findEvent(d.Events, KindException, "")
	exc.Location.Line = 999
	exc.CallStack[0].Function = "changed"
	exc.Values[0].Text = "changed"
	d.Events[0].Detail = "changed"
	d.Session.Args[0] = "changed"
	again, _ := e.Get(d.Session.ID)
	if exc2 := findEvent(again.Events, KindException, ""); exc2.Location.Line == 999 ||
		exc2.CallStack[0].Function == "changed" || exc2.Values[0].Text == "changed" ||
		again.Events[0].Detail == "changed" || again.Session.Args[0] == "changed" {
		t.Error("a returned snapshot aliases the live session")
	}
}

func TestNodeUnavailable(t *testing.T) {
	ws := workspace(t, map[string]string{"app.js": `0;`})
	e := newEngine(t, Options{Workspace: ws, Node: filepath.Join(ws, "no-such-node")})
	st := e.Status(testCtx(t))
	if st.Capabilities.Available || st.Capabilities.Node.Version != "unavailable" || st.Capabilities.Replay != "timeline" {
		t.Errorf("capabilities = %+v", st.Capabilities)
	}
	if _, err := e.Start(testCtx(t), StartRequest{Target: "app.js"}); !errors.Is(err, ErrNodeUnavailable) {
		t.Errorf("start: %v, want ErrNodeUnavailable", err)
	}
}

func TestStatusReportsNode(t *testing.T) {
	e := newEngine(t, Options{Workspace: t.TempDir()})
	st := e.Status(testCtx(t))
	c := st.Capabilities
	if !c.Available || !strings.HasPrefix(c.Node.Version, "v") || !filepath.IsAbs(c.Node.Path) ||
		!c.SourceMapping.Enabled || c.SourceMapping.Flag != "--enable-source-maps" || c.Replay != "timeline" ||
		c.Limits.MaxEvents != DefaultMaxEvents || c.Limits.MaxSessions != DefaultMaxSessions {
		t.Errorf("capabilities = %+v", c)
	}
}

// TestStartFailure: a "node" that never prints an inspector URL gives a
// failed session whose evidence is the start failure.
func TestStartFailure(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"app.js": `0;`, "fake-node": "#!/bin/sh\necho 'cannot run' >&2\nexit 7\n"})
	fake := filepath.Join(ws, "fake-node")
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, Options{Workspace: ws, Node: fake})
	s, err := e.Start(ctx, StartRequest{Target: "app.js"})
	if !errors.Is(err, ErrStart) || s.ID == "" || s.Status != StatusFailed || s.Error == "" {
		t.Fatalf("start = %+v, %v; want a failed session and ErrStart", s, err)
	}
	rep, _ := e.Evidence(s.ID)
	if rep.Evidence == nil || rep.Evidence.Failure.Kind != FailureStart || rep.Evidence.Confidence != ConfidenceLow {
		t.Errorf("evidence = %+v", rep.Evidence)
	}
	if !strings.Contains(rep.Evidence.Failure.StderrTail, "cannot run") {
		t.Errorf("stderr tail = %q", rep.Evidence.Failure.StderrTail)
	}
}

func TestContainment(t *testing.T) {
	outside := workspace(t, map[string]string{"evil.js": `0;`})
	ws := workspace(t, map[string]string{"app.js": `0;`, "sub/in.js": `0;`})
	must(t, os.Symlink(filepath.Join(outside, "evil.js"), filepath.Join(ws, "link-out.js")))
	must(t, os.Symlink(filepath.Join(ws, "app.js"), filepath.Join(ws, "link-in.js")))
	must(t, os.Symlink(outside, filepath.Join(ws, "dir-out")))
	e := newEngine(t, Options{Workspace: ws})
	for _, tc := range []struct {
		req  StartRequest
		want error
	}{
		{StartRequest{Target: "../" + filepath.Base(outside) + "/evil.js"}, ErrOutsideWorkspace},
		{StartRequest{Target: filepath.Join(outside, "evil.js")}, ErrOutsideWorkspace},
		{StartRequest{Target: "link-out.js"}, ErrOutsideWorkspace},
		{StartRequest{Target: "dir-out/evil.js"}, ErrOutsideWorkspace},
		{StartRequest{Target: "../nowhere.js"}, ErrOutsideWorkspace},
		{StartRequest{Target: "app.js", Cwd: ".."}, ErrOutsideWorkspace},
		{StartRequest{Target: "app.js", Cwd: "dir-out"}, ErrOutsideWorkspace},
		{StartRequest{Target: "missing.js"}, ErrBadRequest},
		{StartRequest{Target: "sub"}, ErrBadRequest},
		{StartRequest{Target: "app.js", Cwd: "app.js"}, ErrBadRequest},
		{StartRequest{Target: ""}, ErrBadRequest},
		{StartRequest{Target: "app.js", Args: make([]string, maxArgs+1)}, ErrBadRequest},
		{StartRequest{Target: "app.js", Args: []string{"a\x00b"}}, ErrBadRequest},
	} {
		if _, err := e.Start(testCtx(t), tc.req); !errors.Is(err, tc.want) {
			t.Errorf("Start(%+v) = %v, want %v", tc.req, err, tc.want)
		}
	}
	if n := len(e.List()); n != 0 {
		t.Errorf("%d sessions after refused starts", n)
	}
	// Inside, through a symlink or an absolute path: accepted.
	for _, target := range []string{"link-in.js", filepath.Join(ws, "sub/in.js")} {
		d := run(t, testCtx(t), e, StartRequest{Target: target, Cwd: "sub"})
		if d.Session.Status != StatusExited || !strings.HasPrefix(d.Session.Target, ws) || d.Session.Cwd != filepath.Join(ws, "sub") {
			t.Errorf("%s: %+v", target, d.Session)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestStartCanceled: a start whose ctx is done leaves no process.
func TestStartCanceled(t *testing.T) {
	ws := workspace(t, map[string]string{"app.js": `0;`})
	e := newEngine(t, Options{Workspace: ws})
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	s, err := e.Start(ctx, StartRequest{Target: "app.js"})
	if !errors.Is(err, ErrStart) || s.Status != StatusFailed {
		t.Errorf("start = %+v, %v", s, err)
	}
}

// TestWorkerThreadsRun: worker threads inherit --inspect-brk and waited for
// a debugger forever (the trace hung until stopped); they run as under plain
// node, threads of threads too, and the script exits on its own.
func TestWorkerThreadsRun(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"threads.js": `
const { Worker, isMainThread, workerData } = require('worker_threads');
const depth = isMainThread ? 0 : workerData;
if (depth > 0) console.log('thread ' + depth + ' first line');
if (depth < 2) new Worker(__filename, { workerData: depth + 1 });
`})
	e := newEngine(t, Options{Workspace: ws})
	d := run(t, ctx, e, StartRequest{Target: "threads.js"})
	var lines []string
	for _, ev := range d.Events {
		if ev.Kind == KindOutput && ev.Subtype == "stdout" {
			lines = append(lines, ev.Detail)
		}
	}
	if got := strings.Join(lines, "|"); got != "thread 1 first line|thread 2 first line" || *d.Session.ExitCode != 0 {
		t.Fatalf("stdout %q, exit code %d; want both threads' first lines and 0", got, *d.Session.ExitCode)
	}
}
