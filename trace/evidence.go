package trace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// maxTransitions bounds the previous state transitions of an evidence.
const maxTransitions = 10

// buildEvidence derives the failure chain from a snapshot (never from live
// state). It returns nil when there is no failure: a clean exit, a session
// still running without an exception, or one the user stopped.
//
// The failure is the LAST exception; without one, a nonzero exit (explained
// by the stderr tail) or a start that failed. The immediate cause is the
// closest console, script or exception event BEFORE the failure; the
// transitions are the up to ten inspector events (contexts included) before
// that. Output lines are never candidates: they
// travel through pipes whose order against the inspector socket is not
// defined (Node often writes a console line to stdout before the inspector
// reports the console call), and each console.* call is an event already.
func buildEvidence(d SessionDetail) *Evidence {
	f, cutoff, thrown := findFailure(d)
	if f == nil {
		return nil
	}
	cause, transitions := priorEvents(d.Events[:cutoff], f.PID)
	ev := &Evidence{
		Failure:                  *f,
		ImmediateCause:           cause,
		PreviousStateTransitions: transitions,
		OriginatingValue:         thrown,
		RelevantInput: Input{
			Target: d.Session.Target, Args: slices.Clone(d.Session.Args),
			Cwd: d.Session.Cwd, NodeArgs: slices.Clone(d.Session.NodeArgs),
		},
		Caveat: Caveat, ChildCaveat: childCaveat(d.Session.Children),
	}
	ev.Confidence, ev.ConfidenceReason = confidence(f, cause)
	ev.Confidence, ev.ConfidenceReason = childConfidence(ev.Confidence, ev.ConfidenceReason, f, d, cutoff)
	return ev
}

// findFailure returns the failure, the index of the first event that is not
// before it, and the thrown value.
func findFailure(d SessionDetail) (*Failure, int, *Value) {
	s := d.Session
	// The program's own last exception; else a followed child's (its root
	// cause is there: the program may only have exited nonzero after it).
	for _, fromChild := range []bool{false, true} {
		for i := len(d.Events) - 1; i >= 0; i-- {
			ev := d.Events[i]
			if ev.Kind != KindException || (ev.PID != 0) != fromChild {
				continue
			}
			f := &Failure{
				Kind: FailureException, PID: ev.PID, Message: ev.ErrorMessage, EventSeq: ev.Seq,
				Location: clonePtr(ev.Location), Generated: clonePtr(ev.Generated),
				SourceResolved: ev.Location != nil && ev.Location.Line > 0,
				ExitCode:       clonePtr(s.ExitCode), Stack: ev.Stack, SourceLine: ev.SourceLine, SourceMapNote: ev.SourceMapNote,
			}
			if ev.PID != 0 { // the child's own exit code, not the program's
				f.ExitCode = nil
				if c := findChild(s.Children, ev.PID); c != nil {
					f.ExitCode = clonePtr(c.ExitCode)
				}
			}
			if f.Message == "" {
				f.Message = ev.Detail
			}
			var thrown *Value
			if len(ev.Values) > 0 {
				thrown = clonePtr(&ev.Values[0])
			}
			return f, i, thrown
		}
	}
	// No uncaught exception: the last failed node:test test, if any.
	for i := len(d.Events) - 1; i >= 0; i-- {
		ev := d.Events[i]
		if ev.Kind != KindTest {
			continue
		}
		return &Failure{
			Kind: FailureTest, Message: ev.ErrorMessage, EventSeq: ev.Seq,
			Location: clonePtr(ev.Location), Generated: clonePtr(ev.Generated), SourceMapNote: ev.SourceMapNote,
			SourceResolved: ev.Location != nil && ev.Location.Line > 0, ExitCode: clonePtr(s.ExitCode), Stack: ev.Stack,
		}, i, nil
	}
	switch {
	case s.ExceptionCount > 0:
		return &Failure{Kind: FailureException, ExitCode: clonePtr(s.ExitCode),
			Message: "an uncaught exception was captured, but its event was dropped by the per-session cap"}, len(d.Events), nil
	case s.Status == StatusFailed:
		return &Failure{Kind: FailureStart, Message: s.Error, ExitCode: clonePtr(s.ExitCode), StderrTail: d.StderrTail}, len(d.Events), nil
	case s.Status == StatusStopped || s.ExitCode == nil || *s.ExitCode == 0:
		return nil, 0, nil
	}
	f := &Failure{Kind: FailureExit, ExitCode: clonePtr(s.ExitCode), StderrTail: d.StderrTail}
	exitMessage(f, d)
	cutoff := len(d.Events)
	for i := len(d.Events) - 1; i >= 0; i-- {
		if d.Events[i].Kind == KindExit && d.Events[i].PID == 0 {
			f.EventSeq, cutoff = d.Events[i].Seq, i
			break
		}
	}
	return f, cutoff, nil
}

