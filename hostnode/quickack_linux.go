//go:build linux

package hostnode

import "syscall"

// rearmQuickAck asks the kernel to ACK received data immediately. Errors are
// ignored: the connection works without it, only slower on bursts.
func rearmQuickAck(raw syscall.RawConn) {
	_ = raw.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
	})
}
