//go:build !linux

package hostnode

import "syscall"

// rearmQuickAck: TCP_QUICKACK exists only on Linux; elsewhere delayed ACKs
// stay as the OS configures them.
func rearmQuickAck(syscall.RawConn) {}
