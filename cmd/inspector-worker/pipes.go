package main

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// catchSIGPIPE keeps the worker alive when the reader of its stdout or
// stderr is gone (`run … 2>&1 | head -1`). Without it Go's runtime dies of
// SIGPIPE on the first write to a broken fd 1 or 2, before any cleanup.
// With a handler the write returns EPIPE instead (os/signal: "SIGPIPE").
// signal.Ignore would do the same here but is inherited across exec, so
// node and every process it starts would run with SIGPIPE ignored; a
// caught signal is reset to the default in a child. The channel is never
// read: delivery to a full channel is dropped, which is all we want.
func catchSIGPIPE() { signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE) }

// outputGuard is the worker's stderr as `run` writes it (its own lines
// and the host's copied stderr). When a write fails with EPIPE the reader
// is gone, the user's pipeline ended: Gone is closed, the run stops the
// host as plain node would stop (node exits 1 on EPIPE on its own stderr),
// and further writes are dropped.
type outputGuard struct {
	w    io.Writer
	once sync.Once
	gone chan struct{}
}

func newOutputGuard(w io.Writer) *outputGuard {
	return &outputGuard{w: w, gone: make(chan struct{})}
}

func (g *outputGuard) Write(p []byte) (int, error) {
	select {
	case <-g.gone:
		return len(p), nil // nobody reads any more; the host is being stopped
	default:
	}
	n, err := g.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		g.once.Do(func() { close(g.gone) })
		return len(p), nil
	}
	return n, err
}

// outputGoneCode is the exit code of a run stopped because the reader of
// the worker's stderr went away: node's own code for an EPIPE on stderr.
const outputGoneCode = 1

// outputGone is closed when w is an outputGuard whose reader is gone; nil
// (never ready) for any other writer, e.g. a test's buffer.
func outputGone(w io.Writer) <-chan struct{} {
	if g, ok := w.(*outputGuard); ok {
		return g.gone
	}
	return nil
}
