package trace

import (
	"strings"
	"testing"
)

func intp(n int) *int { return &n }

func loc(file string, line int) *Location { return &Location{File: file, Line: line, Column: 1} }

// evidenceCase builds a session snapshot from events (Seq filled in).
func snapshot(status string, exit *int, events ...Event) SessionDetail {
	d := SessionDetail{Session: Session{ID: "tr-x", Status: status, ExitCode: exit,
		Target: "/ws/app.js", Args: []string{"a"}, Cwd: "/ws", NodeArgs: []string{"/usr/bin/node", "/ws/app.js", "a"}}}
	for i, ev := range events {
		ev.Seq = int64(i + 1)
		if ev.Kind == KindException {
			d.Session.ExceptionCount++
		}
		d.Events = append(d.Events, ev)
	}
	return d
}

func TestEvidenceRules(t *testing.T) {
	ctx := Event{Kind: KindContext, Subtype: "created", Detail: "context 1 created"}
	script := Event{Kind: KindScript, Location: &Location{File: "/ws/app.js"}}
	logApp := Event{Kind: KindConsole, Subtype: "log", Location: loc("/ws/app.js", 2)}
	logLib := Event{Kind: KindConsole, Subtype: "log", Location: loc("/ws/lib.js", 7)}
	out := Event{Kind: KindOutput, Subtype: "stdout", Detail: "x"}
	exc := func(l *Location) Event {
		return Event{Kind: KindException, ErrorMessage: "Error: boom", Location: l, Values: []Value{{Type: "object", Text: "Error: boom"}}}
	}
	exit := Event{Kind: KindExit}
	logBundle := Event{Kind: KindConsole, Subtype: "log", Location: loc("/ws/dist/app.js", 5)}
	for _, tc := range []struct {
		name       string
		d          SessionDetail
		kind       string // "" = no evidence
		confidence string
		causeSeq   int64
	}{
		{"same file", snapshot(StatusExited, intp(1), ctx, script, logApp, out, exc(loc("/ws/app.js", 4)), exit), FailureException, ConfidenceHigh, 3},
		{"cause elsewhere", snapshot(StatusExited, intp(1), ctx, script, logLib, exc(loc("/ws/app.js", 4)), exit), FailureException, ConfidenceMedium, 3},
		{"no cause", snapshot(StatusExited, intp(1), ctx, exc(loc("/ws/app.js", 1)), exit), FailureException, ConfidenceMedium, 0},
		{"script is the cause", snapshot(StatusExited, intp(1), ctx, script, exc(loc("/ws/app.js", 1)), exit), FailureException, ConfidenceMedium, 2},
		{"exception is the cause", snapshot(StatusExited, intp(1), exc(loc("/ws/app.js", 1)), exc(loc("/ws/app.js", 4))), FailureException, ConfidenceHigh, 1},
		{"unresolved", snapshot(StatusExited, intp(1), ctx, logApp, exc(nil), exit), FailureException, ConfidenceLow, 2},
		{"file without line", snapshot(StatusExited, intp(1), logApp, exc(&Location{File: "/ws/app.js"})), FailureException, ConfidenceLow, 1},
		{"last exception wins", snapshot(StatusExited, intp(1), logApp, exc(loc("/ws/lib.js", 9)), logLib, exc(loc("/ws/app.js", 4))), FailureException, ConfidenceMedium, 3},
		{"exit without exception", snapshot(StatusExited, intp(3), ctx, script, logApp, out, exit), FailureExit, ConfidenceLow, 3},
		{"clean exit", snapshot(StatusExited, intp(0), ctx, script, logApp, exit), "", "", 0},
		{"stopped", snapshot(StatusStopped, intp(137), ctx, script, exit), "", "", 0},
		{"running", snapshot(StatusRunning, nil, ctx, script, logApp), "", "", 0},
		{"running with exception", snapshot(StatusRunning, nil, logApp, exc(loc("/ws/app.js", 4))), FailureException, ConfidenceHigh, 1},
		{"start failed", snapshot(StatusFailed, nil), FailureStart, ConfidenceLow, 0},
		// Bundles and source maps: "the same file" counts only in original
		// coordinates.
		{"bundle, usable map", snapshot(StatusExited, intp(1), mapped(logApp, "/ws/dist/app.js"), mapped(exc(loc("/ws/app.js", 4)), "/ws/dist/app.js")), FailureException, ConfidenceHigh, 1},
		{"bundle, unusable map", snapshot(StatusExited, intp(1), unmapped(logBundle, "declared source map not used: x"), unmapped(exc(loc("/ws/dist/app.js", 5)), "declared source map not used: x")), FailureException, ConfidenceMedium, 1},
		{"bundle, index map", snapshot(StatusExited, intp(1), unmapped(logBundle, "declared source map not used: index maps (sections) are not supported"), unmapped(exc(loc("/ws/dist/app.js", 5)), "declared source map not used: index maps (sections) are not supported")), FailureException, ConfidenceMedium, 1},
		{"bundle, webpack:// source", snapshot(StatusExited, intp(1), unmapped(logBundle, `the source map names "webpack://app/src/same.ts", which is not a file the engine can resolve`), unmapped(exc(loc("/ws/dist/app.js", 5)), `the source map names "webpack://app/src/same.ts", which is not a file the engine can resolve`)), FailureException, ConfidenceMedium, 1},
		{"bundle, map outside the workspace", snapshot(StatusExited, intp(1), logBundle, unmapped(exc(loc("/ws/dist/app.js", 5)), "declared source map not used: source map /etc/x.map is outside the workspace and is not read")), FailureException, ConfidenceMedium, 1},
		{"failure mapped, cause unmapped in the same compiled file", snapshot(StatusExited, intp(1), unmapped(Event{Kind: KindConsole, Subtype: "log", Location: loc("/ws/app.js", 2)}, "the source map leaves this compiled position unmapped"), mapped(exc(loc("/ws/app.js", 4)), "/ws/dist/app.js")), FailureException, ConfidenceMedium, 1},
		{"failed test", snapshot(StatusExited, intp(1), script, logApp, Event{Kind: KindTest, Subtype: "fail", ErrorMessage: "AssertionError: x", Location: loc("/ws/app.js", 4)}, exit), FailureTest, ConfidenceHigh, 2},
		{"an exception beats a failed test", snapshot(StatusExited, intp(1), exc(loc("/ws/lib.js", 1)), Event{Kind: KindTest, Subtype: "fail", Location: loc("/ws/app.js", 4)}), FailureException, ConfidenceMedium, 0},
		{"bundle without a map", snapshot(StatusExited, intp(1), logBundle, exc(loc("/ws/dist/app.js", 5))), FailureException, ConfidenceHigh, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := buildEvidence(tc.d)
			if tc.kind == "" {
				if ev != nil {
					t.Fatalf("evidence = %+v, want none", ev)
				}
				return
			}
			if ev == nil {
				t.Fatal("no evidence")
			}
			if ev.Failure.Kind != tc.kind || ev.Confidence != tc.confidence {
				t.Errorf("failure %s, confidence %s (%s); want %s, %s", ev.Failure.Kind, ev.Confidence, ev.ConfidenceReason, tc.kind, tc.confidence)
			}
			if n := ev.Failure.SourceMapNote; n != "" && !strings.Contains(ev.ConfidenceReason, n) {
				t.Errorf("reason %q does not say why the map was not used (%q)", ev.ConfidenceReason, n)
			}
			if !strings.HasPrefix(ev.ConfidenceReason, ev.Confidence+":") || ev.Caveat != Caveat {
				t.Errorf("reason %q, caveat %q", ev.ConfidenceReason, ev.Caveat)
			}
			var got int64
			if ev.ImmediateCause != nil {
				got = ev.ImmediateCause.Seq
				if ev.ImmediateCause.Kind == KindOutput || ev.ImmediateCause.Kind == KindContext {
					t.Errorf("immediate cause is a %s event", ev.ImmediateCause.Kind)
				}
			}
			if got != tc.causeSeq {
				t.Errorf("immediate cause #%d, want #%d", got, tc.causeSeq)
			}
			for i, tr := range ev.PreviousStateTransitions {
				if tr.Seq >= got || (i > 0 && tr.Seq <= ev.PreviousStateTransitions[i-1].Seq) || tr.Kind == KindOutput {
					t.Errorf("transition %d = #%d %s: not before the cause, not in order, or output", i, tr.Seq, tr.Kind)
				}
			}
			if ev.RelevantInput.Cwd != "/ws" || len(ev.RelevantInput.Args) != 1 {
				t.Errorf("input = %+v", ev.RelevantInput)
			}
		})
	}
}

