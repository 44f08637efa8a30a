package proctest

import (
	"fmt"
	"syscall"
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
