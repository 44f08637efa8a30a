package trace

import (
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
// spawn or exit, or a failed node:test test.
type childReport struct {
	Event  string   `json:"event"` // "spawn", "exit" or "test-fail"
	PID    int      `json:"pid"`
	File   string   `json:"file"`
	Args   []string `json:"args"`
	Code   *int     `json:"code"`
	Signal *string  `json:"signal"`
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
func (m *mapper) childReport(p consoleAPICalled) *childReport {
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
	case (rep.Event == "spawn" || rep.Event == "exit") && rep.PID > 0:
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

// addChild records a child's start or exit.
func (s *session) addChild(rep childReport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rep.Event == "exit" {
		for i := range s.children {
			c := &s.children[i]
			if c.PID != rep.PID || c.ExitCode != nil || c.Signal != "" {
				continue
			}
			if rep.Code != nil {
				code := *rep.Code
				c.ExitCode = &code
			}
			if rep.Signal != nil {
				c.Signal, _ = capText(*rep.Signal, 32)
			}
			return
		}
		return
	}
	if len(s.children) >= maxChildren {
		s.childrenDropped++
		return
	}
	cmd := make([]string, 0, min(len(rep.Args), maxChildArgs))
	for _, a := range rep.Args[:min(len(rep.Args), maxChildArgs)] {
		a, _ = capText(a, maxValueChars)
		cmd = append(cmd, a)
	}
	if len(cmd) == 0 {
		f, _ := capText(rep.File, maxValueChars)
		cmd = append(cmd, f)
	}
	s.children = append(s.children, Child{PID: rep.PID, Command: cmd})
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
