package trace

import (
	"bytes"
	"sync"
	"unicode/utf8"

	"github.com/inspector-worker/inspector-worker/hostnode"
)

// Node's inspector banner lines on the target's stderr are recognised by
// position, never by text alone, by hostnode.Banner (the one place that
// knows them): the start banner, the "Debugger attached." of the engine's
// session, and the end banner, held back until the stream shows whether it
// was the end. Everything else passes through unchanged, whatever it looks
// like.

type heldLine struct {
	text string
	cut  bool
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

	mu     sync.Mutex                // Lock order: see docs/locks.md.
	line   []byte                    // Guarded by mu: the current line, at most maxLineBytes.
	cut    bool                      // Guarded by mu: the current line lost bytes.
	banner hostnode.Banner[heldLine] // Node's banner lines by position (stderr only); holds possible end banners.
	// attached counts the "Debugger attached." lines still to come from
	// followed children that share this stream (follow.go); each drops
	// the next such line. Guarded by mu.
	attached int
	// waiting counts the "Waiting for the debugger to disconnect..." lines
	// still to come from followed children sharing this stream that died
	// of an uncaught exception (Node prints it after reporting the
	// exception). Guarded by mu.
	waiting int
}

// expectWaiting announces a followed child's fatal exception: Node prints
// its "Waiting …" line next. Best effort: the line travels through the
// pipe, the exception through the child's socket, so the line can be read
// first; then it stays in the output, as before.
func (w *outputWriter) expectWaiting() {
	w.mu.Lock()
	w.waiting++
	w.mu.Unlock()
}

// expectAttached announces that the engine is attaching to a child whose
// stderr is this stream; undo withdraws it when the attach failed before
// Node could print its line.
func (w *outputWriter) expectAttached() (undo func()) {
	w.mu.Lock()
	w.attached++
	w.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			w.attached = max(0, w.attached-1)
			w.mu.Unlock()
		})
	}
}

const maxLineBytes = maxLineChars * utf8.UTFMax

// childAttachedLine is what Node prints on a process's stderr for each
// inspector session opened to it.
const childAttachedLine = "Debugger attached."

// childWaitingLine is what Node prints on a process's stderr when it ends
// (here: of an uncaught exception) with an inspector session attached.
const childWaitingLine = "Waiting for the debugger to disconnect..."

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
	if w.stream != "stderr" {
		w.s.addOutput(w.stream, line, cut)
		return
	}
	if w.attached > 0 && line == childAttachedLine {
		w.attached--
		return
	}
	for _, h := range w.banner.Line(line, heldLine{line, cut}) {
		if w.waiting > 0 && h.text == childWaitingLine {
			w.waiting--
			continue
		}
		w.s.addOutput(w.stream, h.text, h.cut)
	}
}

// flush emits an unterminated last line, then drops the held lines: the
// stream ended with them, so they were Node's end banner.
func (w *outputWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.line) > 0 || w.cut {
		w.emitLocked()
	}
	if w.stream == "stderr" {
		w.banner.End()
	}
}
