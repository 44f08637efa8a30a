package trace

import (
	"os"
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

// TestSyntaxErrorLocated: a parse error is located at its file, 1-based
// line and column, with the offending line's text, in CommonJS (where V8
// names only Node's loader) and in an ES module.
func TestSyntaxErrorLocated(t *testing.T) {
	const src = "const a = 1;\nconsole.log(a);\nlet b = = 2;\n"
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"bad.js": src, "bad.mjs": src})
	e := newEngine(t, Options{Workspace: ws})
	for _, tc := range []struct {
		file   string
		column int // 0: V8 gives ES modules no usable column (docs/trace.md)
	}{{"bad.js", 9}, {"bad.mjs", 0}} {
		d := run(t, ctx, e, StartRequest{Target: tc.file})
		rep, err := e.Evidence(d.Session.ID)
		if err != nil || rep.Evidence == nil {
			t.Fatalf("%s: evidence %+v, %v", tc.file, rep, err)
		}
		f := rep.Evidence.Failure
		want := Location{File: filepath.Join(ws, tc.file), Line: 3, Column: tc.column}
		if f.Kind != FailureException || f.Location == nil || *f.Location != want || !f.SourceResolved {
			t.Errorf("%s: failure %+v at %+v, want %+v", tc.file, f, f.Location, want)
		}
		if f.SourceLine != "let b = = 2;" || f.Message != "SyntaxError: Unexpected token '='" {
			t.Errorf("%s: source line %q, message %q", tc.file, f.SourceLine, f.Message)
		}
	}
}

// TestExitMessageFromConsoleError: `console.error(err); process.exit(1)`
// is explained by the error, not by the last stderr line; the stderr tail
// keeps the user frame and no node:internal one.
func TestExitMessageFromConsoleError(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"exit.js": "console.log('connecting');\n" +
		"console.error(new Error('db down'));\nconsole.error({ code: 'E_DB', retry: null });\nprocess.exit(1);\n"})
	e := newEngine(t, Options{Workspace: ws})
	d := run(t, ctx, e, StartRequest{Target: "exit.js"})
	rep, err := e.Evidence(d.Session.ID)
	if err != nil || rep.Evidence == nil {
		t.Fatalf("evidence %+v, %v", rep, err)
	}
	f := rep.Evidence.Failure
	if f.Kind != FailureExit || !strings.Contains(f.Message, "db down") && !strings.Contains(f.Message, "E_DB") || f.MessageSource != MessageFromConsole {
		t.Errorf("failure = %+v", f)
	}
	last := findLastEvent(d.Events, KindConsole, "error")
	if f.MessageSeq != last.Seq || last.Values[0].Text != "{code: \"E_DB\", retry: null}" {
		t.Errorf("message from #%d, want #%d; last console.error values %+v", f.MessageSeq, last.Seq, last.Values)
	}
	if strings.Contains(d.StderrTail, "node:internal") || !strings.Contains(d.StderrTail, "exit.js:2:15") {
		t.Errorf("stderr tail:\n%s", d.StderrTail)
	}
}

// TestExitMessageDbDown is the acceptance case as the issue states it.
func TestExitMessageDbDown(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"exit.js": "console.error(new Error('db down')); process.exit(1)\n"})
	e := newEngine(t, Options{Workspace: ws})
	d := run(t, ctx, e, StartRequest{Target: "exit.js"})
	rep, _ := e.Evidence(d.Session.ID)
	if rep.Evidence == nil || rep.Evidence.Failure.Message != "Error: db down" {
		t.Fatalf("evidence = %+v", rep.Evidence)
	}
}

func findLastEvent(events []Event, kind, subtype string) *Event {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Kind == kind && (subtype == "" || events[i].Subtype == subtype) {
			return &events[i]
		}
	}
	return &Event{}
}

