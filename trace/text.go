package trace

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// textDetailChars bounds one timeline row's detail; --json has it all.
const textDetailChars = 100

// WriteText renders a report for a person: a header, the timeline and the
// evidence chain. Paths inside root are shown relative to it. Everything
// the target produced is stripped of control characters first, so a
// traced program cannot move the cursor or recolour the user's terminal.
func WriteText(w io.Writer, rep Report, root string) error {
	bw := bufio.NewWriter(w)
	t := textWriter{w: bw, root: root}
	t.header(rep)
	t.timeline(rep)
	t.evidence(rep)
	return bw.Flush()
}

type textWriter struct {
	w    *bufio.Writer
	root string
}

func (t textWriter) printf(format string, args ...any) { fmt.Fprintf(t.w, format, args...) }

func (t textWriter) header(rep Report) {
	s := rep.Session
	t.printf("trace %s\n", s.ID)
	t.printf("  target   %s\n", t.rel(s.Target))
	if len(s.Args) > 0 {
		t.printf("  args     %s\n", clean(strings.Join(s.Args, " ")))
	}
	t.printf("  cwd      %s\n", s.Cwd)
	t.printf("  node     %s %s\n", rep.Node.Path, rep.Node.Version)
	t.printf("  result   %s\n", resultLine(s))
	events := fmt.Sprintf("%d stored", s.Events)
	if s.DroppedEvents > 0 {
		events += fmt.Sprintf(", %d older ones dropped by the %d-event cap", s.DroppedEvents, s.Events)
	}
	t.printf("  events   %s\n", events)
	if len(s.Children) > 0 {
		followed := 0
		for _, c := range s.Children {
			if c.Followed {
				followed++
			}
		}
		t.printf("  children %d started, %d followed (their events carry their pid; see docs/trace.md)\n", len(s.Children)+s.ChildrenDropped, followed)
		for _, c := range s.Children {
			cmd, _ := capText(clean(strings.Join(withoutEngineFlags(c.Command), " ")), textDetailChars)
			t.printf("           %s: %s\n", childLine(c), cmd)
			if c.Note != "" {
				t.printf("             %s\n", clean(c.Note))
			}
		}
		if s.ChildrenDropped > 0 {
			t.printf("           … %d more not listed (cap %d)\n", s.ChildrenDropped, maxChildren)
		}
	}
	t.printf("\n")
}

func resultLine(s Session) string {
	var out string
	switch {
	case s.Status == StatusFailed:
		out = "failed to start: " + firstLine(s.Error)
	case s.Status == StatusStopped:
		out = "stopped (" + s.StopReason + ")"
	case s.ExitCode != nil:
		out = "exited with code " + strconv.Itoa(*s.ExitCode)
	default:
		out = s.Status
	}
	if s.EndedAt != nil {
		out += fmt.Sprintf(" after %d ms", s.EndedAt.Sub(s.StartedAt).Milliseconds())
	}
	return out
}

func (t textWriter) timeline(rep Report) {
	t.printf("Timeline (captured events in order; stepping through them is the only replay)\n")
	t.printf("  %5s %7s  %-16s %-22s %s\n", "#", "+ms", "kind", "where", "detail")
	hidden := 0
	for i, ev := range rep.Events {
		// Node prints an uncaught exception's stack on stderr, node:internal
		// frames included. The exception event already has the user frames,
		// so here those lines fold into one row; --json keeps them verbatim.
		if ev.Kind == KindOutput && isInternalStackLine(ev.Detail) {
			hidden++
			next := i + 1
			if next < len(rep.Events) && rep.Events[next].Kind == KindOutput && isInternalStackLine(rep.Events[next].Detail) {
				continue
			}
			t.printf("  %5s %7s  %-16s %-22s %s\n", "", "", ev.Subtype, "-", fmt.Sprintf("… %d node:internal stack lines folded", hidden))
			hidden = 0
			continue
		}
		ms := ev.Time.Sub(rep.Session.StartedAt).Milliseconds()
		detail, _ := capText(pidPrefix(ev.PID)+clean(ev.Detail), textDetailChars)
		t.printf("  %5d %7d  %-16s %-22s %s\n", ev.Seq, ms, kindLabel(ev), t.where(ev.Location), detail)
	}
	t.printf("\n")
}

// withoutEngineFlags drops, for display, the flags the engine itself put
// into a child's argv (inherited through process.execArgv).
func withoutEngineFlags(argv []string) []string {
	out := make([]string, 0, len(argv))
	for i := 0; i < len(argv); i++ {
		switch {
		case argv[i] == "--enable-source-maps":
		case argv[i] == "--require" && i+1 < len(argv) && strings.HasPrefix(filepath.Base(argv[i+1]), "inspector-worker-trace-"):
			i++
		default:
			out = append(out, argv[i])
		}
	}
	return out
}

