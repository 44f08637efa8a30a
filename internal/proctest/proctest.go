// Package proctest helps tests prove that no process they caused is left
// behind.
package proctest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER, prctl(2)

// BecomeSubreaper makes the test process adopt its orphaned descendants, so
// AssertGone can reap them: on machines whose PID 1 never reaps, an orphan
// would otherwise stay a zombie that kill(pid, 0) still finds. Call it from
// TestMain.
func BecomeSubreaper() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fmt.Errorf("proctest: prctl(PR_SET_CHILD_SUBREAPER): %w", errno)
	}
	return nil
}

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

// CheckNoLeakedGoroutines waits up to 5 s for every goroutine whose stack
// mentions one of suspects to end, and lists those that did not. Call it from
// TestMain after m.Run.
func CheckNoLeakedGoroutines(pkg string, suspects ...string) error {
	var leaked []string
	for range 500 {
		leaked = leaked[:0]
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		for g := range strings.SplitSeq(string(buf), "\n\n") {
			for _, s := range suspects {
				if strings.Contains(g, s) {
					leaked = append(leaked, g)
					break
				}
			}
		}
		if len(leaked) == 0 {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("%s tests: leaked goroutines:\n%s", pkg, strings.Join(leaked, "\n\n"))
}

// Watchdog returns a context that ends after d, a hang detector rather than a
// timing assertion: a hung test then prints every goroutine's stack instead
// of stalling the suite silently.
func Watchdog(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	go func() {
		<-ctx.Done()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			buf := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "watchdog: %s hung\n%s\n", t.Name(), buf[:runtime.Stack(buf, true)])
		}
	}()
	return ctx
}

// Chromium returns Debian's chromium ($E2E_CHROMIUM, default
// /usr/bin/chromium). Without it the test fails under CI=true (CI must
// install it; scripts/test.sh does) and skips with a visible line elsewhere.
func Chromium(t testing.TB) string {
	t.Helper()
	p := os.Getenv("E2E_CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no chromium at %s: CI must install it (scripts/test.sh does)", p)
		}
		t.Skipf("SKIPPED: no chromium at %s; install Debian's chromium (apt-get install -y chromium) to run this test", p)
	}
	return p
}