// mapped marks ev as placed through a source map from the compiled file gen.
func mapped(ev Event, gen string) Event {
	ev.Generated = &Location{File: gen, Line: 1, Column: 100}
	return ev
}

// unmapped marks ev as placed at its compiled position although its script
// declares a source map.
func unmapped(ev Event, note string) Event {
	ev.SourceMapNote = note
	return ev
}

func TestEvidenceTransitionsCapped(t *testing.T) {
	var events []Event
	for range 30 {
		events = append(events, Event{Kind: KindConsole, Subtype: "log", Location: loc("/ws/app.js", 1)})
	}
	events = append(events, Event{Kind: KindException, Location: loc("/ws/app.js", 2)})
	ev := buildEvidence(snapshot(StatusExited, intp(1), events...))
	if len(ev.PreviousStateTransitions) != maxTransitions || ev.ImmediateCause.Seq != 30 ||
		ev.PreviousStateTransitions[0].Seq != 20 || ev.PreviousStateTransitions[9].Seq != 29 {
		t.Errorf("cause #%d, %d transitions from #%d", ev.ImmediateCause.Seq, len(ev.PreviousStateTransitions), ev.PreviousStateTransitions[0].Seq)
	}
}

func TestEvidenceExitMessage(t *testing.T) {
	d := snapshot(StatusExited, intp(2))
	d.StderrTail = "warming up\nfatal: no config\n\n"
	if ev := buildEvidence(d); ev.Failure.Message != "fatal: no config" || ev.Failure.StderrTail != d.StderrTail || ev.Failure.MessageSource != MessageFromStderr {
		t.Errorf("failure = %+v", ev.Failure)
	}
	// console.error({...}); process.exit(1): the tail ends in "}" and a
	// footer; the informative line is above them.
	d.StderrTail = "{\n  code: 'E_DB',\n  host: 'db'\n}\n  ^^^\n    at main (/ws/app.js:3:9)\n\nNode.js v20.20.2\n"
	if ev := buildEvidence(d); ev.Failure.Message != "host: 'db'" {
		t.Errorf("failure = %+v", ev.Failure)
	}
	d.StderrTail = "}\n\n"
	if ev := buildEvidence(d); !strings.Contains(ev.Failure.Message, "without an error-level console call") || ev.Failure.MessageSource != MessageFromNone {
		t.Errorf("failure = %+v", ev.Failure)
	}
	// An error-level console call beats the stderr tail; a later
	// console.log does not.
	d = snapshot(StatusExited, intp(1),
		Event{Kind: KindConsole, Subtype: "error", Detail: "Error: db down\n    at main (/ws/app.js:2:9)"},
		Event{Kind: KindConsole, Subtype: "log", Detail: "bye"},
		Event{Kind: KindExit, ExitCode: intp(1)})
	d.StderrTail = "Error: db down\n    at main (/ws/app.js:2:9)\n}\n"
	if ev := buildEvidence(d); ev.Failure.Message != "Error: db down" || ev.Failure.MessageSource != MessageFromConsole || ev.Failure.MessageSeq != 1 {
		t.Errorf("failure = %+v", ev.Failure)
	}
	d = snapshot(StatusExited, intp(1))
	d.Session.ExceptionCount = 1 // its event was dropped by the cap
	if ev := buildEvidence(d); ev.Failure.Kind != FailureException || ev.Confidence != ConfidenceLow {
		t.Errorf("dropped exception: %+v", ev)
	}
}

