package trace

import (
	"strconv"

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

// childReport is one message of the preload (preload.cjs).
type childReport struct {
	Event  string   `json:"event"` // "spawn" or "exit"
	PID    int      `json:"pid"`
	File   string   `json:"file"`
	Args   []string `json:"args"`
	Code   *int     `json:"code"`
	Signal *string  `json:"signal"`
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
	if json.Unmarshal([]byte(body), &rep, cdpDecode) != nil || rep.PID <= 0 || (rep.Event != "spawn" && rep.Event != "exit") {
		return nil
	}
	return &rep
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
