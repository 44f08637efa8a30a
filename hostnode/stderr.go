package hostnode

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

const (
	// maxScanLine bounds how much of one stderr line is kept for classification.
	// Node's own lines are short; a longer line (an application dumping JSON) is
	// still copied through whole, only its excess is not examined.
	maxScanLine = 64 << 10
	// stderrTailMax is how much recent stderr StderrTail keeps for error messages
	// and traces: enough for a stack trace, small enough to print.
	stderrTailMax = 4000
)

// Lines Node prints on stderr that this package reacts to (Node 20).
const (
	listeningPrefix   = "Debugger listening on "
	waitingDisconnect = "Waiting for the debugger to disconnect..."
)

type lineKind int

const (
	lineOther             lineKind = iota
	lineURL                        // "Debugger listening on ws://…": the inspector URL
	lineFailure                    // Node could not start (its inspector)
	lineWaitingDisconnect          // the script ended; a session still holds the process
)

// classifyLine recognises one stderr line (without its line ending). prog is
// the argv[0] node was given: Node prefixes its option errors with it
// ("/usr/bin/node: bad option: --x"). For lineURL it also returns the URL.
func classifyLine(line, prog string) (lineKind, string) {
	if rest, ok := strings.CutPrefix(line, listeningPrefix); ok {
		url, _, _ := strings.Cut(rest, " ")
		if _, _, discover, err := ParseInspectorAddr(url); err == nil && !discover {
			return lineURL, url
		}
		// A listening line we cannot use (not ws://, not loopback) means the
		// inspector is somewhere we refuse to talk to: a failure, quoted.
		return lineFailure, ""
	}
	if strings.HasPrefix(line, waitingDisconnect) {
		return lineWaitingDisconnect, ""
	}
	if isFailureLine(line, prog) {
		return lineFailure, ""
	}
	return lineOther, ""
}

func isFailureLine(line, prog string) bool {
	lower := strings.ToLower(line)
	switch {
	case strings.Contains(lower, "inspector") && strings.Contains(lower, "failed"):
		return true // "Starting inspector on 127.0.0.1:0 failed: address already in use"
	case strings.Contains(line, ": bad option: "):
		return true
	case strings.HasPrefix(line, "node: "), prog != "" && strings.HasPrefix(line, prog+": "):
		return true // Node's CLI errors: "node: --inspect-port= requires an argument"
	}
	return false
}

// stderrScanner is the child's stderr: exec.Cmd copies the pipe into Write
// from one goroutine. Every byte is forwarded to out as it arrives (no line
// buffering on the copy path), and complete lines are classified on the side.
type stderrScanner struct {
	out  io.Writer // Static after construction.
	prog string    // Static after construction.

	ready    chan struct{} // closed once url is set
	failed   chan struct{} // closed once failLine is set (only before ready)
	waiting  chan struct{} // closed at the first "Waiting for the debugger to disconnect..."
	url      string        // written once before close(ready)
	failLine string        // written once before close(failed)

	// Owned by the Write goroutine (then by finish, after it ended).
	line                     []byte
	sawURL, sawFail, sawWait bool

	// Lock order: see docs/locks.md.
	mu   sync.Mutex
	tail []byte // Guarded by mu; up to 2*stderrTailMax, trimmed on read.
}

func newStderrScanner(out io.Writer, prog string) *stderrScanner {
	if out == nil {
		out = io.Discard
	}
	return &stderrScanner{
		out: out, prog: prog,
		ready: make(chan struct{}), failed: make(chan struct{}), waiting: make(chan struct{}),
	}
}

// Write never fails: a broken destination must not stop the draining of the
// child's stderr, or the child would block on a full pipe.
func (s *stderrScanner) Write(p []byte) (int, error) {
	_, _ = s.out.Write(p)
	s.appendTail(p)
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.addPartial(p)
			break
		}
		s.addPartial(p[:i])
		s.endLine()
		p = p[i+1:]
	}
	return n, nil
}

func (s *stderrScanner) addPartial(p []byte) {
	if room := maxScanLine - len(s.line); len(p) > room {
		p = p[:room]
	}
	s.line = append(s.line, p...)
}

func (s *stderrScanner) endLine() {
	line := string(bytes.TrimSuffix(s.line, []byte{'\r'}))
	s.line = s.line[:0]
	kind, url := classifyLine(line, s.prog)
	switch {
	case kind == lineURL && !s.sawURL && !s.sawFail:
		// Only the first URL counts: Node prints the banner again after a
		// session disconnects, and the application may echo one.
		s.sawURL = true
		s.url = url
		close(s.ready)
	case kind == lineFailure && !s.sawURL && !s.sawFail:
		s.sawFail = true
		s.failLine = line
		close(s.failed)
	case kind == lineWaitingDisconnect && !s.sawWait:
		s.sawWait = true
		close(s.waiting)
	}
}

// finish classifies an unterminated last line. Call it only after the
// writer goroutine has finished (exec.Cmd.Wait returned).
func (s *stderrScanner) finish() {
	if len(s.line) > 0 {
		s.endLine()
	}
}

func (s *stderrScanner) appendTail(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(p) >= stderrTailMax {
		s.tail = append(s.tail[:0], p[len(p)-stderrTailMax:]...)
		return
	}
	s.tail = append(s.tail, p...)
	if len(s.tail) > 2*stderrTailMax {
		s.tail = append(s.tail[:0], s.tail[len(s.tail)-stderrTailMax:]...)
	}
}

// Tail returns the last <= stderrTailMax bytes, starting at a rune boundary.
func (s *stderrScanner) Tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return tailString(s.tail)
}

// tailString is the last <= stderrTailMax bytes of t, starting at a rune.
func tailString(t []byte) string {
	if len(t) > stderrTailMax {
		t = t[len(t)-stderrTailMax:]
	}
	out := string(t)
	for i := 0; i < len(out) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(out[i]) {
			return out[i:]
		}
	}
	return out
}
