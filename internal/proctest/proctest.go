// Package proctest helps tests prove that no process they caused is left
// behind.
package proctest

import (
	"errors"
	"fmt"
	"os"
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
