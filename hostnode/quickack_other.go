//go:build !linux

package hostnode

import "syscall"

// rearmQuickAck: TCP_QUICKACK exists only on Linux; elsewhere delayed ACKs
// stay as the OS configures them.
func rearmQuickAck(syscall.RawConn) {}

// kernelQueueVisible: without SIOCINQ, Drained cannot tell.
const kernelQueueVisible = false

// kernelQueued: SIOCINQ is Linux's; elsewhere the receive queue counts as
// not empty (no promise is made).
func (c *quickAckConn) kernelQueued() bool { return true }
