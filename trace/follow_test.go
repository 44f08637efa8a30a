package trace

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

func childEvents(events []Event, pid int) []Event {
	var out []Event
	for _, ev := range events {
		if ev.PID == pid {
			out = append(out, ev)
		}
	}
	return out
}

func onlyChild(t *testing.T, s Session) Child {
	t.Helper()
	if len(s.Children) != 1 {
		t.Fatalf("children = %+v, want one", s.Children)
	}
	proctest.AssertGone(t, s.Children[0].PID)
	return s.Children[0]
}

// TestFollowForkException: a fork()ed child that logs an error and throws
// is followed: its console calls, its uncaught exception (with its own
// file:line) and its exit code are events with its pid, and the evidence's
// failure is the child's exception, rated on the child's own events.
func TestFollowForkException(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"fork.js": `const { fork } = require("child_process");
if (process.argv[2] === "child") {
  console.log("child starts", process.pid);
  console.error("child: bad input", 42);
  throw new TypeError("child boom");
}
const k = fork(__filename, ["child"]);
k.on("exit", (code) => { console.log("child exited", code); process.exit(2); });
`})
	e := newEngine(t, Options{Workspace: ws})
	d := run(t, ctx, e, StartRequest{Target: "fork.js"})
	c := onlyChild(t, d.Session)
	if !c.Followed || c.ExitCode == nil || *c.ExitCode != 1 || c.PPID != d.Session.PID || c.Note != "" {
		t.Fatalf("child %+v, want followed, exit code 1, ppid %d", c, d.Session.PID)
	}
	file := filepath.Join(ws, "fork.js")
	mine := childEvents(d.Events, c.PID)
	exc := findEvent(mine, KindException, "")
	if exc == nil || exc.Location == nil || *exc.Location != (Location{File: file, Line: 5, Column: 9}) ||
		exc.ErrorMessage != "TypeError: child boom" {
		t.Fatalf("child exception %+v; child events %+v", exc, mine)
	}
	if cerr := findEvent(mine, KindConsole, "error"); cerr == nil || cerr.Detail != "child: bad input 42" || cerr.Location.Line != 4 {
		t.Errorf("child console.error %+v", cerr)
	}
	exit := findEvent(mine, KindExit, "")
	if exit == nil || exit.ExitCode == nil || *exit.ExitCode != 1 || exit.Seq < exc.Seq {
		t.Errorf("child exit event %+v (exception #%d)", exit, exc.Seq)
	}
	if d.Session.ExceptionCount != 1 || *d.Session.ExitCode != 2 {
		t.Errorf("exceptionCount %d, exit code %d", d.Session.ExceptionCount, *d.Session.ExitCode)
	}
	for _, ev := range d.Events {
		if ev.Kind == KindException && ev.PID == 0 {
			t.Errorf("an exception attributed to the program: %+v", ev)
		}
		if ev.Kind == KindOutput && (ev.Detail == childAttachedLine || ev.Detail == childWaitingLine) { // the child shares the program's stderr
			t.Errorf("Node's line for the engine's session to the child is in the output: #%d %q", ev.Seq, ev.Detail)
		}
	}
	rep, err := e.Evidence(d.Session.ID)
	if err != nil {
		t.Fatal(err)
	}
	ev := rep.Evidence
	if ev == nil || ev.Failure.PID != c.PID || ev.Failure.Kind != FailureException || ev.Failure.Location.Line != 5 ||
		ev.Failure.ExitCode == nil || *ev.Failure.ExitCode != 1 {
		t.Fatalf("evidence %+v", ev)
	}
	if ev.ImmediateCause == nil || ev.ImmediateCause.PID != c.PID || ev.ImmediateCause.Subtype != "error" {
		t.Errorf("immediate cause %+v, want the child's console.error", ev.ImmediateCause)
	}
	for _, tr := range ev.PreviousStateTransitions {
		if tr.PID != c.PID {
			t.Errorf("transition from another process: %+v", tr)
		}
	}
	if ev.Confidence != ConfidenceHigh || !strings.Contains(ev.ConfidenceReason, "child pid "+strconv.Itoa(c.PID)) ||
		!strings.Contains(ev.ConfidenceReason, "exit code 2 is not proven") || ev.ChildCaveat != "" {
		t.Errorf("confidence %s: %s; child caveat %q", ev.Confidence, ev.ConfidenceReason, ev.ChildCaveat)
	}
}