func findChild(children []Child, pid int) *Child {
	for i := range children {
		if children[i].PID == pid {
			return &children[i]
		}
	}
	return nil
}

// Where an exit failure's message came from (Failure.MessageSource).
const (
	MessageFromConsole = "console" // the last console.error or console.assert call (MessageSeq)
	// MessageFromChildConsole: the program made no error-level console
	// call; the last one of a followed child that exited nonzero
	// (MessageSeq; that event carries the child's pid).
	MessageFromChildConsole = "child-console"
	MessageFromStderr       = "stderr"    // the last informative line of the stderr tail
	MessageFromNone         = "exit-code" // nothing better: the exit code alone
)

// exitMessage explains a nonzero exit with the most informative evidence
// there is: the last error-level console call (for the common
// `console.error(err); process.exit(1)` its first line is the error's own
// message, where the stderr tail ends in a frame or a "}"); else the last
// stderr line that says something; else the exit code.
func exitMessage(f *Failure, d SessionDetail) {
	failed := func(pid int) bool {
		c := findChild(d.Session.Children, pid)
		return c != nil && (c.Signal != "" || c.ExitCode != nil && *c.ExitCode != 0)
	}
	for _, source := range []string{MessageFromConsole, MessageFromChildConsole} {
		for i := len(d.Events) - 1; i >= 0; i-- {
			ev := d.Events[i]
			if ev.Kind != KindConsole || (ev.Subtype != "error" && ev.Subtype != "assert") {
				continue
			}
			if (source == MessageFromConsole) != (ev.PID == 0) || (ev.PID != 0 && !failed(ev.PID)) {
				continue
			}
			if msg := firstNonEmptyLine(ev.Detail); msg != "" {
				f.Message, f.MessageSource, f.MessageSeq = msg, source, ev.Seq
				return
			}
		}
	}
	if msg := lastInformativeLine(d.StderrTail); msg != "" {
		f.Message, f.MessageSource = msg, MessageFromStderr
		return
	}
	f.Message, f.MessageSource = "exited with code "+strconv.Itoa(*f.ExitCode)+" without an error-level console call and without an informative line on stderr", MessageFromNone
}

func firstNonEmptyLine(text string) string {
	for l := range strings.Lines(text) {
		if l = strings.TrimSpace(l); l != "" {
			l, _ = capText(l, maxValueChars)
			return l
		}
	}
	return ""
}

// lastInformativeLine is the last line of text that says something: not
// blank, not a stack frame ("at …"), not punctuation alone ("}", "^^^",
// "]"), not Node's "Node.js v20.1.0" footer.
func lastInformativeLine(text string) string {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "at ") || isNodeFooter(l) || !strings.ContainsFunc(l, isWordRune) {
			continue
		}
		l, _ = capText(l, maxValueChars)
		return l
	}
	return ""
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isNodeFooter matches the "Node.js v20.20.2" line Node prints after an
// uncaught error.
func isNodeFooter(l string) bool {
	v, ok := strings.CutPrefix(l, "Node.js v")
	return ok && v != "" && strings.Trim(v, "0123456789.") == ""
}

