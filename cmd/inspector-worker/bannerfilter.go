package main

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// nodeBannerPrefixes are the lines Node's inspector prints about itself. They
// name Node's private inspector port, which a user must not connect to
// directly (the worker is the endpoint), so `run` does not pass them through.
var nodeBannerPrefixes = []string{
	"Debugger listening on ws://",
	"For help, see: https://nodejs.org/en/docs/inspector",
	"Debugger attached.",
	"Debugger ending on ws://",
	"Waiting for the debugger to disconnect...",
}

// bannerFilter passes the host's stderr through line by line, minus Node's
// inspector banner. A partial line is held until its newline (or Close).
type bannerFilter struct {
	mu   sync.Mutex // Lock order: see docs/locks.md.
	out  io.Writer
	line []byte // Guarded by mu.
}

func newBannerFilter(out io.Writer) *bannerFilter { return &bannerFilter{out: out} }

func (f *bannerFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			f.line = append(f.line, p...)
			// A very long unterminated line is flushed as is rather than held.
			if len(f.line) > 64<<10 {
				f.flush()
			}
			break
		}
		f.line = append(f.line, p[:i+1]...)
		f.flush()
		p = p[i+1:]
	}
	return n, nil
}

func (f *bannerFilter) flush() {
	s := string(f.line)
	f.line = f.line[:0]
	for _, pre := range nodeBannerPrefixes {
		if strings.HasPrefix(s, pre) {
			return
		}
	}
	_, _ = io.WriteString(f.out, s)
}

// Close writes out a last line that had no newline.
func (f *bannerFilter) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.line) > 0 {
		f.flush()
	}
	return nil
}