// TestFollowNoChildren: with following off the child runs free and is
// listed, not followed, with the reason, as before following existed.
func TestFollowNoChildren(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"fork.js": `const { fork } = require("child_process");
if (process.argv[2] === "child") throw new Error("child boom");
fork(__filename, ["child"]).on("exit", (code) => process.exit(code));
`})
	e := newEngine(t, Options{Workspace: ws, NoChildren: true})
	d := run(t, ctx, e, StartRequest{Target: "fork.js"})
	c := onlyChild(t, d.Session)
	if c.Followed || c.ExitCode == nil || *c.ExitCode != 1 || !strings.Contains(c.Note, "--no-children") ||
		d.Session.ExceptionCount != 0 || len(childEvents(d.Events, c.PID)) != 0 {
		t.Errorf("child %+v, exceptions %d", c, d.Session.ExceptionCount)
	}
	if st := e.Status(ctx); st.Capabilities.Limits.MaxFollowed != 0 {
		t.Errorf("status limits %+v", st.Capabilities.Limits)
	}
}

// TestFollowSpawnConsoleError: spawn(process.execPath) with an environment
// of its own (no execArgv, no NODE_OPTIONS of the program) is followed too;
// its console.error is an event with its pid, its exit code is known, and
// the follow token is in no event and no output line.
func TestFollowSpawnConsoleError(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"spawn.js": `const { spawn } = require("child_process");
if (process.argv[2] === "child") {
  console.log(JSON.stringify(process.env));
  console.error("spawned child says no");
  process.exitCode = 3;
  return;
}
console.log(JSON.stringify(process.env));
const k = spawn(process.execPath, [__filename, "child"], { env: { PATH: process.env.PATH } });
let out = "";
k.stdout.on("data", (d) => out += d);
k.stderr.on("data", (d) => out += d);
k.on("close", (code) => console.log("spawned child exited", code, out));
`})
	e := newEngine(t, Options{Workspace: ws})
	s, err := e.Start(ctx, StartRequest{Target: "spawn.js"})
	if err != nil {
		t.Fatal(err)
	}
	live, err := e.lookup(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	token := live.followToken
	if _, err := e.Wait(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	d, _ := e.Get(s.ID)
	c := onlyChild(t, d.Session)
	if !c.Followed || c.ExitCode == nil || *c.ExitCode != 3 {
		t.Fatalf("child %+v, want followed with exit code 3", c)
	}
	mine := childEvents(d.Events, c.PID)
	cerr := findEvent(mine, KindConsole, "error")
	if cerr == nil || cerr.Detail != "spawned child says no" || cerr.Location == nil ||
		*cerr.Location != (Location{File: filepath.Join(ws, "spawn.js"), Line: 4, Column: 11}) {
		t.Fatalf("child console.error %+v; child events %+v", cerr, mine)
	}
	if exit := findEvent(mine, KindExit, ""); exit == nil || *exit.ExitCode != 3 {
		t.Errorf("child exit event %+v", exit)
	}
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(token) != 64 || strings.Contains(string(raw), token) || strings.Contains(string(raw), followTokenEnv) {
		t.Errorf("the follow token (or its variable) reached the trace:\n%s", raw)
	}
	if !strings.Contains(string(raw), SessionEnv) { // the program's env was printed: the check above can fail
		t.Errorf("the program's environment was not captured")
	}
	rep, err := e.Report(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := WriteText(&text, rep, ws); err != nil {
		t.Fatal(err)
	}
	if rep.Evidence != nil || !strings.Contains(text.String(), "exited with code 3 (followed") {
		t.Errorf("evidence %+v; text:\n%s", rep.Evidence, text.String())
	}
}

// TestFollowFastExit: a child killed before it could register is listed,
// not followed, with the reason, and the evidence's child caveat names it;
// a child that exits at once after its start is followed (it waited for
// the engine), with its exit code.
func TestFollowFastExit(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"fast.js": `const { fork, spawn } = require("child_process");
const killed = fork(__filename, ["never"]);
killed.kill("SIGKILL");
const quick = spawn(process.execPath, ["-e", "process.exit(4)"], { stdio: "inherit" });
let left = 2;
for (const k of [killed, quick]) k.on("exit", () => { if (--left === 0) process.exit(1); });
`})
	e := newEngine(t, Options{Workspace: ws})
	d := run(t, ctx, e, StartRequest{Target: "fast.js"})
	if len(d.Session.Children) != 2 {
		t.Fatalf("children %+v", d.Session.Children)
	}
	killed, quick := d.Session.Children[0], d.Session.Children[1]
	if killed.Followed || killed.Signal != "SIGKILL" || !strings.Contains(killed.Note, "never registered") {
		t.Errorf("killed child %+v", killed)
	}
	if !quick.Followed || quick.ExitCode == nil || *quick.ExitCode != 4 {
		t.Errorf("quick child %+v", quick)
	}
	if exit := findEvent(childEvents(d.Events, quick.PID), KindExit, ""); exit == nil || *exit.ExitCode != 4 {
		t.Errorf("quick child's exit event %+v", exit)
	}
	if len(childEvents(d.Events, killed.PID)) != 0 {
		t.Errorf("events of a child that was never followed: %+v", childEvents(d.Events, killed.PID))
	}
	rep, _ := e.Evidence(d.Session.ID)
	if rep.Evidence == nil || !strings.Contains(rep.Evidence.ChildCaveat, "1 of 2 child processes were not followed (pid "+strconv.Itoa(killed.PID)+";") {
		t.Errorf("evidence %+v", rep.Evidence)
	}
}

