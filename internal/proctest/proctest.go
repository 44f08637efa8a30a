// Package proctest is the shared test kit: it helps tests prove that nothing
// they caused is left behind (child processes, goroutines), that a hung test
// fails with a goroutine dump instead of stalling the suite, and that a test
// needing node or Chromium never skips silently in CI.
//
// Every package's tests use these helpers instead of their own copies:
//
//   - AssertGone, AssertGoneWithin, Children, CheckNoChildren: processes;
//   - Main, CheckNoLeakedGoroutines: a TestMain that fails the package on
//     leaked goroutines (and, optionally, child processes);
//   - Watchdog: a test-scoped deadline that dumps goroutines and fails;
//   - Node, Chromium: the binaries, failing under CI=true when missing and
//     skipping with a visible line elsewhere.
package proctest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// AssertGone fails the test unless pid ends up nonexistent. It reaps pid if it
// became an orphan of ours. Polls up to 10 s: a hang detector, not a timing
// assertion.
func AssertGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	t.Errorf("process %d is still there: %s", pid, stat)
}

// AssertGoneWithin fails the test unless every pid is gone within d after
// since (the event that should end them), and returns how long after since
// they were. Like AssertGone it reaps orphans of ours. For bounds that are
// part of a contract ("no process of the tree remains within 2 s");
// everywhere else AssertGone's hang detector is the right tool.
func AssertGoneWithin(t testing.TB, since time.Time, d time.Duration, pids ...int) time.Duration {
	t.Helper()
	for {
		var left []int
		for _, pid := range pids {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				left = append(left, pid)
			}
		}
		took := time.Since(since)
		if len(left) == 0 {
			return took
		}
		if took > d {
			for _, pid := range left {
				stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
				t.Errorf("process %d is still there after %v: %s", pid, took.Round(time.Millisecond), stat)
			}
			return took
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Children lists the pids whose parent is pid, read from /proc.
func Children(pid int) []int {
	dirs, _ := os.ReadDir("/proc")
	var kids []int
	for _, d := range dirs {
		child, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// "pid (comm) state ppid …"; comm may hold spaces and parentheses.
		rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
		if f := strings.Fields(rest); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			kids = append(kids, child)
		}
	}
	return kids
}

// CheckNoChildren waits (up to childSettle, a hang detector) until this
// process has no child process left, zombies included, and lists those that
// remain. Call it from TestMain after m.Run (Main does, with Children set).
func CheckNoChildren(pkg string) error {
	var left []string
	for deadline := time.Now().Add(childSettle); ; {
		left = left[:0]
		for _, pid := range Children(os.Getpid()) {
			stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			left = append(left, strings.TrimSpace(string(stat)))
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s tests: child processes left behind:\n%s", pkg, strings.Join(left, "\n"))
		}
		time.Sleep(settlePoll)
	}
}

// childSettle bounds how long CheckNoChildren waits for exiting children:
// a hang detector (they normally go within milliseconds), not a timing
// assertion.
const childSettle = 5 * time.Second
