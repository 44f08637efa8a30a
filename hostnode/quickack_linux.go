//go:build linux

package hostnode

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// rearmQuickAck asks the kernel to ACK received data immediately. Errors are
// ignored: the connection works without it, only slower on bursts.
func rearmQuickAck(raw syscall.RawConn) {
	_ = raw.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
	})
}

// kernelQueueVisible: SIOCINQ tells kernelQueued the truth (Drained).
const kernelQueueVisible = true

// kernelQueued reports whether the socket's receive queue holds bytes not
// read yet (SIOCINQ); true when that cannot be known.
func (c *quickAckConn) kernelQueued() bool {
	n := 1
	_ = c.raw.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.SIOCINQ); err == nil {
			n = v
		}
	})
	return n > 0
}
