package trace

import (
	"bytes"
	"strings"
	"sync"
	"unicode/utf8"
)

// nodeBanners are the lines Node's inspector itself prints on stderr. They
// are not the target's output: they never become output events and never
// reach the stderr tail that explains a failed exit.
var nodeBanners = []string{
	"Debugger listening on ws://",
	"For help, see: https://nodejs.org/en/docs/inspector",
	"Debugger attached.",
	"Waiting for the debugger to disconnect...",
	"Debugger ending on ws://",
}

func isBanner(line string) bool {
	for _, b := range nodeBanners {
		if strings.HasPrefix(line, b) {
			return true
		}
	}
	return false
}

// outputWriter splits one of the target's streams into output events. Its
// Write is called by one hostnode copier goroutine; flush by finish after
// that goroutine ended. The mutex only makes that hand-over explicit.
//
// A line is kept up to maxLineChars characters; the rest of it is read and
// discarded (the event is marked truncated), so one endless line can neither
// grow memory nor stall the pipe.
type outputWriter struct {
	s      *session // Static after construction.
	stream string   // Static after construction.

	mu   sync.Mutex
	line []byte // Guarded by mu: the current line, at most maxLineBytes.
	cut  bool   // Guarded by mu: the current line lost bytes.
}

const maxLineBytes = maxLineChars * utf8.UTFMax

// Write never fails: a slow or broken consumer must not block the child.
func (w *outputWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.appendLocked(p)
			break
		}
		w.appendLocked(p[:i])
		w.emitLocked()
		p = p[i+1:]
	}
	return n, nil
}

func (w *outputWriter) appendLocked(p []byte) {
	room := maxLineBytes - len(w.line)
	if len(p) > room {
		p, w.cut = p[:room], true
	}
	w.line = append(w.line, p...)
}

func (w *outputWriter) emitLocked() {
	line := string(bytes.TrimSuffix(w.line, []byte{'\r'}))
	cut := w.cut
	w.line, w.cut = w.line[:0], false
	if w.stream == "stderr" && isBanner(line) {
		return
	}
	w.s.addOutput(w.stream, line, cut)
}

// flush emits an unterminated last line.
func (w *outputWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.line) > 0 || w.cut {
		w.emitLocked()
	}
}
