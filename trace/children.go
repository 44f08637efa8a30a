package trace

import (
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
)

const (
	// maxChildren bounds the children listed per session; later ones are
	// counted (Session.ChildrenDropped).
	maxChildren = 100
	// maxChildArgs bounds one child's listed argv (the preload sends 64).
	maxChildArgs = 64
	// maxChildReportBytes bounds one report from the preload.
	maxChildReportBytes = 64 << 10
)

// childReport is one message of the preload (preload.cjs): a child's
// spawn or exit, a followed child's confirmation or own exit code, or a
// failed node:test test.
type childReport struct {
	Event  string   `json:"event"` // "spawn", "exit", "followed", "self-exit", "stderr" or "test-fail"
	PID    int      `json:"pid"`
	File   string   `json:"file"`
	Args   []string `json:"args"`
	Code   *int     `json:"code"`
	Signal *string  `json:"signal"`
	Stderr string   `json:"stderr"` // "stderr": the program's fd 2 as device:inode
	// test-fail only: the test's name and where Node says it is (1-based),
	// and the error that failed it.
	Name      string `json:"name"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	Message   string `json:"message"`
	ErrorName string `json:"errorName"`
	Stack     string `json:"stack"`
}

// childReport recognises the preload's console.debug(childMark, json):
// the call must come from the preload's own script (its top frame), so the
// program's console calls, whatever they print, are never taken for one.
func (m *mapper) parseChildReport(p consoleAPICalled) *childReport {
	if m.preload == "" || p.Type != "debug" || len(p.Args) != 2 || p.StackTrace == nil ||
		len(p.StackTrace.CallFrames) == 0 || mapFile(p.StackTrace.CallFrames[0].URL) != m.preload {
		return nil
	}
	var mark, body string
	if json.Unmarshal(p.Args[0].Value, &mark, cdpDecode) != nil || mark != childMark ||
		len(p.Args[1].Value) > maxChildReportBytes || json.Unmarshal(p.Args[1].Value, &body, cdpDecode) != nil {
		return nil
	}
	var rep childReport
	if json.Unmarshal([]byte(body), &rep, cdpDecode) != nil {
		return nil
	}
	switch {
	case rep.Event == "test-fail" && rep.File != "":
	case (rep.Event == "spawn" || rep.Event == "exit" || rep.Event == "followed" || rep.Event == "self-exit" || rep.Event == "stderr") && rep.PID > 0:
	default:
		return nil
	}
	return &rep
}

// testEvent turns a failed-test report into an event. The position is
// Node's own for the test (1-based; mapped through the file's source map
// like any other position); the stack is the failing error's, user frames
// only.
func (m *mapper) testEvent(rep *childReport) *Event {
	name, _ := capText(rep.Name, maxValueChars)
	msg := rep.Message
	if rep.ErrorName != "" && rep.ErrorName != "undefined" {
		msg = rep.ErrorName + ": " + msg
	}
	msg, _ = capText(firstLine(msg), maxValueChars)
	ev := &Event{Kind: KindTest, Subtype: "fail", ErrorMessage: msg, Stack: userStack(rep.Stack)}
	ev.Detail, ev.Truncated = capText("test \""+name+"\" failed: "+msg, maxValueChars)
	url := rep.File
	if !strings.HasPrefix(url, "file://") {
		url = "file://" + url
	}
	ev.Location, ev.Generated, ev.SourceMapNote = m.position("", url, rep.Line-1, rep.Column-1)
	return ev
}

// childReport applies a report of the preload in process from: 0 is the
// traced program, else a followed child's pid. A spawn or exit is about a
// child of that process; "followed" and "self-exit" are about the child
// itself, and count only from its own session.
func (s *session) childReport(from int, rep childReport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	parent := from
	if parent == 0 {
		parent = s.pid
	}
	switch rep.Event {
	case "stderr":
		if from == 0 {
			s.stderrID, _ = capText(rep.Stderr, 64)
		}
	case "spawn":
		if c := s.childLocked(rep.PID, parent, nil); c != nil {
			c.Command = childCommand(rep.Args, rep.File) // as the parent passed it
		}
	case "exit":
		c := s.findChildLocked(rep.PID)
		if c == nil {
			return
		}
		// The parent's waitpid is the authority (signals included): it
		// overrides what the child said about itself.
		c.ExitCode, c.Signal = nil, ""
		if rep.Code != nil {
			code := *rep.Code
			c.ExitCode = &code
		}
		if rep.Signal != nil {
			c.Signal, _ = capText(*rep.Signal, 32)
		}
		if !s.followingLocked(c.PID) { // else when its session ends, after its last events
			s.childExitEventLocked(c)
		}
	case "followed":
		if c := s.findChildLocked(from); c != nil && from != 0 && rep.PID == from {
			c.Followed = true
			if !c.Partial {
				c.Note = ""
			}
		}
	case "self-exit":
		c := s.findChildLocked(from)
		if c == nil || from == 0 || rep.PID != from {
			return
		}
		if c.ExitCode == nil && c.Signal == "" && rep.Code != nil {
			code := *rep.Code
			c.ExitCode = &code
		}
		// The event waits for the end of the child's session: Node emits
		// 'exit' before it reports an uncaught exception.
	}
}

// childExitEventLocked adds a followed child's exit to the timeline, once,
// when it is known.
func (s *session) childExitEventLocked(c *Child) {
	if !c.Followed || c.exitEvent || (c.ExitCode == nil && c.Signal == "") {
		return
	}
	c.exitEvent = true
	ev := Event{Kind: KindExit, PID: c.PID, ExitCode: clonePtr(c.ExitCode), Detail: "child " + childLine(*c)}
	s.addLocked(ev)
}

// childLocked returns pid's entry, creating it (parent, argv) when it is
// new; nil past the cap of listed children (counted in childrenDropped).
func (s *session) childLocked(pid, ppid int, argv []string) *Child {
	if c := s.findChildLocked(pid); c != nil {
		if c.PPID == 0 {
			c.PPID = ppid
		}
		return c
	}
	if len(s.children) >= maxChildren {
		s.childrenDropped++
		return nil
	}
	note := "not followed: it never registered (not a Node process, started without the trace's environment, or ended before it could)"
	if s.followAddr == "" {
		note = "not followed: " + s.eng.followOff()
	}
	s.children = append(s.children, Child{PID: pid, PPID: ppid, Command: childCommand(argv, ""), Note: note})
	return &s.children[len(s.children)-1]
}

func (s *session) findChildLocked(pid int) *Child {
	for i := range s.children {
		if s.children[i].PID == pid {
			return &s.children[i]
		}
	}
	return nil
}

func childCommand(args []string, file string) []string {
	cmd := make([]string, 0, min(len(args), maxChildArgs))
	for _, a := range args[:min(len(args), maxChildArgs)] {
		a, _ = capText(a, maxValueChars)
		cmd = append(cmd, a)
	}
	if len(cmd) == 0 && file != "" {
		f, _ := capText(file, maxValueChars)
		cmd = append(cmd, f)
	}
	return cmd
}

// followingLocked: a session to child pid is still reading.
func (s *session) followingLocked(pid int) bool {
	return slices.ContainsFunc(s.followers, func(f *follower) bool { return f.pid == pid })
}

// releaseFollow frees the slot of a child the engine could not attach to.
func (s *session) releaseFollow(pid int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.following--
	if c := s.findChildLocked(pid); c != nil && !c.Followed {
		c.Note, _ = capText("not followed: the engine could not attach to its inspector ("+err.Error()+"); it ran free", maxValueChars)
	}
}

// followerEnded frees a follower's slot and says why a child that never
// confirmed it was followed is not.
func (s *session) followerEnded(f *follower) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.following--
	if i := slices.Index(s.followers, f); i >= 0 {
		s.followers = slices.Delete(s.followers, i, i+1)
	}
	c := s.findChildLocked(f.pid)
	if c == nil {
		return
	}
	if c.Followed {
		s.childExitEventLocked(c)
		return
	}
	if f.attachErr != nil {
		c.Note, _ = capText("not followed: the engine could not attach to its inspector ("+f.attachErr.Error()+"); it ran free", maxValueChars)
		return
	}
	c.Note = "not followed: it stopped waiting for the engine before the attach completed and ran free"
}

// markPartial: the child ran some of its own scripts before the attach
// (another preload ran first), so its earliest events are missing.
func (s *session) markPartial(pid, scripts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.findChildLocked(pid); c != nil {
		c.Partial = true
		c.Note = "partly followed: " + strconv.Itoa(scripts) + " of its scripts had loaded before the engine attached (a preload that ran first); their earlier events are missing"
	}
}

// childLine renders a child for the text report.
func childLine(c Child) string {
	state := "exit not seen"
	switch {
	case c.Signal != "":
		state = "killed by " + c.Signal
	case c.ExitCode != nil:
		state = "exited with code " + strconv.Itoa(*c.ExitCode)
	}
	return "pid " + strconv.Itoa(c.PID) + ", " + state
}
