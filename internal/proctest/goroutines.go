package proctest

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

const (
	// leakSettle bounds how long the leak check waits for goroutines that
	// are still winding down after the last test (a closed connection's
	// reader, a timer's callback): a hang detector, not a timing assertion.
	leakSettle = 5 * time.Second
	// settlePoll is the pause between two looks while settling: short, so a
	// clean package passes within milliseconds.
	settlePoll = 5 * time.Millisecond
	// stackBufMax bounds one goroutine dump; beyond it the dump is cut.
	stackBufMax = 8 << 20
)

// runtimeGoroutines are stack fragments of goroutines that the runtime, the
// testing package or the standard library keep for the life of the process.
// They are not leaks of the code under test.
var runtimeGoroutines = []string{
	"testing.(*M).",               // the test binary's main goroutine and its alarm
	"testing.runFuzzing",          // the fuzzing coordinator
	"os/signal.loop",              // signal.Notify's dispatcher, started once
	"os/signal.signal_recv",       // the same, parked in the runtime
	"runtime.ensureSigM",          // signal mask keeper, started once
	"runtime/trace.Start",         // go test -trace
	"runtime.ReadTrace",           // go test -trace's reader
	"runtime/pprof.profileWriter", // go test -cpuprofile
}

// MainOptions says what Main checks after the tests ran.
type MainOptions struct {
	// Package names the package in failure messages.
	Package string
	// Subreaper makes the test process adopt its orphaned descendants first
	// (see BecomeSubreaper), so AssertGone can reap them.
	Subreaper bool
	// Children also fails the run when a child process is left behind.
	Children bool
	// Ignore lists stack fragments of goroutines that may outlive the tests
	// on purpose (each with its reason in a comment where it is set).
	Ignore []string
}

// Main runs the tests, then fails the run when one of them left a goroutine
// behind (one that did not exist before m.Run, minus the runtime's and
// opts.Ignore) or, with opts.Children, a child process. It returns the exit
// code: use it as os.Exit(proctest.Main(m, opts)) in TestMain.
//
// The check runs only when the tests passed: a failed test may leave
// anything behind, and its own failure says more.
func Main(m *testing.M, opts MainOptions) int {
	if opts.Subreaper {
		if err := BecomeSubreaper(); err != nil {
			fmt.Fprintf(os.Stderr, "%s tests: %v\n", opts.Package, err)
			return 2
		}
	}
	before := goroutineIDs()
	code := m.Run()
	if code != 0 {
		return code
	}
	if opts.Children {
		if err := CheckNoChildren(opts.Package); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	if err := CheckNoLeakedGoroutines(opts.Package, before, opts.Ignore...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	return code
}

// CheckNoLeakedGoroutines waits (up to leakSettle) until every goroutine
// that is not in before, not the caller, not the runtime's and not matched
// by ignore has ended, and lists those that did not. before is what
// goroutineIDs returned before the tests ran (nil: none is exempt).
//
// Idle keep-alive connections of http.DefaultTransport are closed first:
// they are the standard library's pool, kept for reuse, not a leak; a
// connection still in use is.
func CheckNoLeakedGoroutines(pkg string, before map[string]bool, ignore ...string) error {
	return checkLeaks(pkg, before, ignore, leakSettle)
}

func checkLeaks(pkg string, before map[string]bool, ignore []string, settle time.Duration) error {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t.CloseIdleConnections()
	}
	var leaked []string
	for deadline := time.Now().Add(settle); ; {
		leaked = leakedGoroutines(before, ignore)
		if len(leaked) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s tests: %d goroutines leaked (started by a test and still running %v after the last test):\n\n%s",
				pkg, len(leaked), settle, strings.Join(leaked, "\n\n"))
		}
		time.Sleep(settlePoll)
	}
}

func leakedGoroutines(before map[string]bool, ignore []string) []string {
	var leaked []string
	all := Goroutines()
	for i, g := range all {
		if i == 0 {
			continue // the caller's own goroutine: runtime.Stack lists it first
		}
		if before[goroutineID(g)] || matchesAny(g, runtimeGoroutines) || matchesAny(g, ignore) {
			continue
		}
		leaked = append(leaked, g)
	}
	return leaked
}

func matchesAny(stack string, fragments []string) bool {
	for _, f := range fragments {
		if strings.Contains(stack, f) {
			return true
		}
	}
	return false
}

// goroutineIDs returns the ids of every goroutine now running.
func goroutineIDs() map[string]bool {
	ids := map[string]bool{}
	for _, g := range Goroutines() {
		ids[goroutineID(g)] = true
	}
	return ids
}

// goroutineID is "17" of a stack that starts "goroutine 17 [running]:".
func goroutineID(stack string) string {
	rest, ok := strings.CutPrefix(stack, "goroutine ")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, " ")
	return id
}

// Goroutines returns the stack of every goroutine, the caller's first.
func Goroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= stackBufMax {
			return strings.Split(strings.TrimSpace(string(buf[:n])), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}
