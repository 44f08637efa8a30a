package trace

import (
	"bytes"
	"strings"
	"sync"
	"unicode/utf8"
)

// Node's inspector prints banner lines on the target's stderr. They are
// not the target's output, but the target can print the same text, so they
// are recognised by POSITION only, never by text alone:
//
//   - startBanners: the first lines of stderr, in this order. Node prints
//     them before any code of the target runs (with --inspect-brk the script
//     starts only after the attach, which prints "Debugger attached.").
//   - endBanners: the LAST lines of stderr, in this order (a prefix of them
//     is enough). Node prints them after the script ended: "Waiting …" once
//     the main context is gone, the rest when the engine disconnects. A line
//     that matches is held back until the next line shows it was not the
//     end (then it is the target's and is emitted) or the stream ends (then
//     it was Node's and is dropped).
//
// Everything else passes through unchanged, whatever it looks like.
var (
	startBanners = []func(string) bool{
		func(l string) bool { return strings.HasPrefix(l, "Debugger listening on ws://") },
		func(l string) bool { return l == inspectorHelp },
		func(l string) bool { return l == "Debugger attached." },
	}
	endBanners = []func(string) bool{
		func(l string) bool { return l == "Waiting for the debugger to disconnect..." },
		func(l string) bool { return strings.HasPrefix(l, "Debugger ending on ws://") },
		func(l string) bool { return l == inspectorHelp },
	}
)

const inspectorHelp = "For help, see: https://nodejs.org/en/docs/inspector"

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

	mu           sync.Mutex // Lock order: see docs/locks.md.
	line         []byte     // Guarded by mu: the current line, at most maxLineBytes.
	cut          bool       // Guarded by mu: the current line lost bytes.
	lines        int        // Guarded by mu: complete lines seen so far (stderr only).
	startDropped int        // Guarded by mu: leading lines dropped as Node's start banners.
	held         []heldLine // Guarded by mu: lines that may be Node's end banners (stderr only).
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
	if w.stream != "stderr" {
		w.s.addOutput(w.stream, line, cut)
		return
	}
	w.lines++
	if w.lines <= len(startBanners) && w.lines-1 == w.startDropped && startBanners[w.lines-1](line) {
		w.startDropped++
		return
	}
	if len(w.held) < len(endBanners) && endBanners[len(w.held)](line) {
		w.held = append(w.held, heldLine{line, cut})
		return
	}
	w.releaseHeldLocked()
	if endBanners[0](line) { // could start the end banners afresh
		w.held = append(w.held, heldLine{line, cut})
		return
	}
	w.s.addOutput(w.stream, line, cut)
}

// releaseHeldLocked emits held lines: something followed them, so they were
// the target's own.
func (w *outputWriter) releaseHeldLocked() {
	for _, h := range w.held {
		w.s.addOutput(w.stream, h.text, h.cut)
	}
	w.held = w.held[:0]
}

// flush emits an unterminated last line, then drops the held lines: the
// stream ended with them, so they were Node's end banners. A held run
// that does not begin with "Waiting …" never exists (see emitLocked).
func (w *outputWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.line) > 0 || w.cut {
		w.emitLocked()
	}
	w.held = w.held[:0]
}
