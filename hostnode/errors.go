package hostnode

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels, matched with errors.Is. Start returns them inside a *StartError
// that carries the details (errors.As); the address functions wrap them with
// the offending input.
var (
	// ErrNodeNotFound: Options.Argv[0] could not be resolved to an executable.
	ErrNodeNotFound = errors.New("hostnode: node executable not found")
	// ErrSpawn: the executable was found but could not be started (bad Dir,
	// permissions, too many open files …).
	ErrSpawn = errors.New("hostnode: cannot start node")
	// ErrInspectorFailed: node printed a failure line before the inspector URL
	// (for example "Starting inspector on 127.0.0.1:0 failed: …" or
	// "node: bad option: …").
	ErrInspectorFailed = errors.New("hostnode: node failed before printing the inspector URL")
	// ErrExitedEarly: the child exited before printing the inspector URL.
	ErrExitedEarly = errors.New("hostnode: node exited before printing the inspector URL")
	// ErrReadyTimeout: Options.ReadyTimeout elapsed without an inspector URL.
	ErrReadyTimeout = errors.New("hostnode: timed out waiting for the inspector URL")
	// ErrStartCanceled: Start's ctx was done before the inspector URL arrived.
	// The ctx error is wrapped too (errors.Is(err, context.Canceled) holds).
	ErrStartCanceled = errors.New("hostnode: start canceled")
	// ErrNotLoopback: an inspector address names a host other than 127.0.0.0/8,
	// ::1 or localhost. Node's inspector grants full code execution to whoever
	// connects, so this package never talks to one over a real network.
	ErrNotLoopback = errors.New("hostnode: inspector address is not loopback")
	// ErrBadAddr: an inspector address is neither ws://HOST:PORT/ID nor HOST:PORT.
	ErrBadAddr = errors.New("hostnode: bad inspector address")
	// ErrNoTarget: an inspector's /json/list held no target with a
	// webSocketDebuggerUrl.
	ErrNoTarget = errors.New("hostnode: inspector lists no debuggable target")
)

// StartError is what Start returns on failure. Kind is one of the sentinels
// above; errors.Is matches Kind and, when set, Err.
type StartError struct {
	Kind       error    // ErrNodeNotFound, ErrSpawn, ErrInspectorFailed, ErrExitedEarly, ErrReadyTimeout or ErrStartCanceled
	Argv       []string // the argv Start executed (or tried to)
	PID        int      // the child's pid (gone by now), or 0 if none was started
	Line       string   // the failure line Node printed, if any
	ExitCode   int      // exit code (128+signal) if the child exited on its own, else -1
	StderrTail string   // last <= 4000 bytes of the child's stderr
	Err        error    // underlying cause (exec's or ctx's error, the timeout), or nil
}

func (e *StartError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Error builds a message a user can act on: what happened, the command line,
// and what node said last.
func (e *StartError) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	switch {
	case e.Kind == ErrNodeNotFound:
		fmt.Fprintf(&b, ": %v (install Node.js >= 20 or give the full path to node)", e.Err)
		return b.String()
	case e.Kind == ErrSpawn:
		fmt.Fprintf(&b, ": %v; command: %s", e.Err, strings.Join(e.Argv, " "))
		return b.String()
	case e.Line != "":
		fmt.Fprintf(&b, ": %q", e.Line)
	}
	if e.ExitCode >= 0 {
		fmt.Fprintf(&b, " (exit code %d)", e.ExitCode)
	}
	switch e.Kind {
	case ErrReadyTimeout:
		fmt.Fprintf(&b, ": %v; no node process remains (is Argv[0] really node >= 20? no \"Debugger listening on ws://\" line appeared)", e.Err)
	case ErrStartCanceled:
		fmt.Fprintf(&b, ": %v; no node process remains", e.Err)
	case ErrInspectorFailed:
		if e.ExitCode < 0 {
			b.WriteString("; no node process remains")
		}
	}
	fmt.Fprintf(&b, "; command: %s", strings.Join(e.Argv, " "))
	if tail := strings.TrimSpace(e.StderrTail); tail != "" && e.Line != tail {
		fmt.Fprintf(&b, "; stderr tail:\n%s", tail)
	}
	return b.String()
}
