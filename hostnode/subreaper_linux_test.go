package hostnode

import "syscall"

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER, prctl(2)

func becomeSubreaper() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return errno
	}
	return nil
}
