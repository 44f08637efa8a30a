package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/inspector-worker/inspector-worker/internal/proctest"
	"github.com/inspector-worker/inspector-worker/trace"
)

const traceThrowJS = `console.log("loading", {retries: 3});
console.error("config missing, using defaults");
function connect(port) {
  throw new Error("cannot connect to port " + port);
}
connect(0);
`

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tracePID is the target's pid from the CLI's progress line.
func tracePID(t *testing.T, w *workerProc) int {
	t.Helper()
	pid, err := strconv.Atoi(w.waitFor(w.stderr, `runs as pid (\d+)`))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// `trace` prints a readable timeline and evidence and exits with the
// script's code.
func TestTraceCLIText(t *testing.T) {
	dir := writeFiles(t, map[string]string{"app.js": traceThrowJS})
	w := startCmd(t, dir, "trace", "--", "app.js")
	pid := tracePID(t, w)
	if got := w.wait(); got != 1 {
		t.Fatalf("exit code %d, want 1", got)
	}
	proctest.AssertGone(t, pid)
	out := w.stdout.String()
	flat := strings.Join(strings.Fields(out), " ") // column widths are presentation
	for _, want := range []string{
		"Timeline (captured events in order",
		"console.error   app.js:2:9",
		"exception       app.js:4:9",
		"Evidence (correlation, not causation)",
		"failure          exception at app.js:4:9: Error: cannot connect to port 0",
		"immediate cause  #", "console.error at app.js:2:9: config missing, using defaults",
		"confidence       High: ",
		"caveat           Correlation, not causation",
	} {
		if !strings.Contains(flat, strings.Join(strings.Fields(want), " ")) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "node:internal/") || !strings.Contains(out, "node:internal stack lines folded") {
		t.Errorf("node:internal frames are not folded:\n%s", out)
	}
	if strings.Contains(out, "Debugger listening") {
		t.Errorf("Node's inspector banner in the report:\n%s", out)
	}
}

func TestTraceCLIJSON(t *testing.T) {
	dir := writeFiles(t, map[string]string{"app.js": traceThrowJS})
	w := startCmd(t, dir, "trace", "--json", "--out", "report.json", "--", "app.js", "--flag", "x")
	pid := tracePID(t, w)
	if got := w.wait(); got != 1 {
		t.Fatalf("exit code %d, want 1", got)
	}
	proctest.AssertGone(t, pid)
	if w.stdout.String() != "" {
		t.Errorf("stdout with --out: %q", w.stdout)
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep trace.Report
	if err := json.Unmarshal(data, &rep, json.RejectUnknownMembers(true)); err != nil {
		t.Fatalf("report: %v\n%s", err, data)
	}
	s := rep.Session
	if rep.SchemaVersion != trace.SchemaVersion || s.PID != pid || strings.Join(s.Args, " ") != "--flag x" || s.Cwd != dir {
		t.Errorf("session = %+v", s)
	}
	if rep.Evidence == nil || rep.Evidence.Confidence != trace.ConfidenceHigh || rep.Evidence.Failure.Location.Line != 4 ||
		rep.Caveat == "" || !strings.HasPrefix(rep.Node.Version, "v") {
		t.Errorf("evidence = %+v, node %+v", rep.Evidence, rep.Node)
	}
}

func TestTraceCLIExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         int
		evidence     bool
	}{
		{"clean", `console.log("ok");`, 0, false},
		{"three", `process.stderr.write("fatal: no config\n"); process.exitCode = 3;`, 3, true},
		{"signal", `process.kill(process.pid, "SIGTERM");`, 128 + 15, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"app.js": tc.script})
			w := startCmd(t, dir, "trace", "--json", "--", "app.js")
			pid := tracePID(t, w)
			if got := w.wait(); got != tc.want {
				t.Fatalf("exit code %d, want %d\n%s", got, tc.want, w.stderr)
			}
			proctest.AssertGone(t, pid)
			var rep trace.Report
			if err := json.Unmarshal([]byte(w.stdout.String()), &rep); err != nil {
				t.Fatal(err)
			}
			if (rep.Evidence != nil) != tc.evidence {
				t.Errorf("evidence = %+v, want present %v", rep.Evidence, tc.evidence)
			}
		})
	}
}