// TestFollowCap: with a cap of 2, four children alive at once: two are
// followed, two are listed with the reason and run free (they do not hang),
// and the evidence's child caveat names them.
func TestFollowCap(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"cap.js": `const { fork } = require("child_process");
if (process.argv[2] === "child") {
  process.send("ready");
  process.on("message", () => process.exit(0));
  return;
}
const kids = [];
let ready = 0, left = 4;
for (let i = 0; i < 4; i++) {
  const k = fork(__filename, ["child"]);
  k.on("message", () => { if (++ready === 4) for (const c of kids) c.send("go"); });
  k.on("exit", () => { if (--left === 0) throw new Error("all children done"); });
  kids.push(k);
}
`})
	e := newEngine(t, Options{Workspace: ws, MaxFollowed: 2})
	d := run(t, ctx, e, StartRequest{Target: "cap.js"})
	var followed, capped []Child
	for _, c := range d.Session.Children {
		proctest.AssertGone(t, c.PID)
		if c.ExitCode == nil || *c.ExitCode != 0 {
			t.Errorf("child %+v did not exit 0", c)
		}
		switch {
		case c.Followed:
			followed = append(followed, c)
		case strings.Contains(c.Note, "2 children were followed at once (the cap)"):
			capped = append(capped, c)
		default:
			t.Errorf("child %+v", c)
		}
	}
	if len(followed) != 2 || len(capped) != 2 {
		t.Fatalf("followed %+v, capped %+v", followed, capped)
	}
	for _, c := range capped {
		if n := len(childEvents(d.Events, c.PID)); n != 0 {
			t.Errorf("%d events of capped child %d", n, c.PID)
		}
	}
	rep, _ := e.Evidence(d.Session.ID)
	if rep.Evidence == nil || rep.Evidence.Failure.PID != 0 || !strings.Contains(rep.Evidence.ChildCaveat, "2 of 4 child processes were not followed") {
		t.Errorf("evidence %+v", rep.Evidence)
	}
}

