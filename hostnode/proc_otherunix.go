//go:build unix && !linux

package hostnode

import "syscall"

// sysProcAttr: see proc_linux.go. Outside Linux there is no parent-death
// signal, so a SIGKILLed worker leaves node running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitExitedNoReap is not available here; the exited mark is then set right
// after reaping, leaving a tiny window in which Kill could signal a reused
// process group id. For the same reason waitLoop does not kill the group
// when node exits on its own: the host's children may outlive it here.
func waitExitedNoReap(int) bool { return false }
