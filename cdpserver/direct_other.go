//go:build !linux

package cdpserver

// sendRoom cannot ask the kernel here: hostLoop always queues.
func (c *gatedConn) sendRoom(int) bool { return false }