// TestFollowForgedRegistration: registrations without the session's token
// are refused before anything is dialed, and a Node process that is not a
// child of the traced program (it has the address and the session id, not
// the token) runs free at once and adds nothing to the trace.
func TestFollowForgedRegistration(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"idle.js": `console.log("up"); setInterval(() => {}, 1000);`})
	e := newEngine(t, Options{Workspace: ws})
	s, err := e.Start(ctx, StartRequest{Target: "idle.js"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.Start(ctx, StartRequest{Target: "idle.js"})
	if err != nil {
		t.Fatal(err)
	}
	otherLive, _ := e.lookup(other.ID)
	post := func(token, body string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+e.followAddr+"/follow", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	body := `{"session":"` + s.ID + `","pid":4242,"ppid":1,"url":"ws://127.0.0.1:1/x","argv":["node","evil.js"]}`
	for name, tc := range map[string]struct {
		token, body string
	}{
		"no token":                {"", body},
		"wrong token":             {strings.Repeat("ab", 32), body},
		"another session's token": {otherLive.followToken, body},
		"unknown session":         {otherLive.followToken, strings.Replace(body, s.ID, "tr-0000", 1)},
	} {
		if got := post(tc.token, tc.body); got != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, got)
		}
	}
	// A real node process, not the program's child, trying with a guess.
	preload := e.preload
	start := time.Now()
	cmd := exec.CommandContext(ctx, e.nodePath, "--require", preload, "-e", `console.log("unrelated ran")`)
	cmd.Env = append(os.Environ(), followEnv+"="+e.followAddr, followTokenEnv+"="+strings.Repeat("cd", 32), SessionEnv+"="+s.ID,
		"NODE_OPTIONS=--inspect-publish-uid=http") // as a child of the program gets it
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "unrelated ran" {
		t.Errorf("unrelated process: %v, output %q", err, out)
	}
	t.Logf("the refused process ran to its end in %v", time.Since(start).Round(time.Millisecond))
	if _, err := e.Stop(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	d, _ := e.Get(s.ID)
	if len(d.Session.Children) != 0 {
		t.Errorf("a forged registration was listed: %+v", d.Session.Children)
	}
	for _, ev := range d.Events {
		if ev.PID != 0 {
			t.Errorf("an event from another process: %+v", ev)
		}
	}
}

// TestFollowWaitBounded: a child whose registration is never answered (the
// listener accepts and says nothing) waits at most the follow wait, then
// runs free: it never hangs waiting for a debugger. (Unbounded, it fails
// after the 30 s bound below.)
func TestFollowWaitBounded(t *testing.T) {
	ctx := testCtx(t)
	proctest.Node(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c // held open, never answered
		}
	}()
	preload, err := writePreload()
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(preload)
	runCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(runCtx, "node", "--require", preload, "-e", `console.log("ran free")`)
	cmd.Env = append(os.Environ(), followEnv+"="+ln.Addr().String(), followTokenEnv+"="+strings.Repeat("ef", 32),
		followWaitEnv+"=2000", SessionEnv+"=tr-test", "NODE_OPTIONS=--inspect-publish-uid=http")
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil || strings.TrimSpace(string(out)) != "ran free" {
		t.Fatalf("child: %v after %v, output %q (a child must never hang on the engine)", err, took, out)
	}
	// The wait (2 s) leaves the registration thread ample time to connect
	// even on a loaded machine; the accept itself may still be in flight.
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the child never tried to register")
	}
	t.Logf("with a 2 s follow wait and a silent engine the child ran to its end in %v", took.Round(time.Millisecond))
}
