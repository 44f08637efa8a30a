package cdpserver

import "golang.org/x/sys/unix"

// sendRoom reports whether the socket holds fewer than max bytes not yet
// acknowledged by the peer (SIOCOUTQ), so a small write cannot block.
func (c *gatedConn) sendRoom(max int) bool {
	if c.raw == nil {
		return false
	}
	n := -1
	err := c.raw.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.SIOCOUTQ); err == nil {
			n = v
		}
	})
	return err == nil && n >= 0 && n < max
}
