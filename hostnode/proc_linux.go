//go:build linux

package hostnode

import (
	"syscall"
	"unsafe"
)

// sysProcAttr gives node its own process group, so Kill reaches the children
// it spawned and a Ctrl-C on the worker's terminal is forwarded by the worker
// (Signal) instead of hitting node directly; and a parent-death signal, so
// node dies with the worker even when the worker is SIGKILLed.
//
// Pdeathsig fires when the parent THREAD that forked the child exits, not the
// process. That is safe in Go: the runtime never retires an OS thread unless a
// goroutine exits while locked to it with runtime.LockOSThread, which this
// package never does around Start (callers must not either).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

const pPID = 1 // P_PID for waitid(2)

// waitExitedNoReap blocks until pid has exited but leaves it a zombie
// (waitid with WNOWAIT), so its pid, and with it the process group id, cannot
// be reused yet. The caller marks the process exited before reaping it; Kill
// signals the group only while that mark is unset, so it can never hit a
// stranger that inherited the number. Reports whether it waited.
func waitExitedNoReap(pid int) bool {
	var info [128]byte // siginfo_t; filled by the kernel, unused
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			return errno == 0
		}
	}
}