// isInternalStackLine matches "    at f (node:internal/…)" and
// "    at node:internal/…".
func isInternalStackLine(line string) bool {
	l := strings.TrimSpace(line)
	return strings.HasPrefix(l, "at ") && (strings.Contains(l, "(node:") || strings.HasPrefix(l, "at node:"))
}

func (t textWriter) evidence(rep Report) {
	ev := rep.Evidence
	if ev == nil {
		t.printf("Evidence: no failure (no uncaught exception, no nonzero exit).\n")
		for _, c := range rep.Session.Children {
			if c.Signal != "" || c.ExitCode != nil && *c.ExitCode != 0 {
				followed := "followed: its events carry its pid"
				if !c.Followed {
					followed = "not followed"
				}
				t.printf("  but              child %s (%s)\n", childLine(c), followed)
			}
		}
		t.printf("  caveat           %s\n", rep.Caveat)
		return
	}
	f := ev.Failure
	t.printf("Evidence (correlation, not causation)\n")
	failure := f.Kind
	if f.PID != 0 {
		failure += " in child pid " + strconv.Itoa(f.PID)
	}
	if f.Location != nil {
		failure += " at " + t.where(f.Location)
		if f.Generated != nil {
			failure += " (compiled: " + t.where(f.Generated) + ")"
		}
	}
	msg := clean(f.Message)
	switch f.MessageSource {
	case MessageFromConsole:
		msg += fmt.Sprintf("   (from the last error-level console call, #%d)", f.MessageSeq)
	case MessageFromChildConsole:
		msg += fmt.Sprintf("   (from a failed child's last error-level console call, #%d)", f.MessageSeq)
	case MessageFromStderr:
		msg += "   (from the last informative stderr line)"
	}
	t.printf("  failure          %s: %s\n", failure, msg)
	if f.SourceLine != "" {
		t.printf("  source line      %s\n", clean(f.SourceLine))
	}
	if f.Kind == FailureExit && f.StderrTail != "" {
		t.printf("  stderr tail      %s\n", indentLines(clean2(lastLines(f.StderrTail, 5)), 19))
	}
	if ev.ImmediateCause != nil {
		t.printf("  immediate cause  %s   (closest prior event)\n", t.eventLine(*ev.ImmediateCause))
	} else {
		t.printf("  immediate cause  none captured before the failure\n")
	}
	// Newest first: the chain reads backwards from the failure.
	for i := range ev.PreviousStateTransitions {
		label := ""
		if i == 0 {
			label = "before that"
		}
		tr := ev.PreviousStateTransitions[len(ev.PreviousStateTransitions)-1-i]
		t.printf("  %-16s %s\n", label, t.eventLine(tr))
	}
	if ev.OriginatingValue != nil {
		t.printf("  thrown value     %s (%s)\n", clean(firstLine(ev.OriginatingValue.Text)), ev.OriginatingValue.Type)
	}
	in := ev.RelevantInput
	t.printf("  input            %s (cwd %s)\n", clean(strings.Join(append([]string{t.rel(in.Target)}, in.Args...), " ")), in.Cwd)
	t.printf("  confidence       %s\n", strings.ToUpper(ev.Confidence[:1])+ev.ConfidenceReason[1:])
	t.printf("  caveat           %s\n", ev.Caveat)
	if ev.ChildCaveat != "" {
		t.printf("  children         %s\n", ev.ChildCaveat)
	}
}

// pidPrefix marks a child's event in the text report.
func pidPrefix(pid int) string {
	if pid == 0 {
		return ""
	}
	return "[pid " + strconv.Itoa(pid) + "] "
}

func (t textWriter) eventLine(ev Event) string {
	s := "#" + strconv.FormatInt(ev.Seq, 10) + " " + kindLabel(ev)
	if ev.PID != 0 {
		s += " (pid " + strconv.Itoa(ev.PID) + ")"
	}
	if ev.Location != nil {
		s += " at " + t.where(ev.Location)
	}
	d, _ := capText(clean(ev.Detail), textDetailChars)
	return s + ": " + d
}

// where renders a location relative to the workspace.
func (t textWriter) where(l *Location) string {
	if l == nil {
		return "-"
	}
	s := t.rel(l.File)
	if l.Line > 0 {
		s += ":" + strconv.Itoa(l.Line)
		if l.Column > 0 {
			s += ":" + strconv.Itoa(l.Column)
		}
	}
	return s
}

func (t textWriter) rel(p string) string {
	if t.root != "" && within(t.root, p) {
		if r, err := filepath.Rel(t.root, p); err == nil {
			return r
		}
	}
	return p
}

// clean replaces control characters (terminal escapes included) and
// newlines with visible stand-ins.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return '⏎'
		case r == '\t':
			return ' '
		case unicode.IsControl(r):
			return '?'
		}
		return r
	}, s)
}

// clean2 is clean that keeps newlines.
func clean2(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = clean(l)
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func indentLines(s string, n int) string {
	return strings.ReplaceAll(s, "\n", "\n"+strings.Repeat(" ", n))
}
