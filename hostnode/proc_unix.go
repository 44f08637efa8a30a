//go:build unix

package hostnode

import (
	"fmt"
	"os"
	"syscall"
)

// killGroup SIGKILLs the process group led by pid: node and every process it
// started that did not move to a group of its own (detached children do).
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// exitCodeOf reports ps's exit status the way a shell does: the status, or
// 128+signal number when the process was killed by a signal; -1 if unknown.
func exitCodeOf(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("hostnode: %v is not a system signal", sig)
	}
	return syscall.Kill(-pid, s)
}