// TestTraceCLINodeTest: `trace -- node --test file` ends, and its failure
// is the failed test, located in the test file, with Node's TAP output
// unchanged.
func TestTraceCLINodeTest(t *testing.T) {
	dir := writeFiles(t, map[string]string{"math.test.js": `const test = require("node:test");
const assert = require("node:assert");
test("adds", () => { assert.equal(1 + 1, 2); });
test("subtracts", () => { assert.equal(3 - 1, 1); });
`})
	w := startCmd(t, dir, "trace", "--json", "--", "node", "--test", "math.test.js")
	pid := tracePID(t, w)
	if got := w.wait(); got != 1 {
		t.Fatalf("exit code %d, want 1\n%s", got, w.stderr)
	}
	proctest.AssertGone(t, pid)
	var rep trace.Report
	if err := json.Unmarshal([]byte(w.stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	ev := rep.Evidence
	if ev == nil || ev.Failure.Kind != trace.FailureTest || ev.Failure.Location == nil ||
		ev.Failure.Location.File != filepath.Join(dir, "math.test.js") || ev.Failure.Location.Line != 4 {
		t.Fatalf("evidence = %+v", ev)
	}
	if !strings.Contains(ev.Failure.Message, "2 == 1") || !strings.Contains(ev.Failure.Stack, "math.test.js:4:") {
		t.Errorf("failure = %+v", ev.Failure)
	}
	var tap []string
	for _, e := range rep.Events {
		if e.Kind == trace.KindOutput && e.Subtype == "stdout" {
			tap = append(tap, e.Detail)
		}
	}
	if out := strings.Join(tap, "\n"); !strings.Contains(out, "not ok 2 - subtracts") || !strings.Contains(out, "# fail 1") {
		t.Errorf("TAP output:\n%s", out)
	}
}

func TestTraceCLIRefuses(t *testing.T) {
	outside := writeFiles(t, map[string]string{"evil.js": `0;`})
	dir := writeFiles(t, map[string]string{"app.js": `0;`})
	for _, tc := range []struct {
		args []string
		want int
		msg  string
	}{
		{[]string{"trace"}, 2, "give the script"},
		{[]string{"trace", "--nope"}, 2, "flag provided but not defined"},
		{[]string{"trace", "--", filepath.Join(outside, "evil.js")}, 1, "outside the workspace"},
		{[]string{"trace", "--workspace", filepath.Join(dir, "missing"), "--", "app.js"}, 1, "workspace root unavailable"},
		{[]string{"trace", "--node", filepath.Join(dir, "no-node"), "--", "app.js"}, 1, "node executable unavailable"},
		{[]string{"trace", "--", "node", "--inspect", "app.js"}, 2, `node flag "--inspect" is not supported`},
		{[]string{"trace", "--", "node", "--test", "app.js", "b.js"}, 2, "exactly one test file"},
		{[]string{"trace", "--", "node"}, 2, "give the script"},
		// A program that is not node and exits 0: the start failed, so 1.
		{[]string{"trace", "--node", "true", "--", "app.js"}, 1, "exited before"},
	} {
		w := startCmd(t, dir, tc.args...)
		if got := w.wait(); got != tc.want || !strings.Contains(w.stderr.String(), tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, got, w.stderr, tc.want, tc.msg)
		}
	}
}

// Ctrl-C stops the target; the report says "stopped" and the exit code is
// the target's (killed).
func TestTraceCLIStopsOnSignal(t *testing.T) {
	dir := writeFiles(t, map[string]string{"wait.js": `console.log("up"); setInterval(() => {}, 1000);`})
	w := startCmd(t, dir, "trace", "--", "wait.js")
	pid := tracePID(t, w)
	if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if got := w.wait(); got != 128+int(syscall.SIGKILL) {
		t.Errorf("exit code %d, want %d", got, 128+int(syscall.SIGKILL))
	}
	proctest.AssertGone(t, pid)
	if out := w.stdout.String(); !strings.Contains(out, "result   stopped (stopped by the user)") || !strings.Contains(out, "Evidence: no failure") {
		t.Errorf("report:\n%s", out)
	}
}

// The trace API is served on the worker's endpoint behind its Host check,
// and the worker's exit kills the traces it started.
func TestRunServesTraceAPI(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"host.js": `console.log("pid " + process.pid); setInterval(() => {}, 1000);`,
		"wait.js": `setInterval(() => {}, 1000);`,
	})
	// The host runs a node that is not the one on PATH; traces must use it too.
	nodePath := proctest.Node(t)
	otherNode := filepath.Join(dir, "other-node")
	if err := os.Symlink(nodePath, otherNode); err != nil {
		t.Fatal(err)
	}
	w := startCmd(t, dir, "run", "--port", "0", "--", otherNode, "host.js")
	w.nodePID()
	base := "http://" + w.addr()
	if code, body := httpDo(t, "GET", base+"/api/trace/status", "", ""); code != 200 || !strings.Contains(body, `"replay":"timeline"`) ||
		!strings.Contains(body, `"path":"`+otherNode+`"`) {
		t.Fatalf("status (want node %s): %d %s", otherNode, code, body)
	}
	if code, _ := httpDo(t, "GET", base+"/api/trace/status", "evil.example", ""); code != http.StatusBadRequest {
		t.Errorf("foreign Host header: %d, want 400", code)
	}
	code, body := httpDo(t, "POST", base+"/api/trace/start", "", `{"target":"wait.js"}`)
	var rep trace.SessionReport
	if err := json.Unmarshal([]byte(body), &rep); code != 200 || err != nil || rep.Session.PID == 0 {
		t.Fatalf("start: %d %s", code, body)
	}
	if code, _ := httpDo(t, "GET", base+"/api/trace?id=tr-unknown", "", ""); code != http.StatusNotFound {
		t.Errorf("unknown id: %d", code)
	}
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	w.wait()
	proctest.AssertGone(t, rep.Session.PID)
}

func httpDo(t *testing.T, method, url, host, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}
