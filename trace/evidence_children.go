package trace

import (
	"fmt"
	"strconv"
	"strings"
)

// maxCaveatPIDs bounds the pids a childCaveat names; the rest are counted.
const maxCaveatPIDs = 10

// childConfidence applies the child rules of docs/trace.md on top of the
// rating confidence gave, and only ever lowers it:
//
//   - a failure in a followed child is rated by the same rules on that
//     child's own events (priorEvents); the reason names the child. It is
//     at most medium when the child was followed only partly: its earlier
//     events are missing.
//   - a failure of the program itself is at most medium when a followed
//     child had an uncaught exception before it: the root cause may be in
//     the child, and events of two processes are not ordered (each comes
//     over its own socket), so the chain cannot say.
func childConfidence(conf, reason string, f *Failure, d SessionDetail, cutoff int) (string, string) {
	where := locString(f.Location)
	if f.PID != 0 {
		reason += fmt.Sprintf(" (the failure is in followed child pid %d; the chain holds that child's own events only", f.PID)
		if code := d.Session.ExitCode; code != nil && *code != 0 {
			reason += fmt.Sprintf("; the program's exit code %d is not proven to come from it", *code)
		}
		reason += ")"
		if c := findChild(d.Session.Children, f.PID); c != nil && c.Partial && conf == ConfidenceHigh {
			return ConfidenceMedium, fmt.Sprintf("medium: the failure resolved to %s in child pid %d, but that child was followed only partly (%s)", where, f.PID, c.Note)
		}
		return conf, reason
	}
	if conf != ConfidenceHigh {
		return conf, reason
	}
	for _, ev := range d.Events[:cutoff] {
		if ev.Kind == KindException && ev.PID != 0 {
			return ConfidenceMedium, fmt.Sprintf("medium: the failure resolved to %s, but followed child pid %d had an uncaught exception before it (#%d %s), which may be the root cause; events of different processes are not ordered against each other",
				where, ev.PID, ev.Seq, firstLine(ev.ErrorMessage))
		}
	}
	return conf, reason
}

// childCaveat names the children whose events the evidence lacks: not
// followed, or followed only partly. "" when there are none.
func childCaveat(children []Child) string {
	var missing, partial []string
	for _, c := range children {
		switch {
		case !c.Followed:
			missing = append(missing, strconv.Itoa(c.PID))
		case c.Partial:
			partial = append(partial, strconv.Itoa(c.PID))
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d child processes were not followed (pid %s; each child's note says why): their exceptions, console calls and exits are not in this evidence",
			len(missing), len(children), pidList(missing)))
	}
	if len(partial) > 0 {
		parts = append(parts, fmt.Sprintf("%d child processes were followed only partly (pid %s): their earliest events are missing",
			len(partial), pidList(partial)))
	}
	return strings.Join(parts, "; ")
}

func pidList(pids []string) string {
	if len(pids) <= maxCaveatPIDs {
		return strings.Join(pids, ", ")
	}
	return strings.Join(pids[:maxCaveatPIDs], ", ") + fmt.Sprintf(" and %d more", len(pids)-maxCaveatPIDs)
}