// A webpack-style bundle: dist/wp.js, compiled from src/same.ts, whose
// lines are the bundle's plus three (the map says so).
const (
	wpBundle = `"use strict";
function check(x) {
  console.log("checking", x);
  if (x > 1) {
    throw new Error("too big: " + x);
  }
}
check(2);
//# sourceMappingURL=wp.js.map
`
	wpSource = "// same.ts\n// three lines longer\n// than the bundle\n\"use strict\";\nfunction check(x: number) {\n  console.log(\"checking\", x);\n  if (x > 1) {\n    throw new Error(\"too big: \" + x);\n  }\n}\ncheck(2);\n"
	// One segment per generated line: line 1 → source line 4, then +1.
	wpMappings = "AAGA;AACA;AACA;AACA;AACA;AACA;AACA;AACA"
)

// TestBundleConfidence: with a map the engine cannot use (webpack://
// sources, an index map, a map outside the workspace) the failure stays at
// the compiled position and confidence is medium with the reason; with a
// usable map it is high at the original .ts position.
func TestBundleConfidence(t *testing.T) {
	ctx := testCtx(t)
	outside := t.TempDir()
	outsideMap := filepath.Join(outside, "wp.js.map")
	mustWrite(t, outsideMap, `{"version":3,"sources":["../src/same.ts"],"mappings":"`+wpMappings+`"}`)
	cases := []struct {
		name, mapJSON, bundle, wantFile, wantNote string
		wantLine                                  int
		want                                      string
	}{
		{"usable map", `{"version":3,"sources":["../src/same.ts"],"mappings":"` + wpMappings + `"}`, wpBundle,
			"src/same.ts", "", 8, ConfidenceHigh},
		{"webpack sources", `{"version":3,"sources":["webpack://app/src/same.ts"],"mappings":"` + wpMappings + `"}`, wpBundle,
			"dist/wp.js", "webpack://app/src/same.ts", 5, ConfidenceMedium},
		{"index map", `{"version":3,"sections":[{"offset":{"line":0,"column":0},"map":{"version":3,"sources":["../src/same.ts"],"mappings":"` + wpMappings + `"}}]}`, wpBundle,
			"dist/wp.js", "index maps", 5, ConfidenceMedium},
		{"map outside the workspace", "", strings.Replace(wpBundle, "wp.js.map", "file://"+outsideMap, 1),
			"dist/wp.js", "outside the workspace", 5, ConfidenceMedium},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"dist/wp.js": tc.bundle, "src/same.ts": wpSource}
			if tc.mapJSON != "" {
				files["dist/wp.js.map"] = tc.mapJSON
			}
			ws := workspace(t, files)
			e := newEngine(t, Options{Workspace: ws})
			d := run(t, ctx, e, StartRequest{Target: "dist/wp.js"})
			rep, err := e.Evidence(d.Session.ID)
			if err != nil || rep.Evidence == nil {
				t.Fatalf("evidence %+v, %v", rep, err)
			}
			ev := rep.Evidence
			f := ev.Failure
			if f.Location == nil || f.Location.File != filepath.Join(ws, tc.wantFile) || f.Location.Line != tc.wantLine {
				t.Errorf("failure at %+v, want %s:%d", f.Location, tc.wantFile, tc.wantLine)
			}
			if ev.Confidence != tc.want || !strings.Contains(ev.ConfidenceReason, tc.wantNote) || !strings.Contains(f.SourceMapNote, tc.wantNote) {
				t.Errorf("confidence %s (%s), note %q; want %s mentioning %q", ev.Confidence, ev.ConfidenceReason, f.SourceMapNote, tc.want, tc.wantNote)
			}
			if tc.want == ConfidenceHigh && (ev.ImmediateCause == nil || ev.ImmediateCause.Location.File != filepath.Join(ws, "src/same.ts")) {
				t.Errorf("immediate cause = %+v, want the console.log in src/same.ts", ev.ImmediateCause)
			}
		})
	}
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