// TestEvidenceChildRules: the rules for followed children (docs/trace.md,
// "Children in the evidence"), on snapshots.
func TestEvidenceChildRules(t *testing.T) {
	const kid = 77
	child := func(ev Event) Event { ev.PID = kid; return ev }
	logApp := Event{Kind: KindConsole, Subtype: "log", Location: loc("/ws/app.js", 2)}
	excApp := Event{Kind: KindException, ErrorMessage: "Error: app", Location: loc("/ws/app.js", 3)}
	excKid := Event{Kind: KindException, ErrorMessage: "Error: kid", Location: loc("/ws/kid.js", 9)}
	logKid := Event{Kind: KindConsole, Subtype: "error", Detail: "kid: bad", Location: loc("/ws/kid.js", 8)}
	kids := func(d SessionDetail, c Child) SessionDetail {
		d.Session.Children = []Child{c}
		return d
	}
	followed := Child{PID: kid, Followed: true, ExitCode: intp(1)}
	for _, tc := range []struct {
		name                string
		d                   SessionDetail
		pid                 int
		conf, reason, cause string
	}{
		{"a child's exception, its own console.error before it, the program's log read in between",
			kids(snapshot(StatusExited, intp(2), child(logKid), logApp, child(excKid)), followed),
			kid, ConfidenceHigh, "child pid 77", "kid: bad"},
		{"a child's exception, no event of that child before it: the program's events are not its cause",
			kids(snapshot(StatusExited, intp(2), logApp, child(excKid)), followed),
			kid, ConfidenceMedium, "no event was captured before it", ""},
		{"a partly followed child caps at medium",
			kids(snapshot(StatusExited, intp(2), child(logKid), child(excKid)), Child{PID: kid, Followed: true, Partial: true, ExitCode: intp(1), Note: "partly followed: …"}),
			kid, ConfidenceMedium, "followed only partly", "kid: bad"},
		{"the program's own exception wins over a child's, and a child's earlier exception caps it at medium",
			kids(snapshot(StatusExited, intp(1), child(excKid), logApp, excApp), followed),
			0, ConfidenceMedium, "followed child pid 77 had an uncaught exception before it (#1 Error: kid)", ""},
		{"a child's exception after the program's failure does not lower it",
			kids(snapshot(StatusExited, intp(1), logApp, excApp, child(excKid)), followed),
			0, ConfidenceHigh, "high:", ""},
	} {
		ev := buildEvidence(tc.d)
		if ev == nil || ev.Failure.PID != tc.pid || ev.Confidence != tc.conf || !strings.Contains(ev.ConfidenceReason, tc.reason) {
			t.Errorf("%s: evidence %+v", tc.name, ev)
			continue
		}
		if ev.Failure.PID != 0 && (ev.Failure.ExitCode == nil || *ev.Failure.ExitCode != 1) {
			t.Errorf("%s: the failure's exit code is not the child's: %+v", tc.name, ev.Failure)
		}
		got := ""
		if ev.ImmediateCause != nil {
			got = ev.ImmediateCause.Detail
		}
		if got != tc.cause {
			t.Errorf("%s: immediate cause %q, want %q", tc.name, got, tc.cause)
		}
	}
	// Exit without any exception: the program's error-level console call,
	// else a failed child's, else stderr.
	d := kids(snapshot(StatusExited, intp(1), child(logKid), Event{Kind: KindExit, ExitCode: intp(1)}), followed)
	if ev := buildEvidence(d); ev.Failure.Message != "kid: bad" || ev.Failure.MessageSource != MessageFromChildConsole || ev.Failure.MessageSeq != 1 {
		t.Errorf("exit message from a failed child: %+v", ev.Failure)
	}
	d.Session.Children[0].ExitCode = intp(0) // the child did not fail: its console.error explains nothing
	d.StderrTail = "fatal: app\n"
	if ev := buildEvidence(d); ev.Failure.MessageSource != MessageFromStderr {
		t.Errorf("exit message: %+v", ev.Failure)
	}
	if got := childCaveat([]Child{followed, {PID: 5}, {PID: 6, Followed: true, Partial: true}}); got !=
		"1 of 3 child processes were not followed (pid 5; each child's note says why): their exceptions, console calls and exits are not in this evidence; 1 child processes were followed only partly (pid 6): their earliest events are missing" {
		t.Errorf("child caveat %q", got)
	}
}