// priorEvents picks the immediate cause and the transitions before it from
// events, which all precede the failure, among the events of the failing
// process (pid; 0 = the program) only: each process's events come over its
// own inspector socket, so the order of two processes' events is when the
// engine read them, not when they happened.
func priorEvents(events []Event, pid int) (*Event, []Event) {
	var cause *Event
	transitions := []Event{}
	for i := len(events) - 1; i >= 0 && len(transitions) < maxTransitions; i-- {
		ev := events[i]
		if ev.Kind == KindOutput || ev.Kind == KindExit || ev.PID != pid {
			continue
		}
		if cause == nil {
			if ev.Kind == KindContext {
				continue // a context's birth or teardown is bookkeeping, not a cause
			}
			c := ev.clone()
			cause = &c
			continue
		}
		transitions = append(transitions, ev.clone())
	}
	slices.Reverse(transitions)
	return cause, transitions
}

// confidence applies the rule of docs/trace.md, and nothing else:
//
//	high   the failure resolved to an original source location (through
//	       its source map when the script declares one) AND the immediate
//	       cause is a console call or an exception in that same original
//	       file, itself placed in original coordinates;
//	medium the failure resolved, but one of the above does not hold: no
//	       cause, the cause is only a script being loaded, the cause is
//	       elsewhere, or a declared source map could not be used (for the
//	       failure, or for the cause);
//	low    the failure has no source location (every exit and start).
//
// A trace is read by people and agents that trust it: it must never rate
// its evidence higher than that. A one-file bundle whose map is unusable
// would otherwise be "the same file" for every event.
func confidence(f *Failure, cause *Event) (string, string) {
	if !f.SourceResolved {
		return ConfidenceLow, "low: the failure has no source location (" + f.Kind + "), so nothing can be placed in a file"
	}
	where := locString(f.Location)
	if f.Generated != nil {
		where += " (through a source map, compiled " + locString(f.Generated) + ")"
	}
	medium := func(why string) (string, string) {
		return ConfidenceMedium, "medium: the failure resolved to " + where + ", but " + why
	}
	switch {
	case f.SourceMapNote != "":
		return medium("that is the compiled position, not the original source: " + f.SourceMapNote)
	case cause == nil:
		return medium("no event was captured before it")
	case cause.Kind == KindScript:
		return medium(fmt.Sprintf("the closest prior event (#%d) is only a script being loaded, which places nothing", cause.Seq))
	case cause.Kind != KindConsole && cause.Kind != KindException:
		return medium(fmt.Sprintf("the closest prior event (#%d %s) is not a console call or an exception", cause.Seq, kindLabel(*cause)))
	case cause.Location == nil || cause.Location.File != f.Location.File:
		return medium(fmt.Sprintf("the closest prior event (#%d %s) is not in that file", cause.Seq, kindLabel(*cause)))
	case cause.SourceMapNote != "":
		return medium(fmt.Sprintf("the closest prior event (#%d %s) is placed only at its compiled position: %s", cause.Seq, kindLabel(*cause), cause.SourceMapNote))
	}
	return ConfidenceHigh, fmt.Sprintf("high: the failure resolved to %s and the closest prior event (#%d %s) is in the same file",
		where, cause.Seq, kindLabel(*cause))
}

func locString(l *Location) string {
	if l == nil {
		return "-"
	}
	s := l.File
	if l.Line > 0 {
		s += ":" + strconv.Itoa(l.Line)
		if l.Column > 0 {
			s += ":" + strconv.Itoa(l.Column)
		}
	}
	return s
}

// kindLabel is "console.log", "exception", "script", "stdout" …
func kindLabel(ev Event) string {
	switch ev.Kind {
	case KindConsole:
		return "console." + ev.Subtype
	case KindOutput:
		return ev.Subtype
	}
	return ev.Kind
}
