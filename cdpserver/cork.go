package cdpserver

import "sync"

// Corked writes. coder/websocket flushes its buffer after every message, so
// a batch of n queued messages cost n write syscalls, and on a 2-core machine
// the syscalls were the largest part of the relay's CPU (pprof of
// BenchmarkRelayFlood: ~23% in write(2)). While sendLoop writes a batch of
// more than one message it corks the DevTools connection: the library's
// flushes collect in corkBuf and go out in one write when the batch ends (or
// when corkBuf would pass maxCork). A single message is never corked, so no
// message waits for anything but the messages queued with it.
//
// A control frame the library writes from its read goroutine while corked (a
// pong) waits at most for the rest of the batch.

// maxCork bounds the bytes held while corked: a quarter of the socket's send
// buffer (devToolsSendBuffer), so one write still fits it.
const maxCork = 64 << 10

// corker is the corkable write side of a gatedConn.
type corker struct {
	mu      sync.Mutex
	corked  bool   // Guarded by mu.
	corkBuf []byte // Guarded by mu: bytes written while corked.
	write   func([]byte) (int, error)
}

func (c *corker) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked && len(c.corkBuf)+len(p) <= maxCork {
		c.corkBuf = append(c.corkBuf, p...)
		return len(p), nil
	}
	if err := c.flushLocked(); err != nil {
		return 0, err
	}
	return c.write(p)
}

// cork holds writes until uncork.
func (c *corker) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// uncork writes what was held. Its error is the error of the writes it
// stood in for: the connection is broken.
func (c *corker) uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	return c.flushLocked()
}

func (c *corker) flushLocked() error {
	if len(c.corkBuf) == 0 {
		return nil
	}
	_, err := c.write(c.corkBuf) // a net.Conn writes all of it or fails
	c.corkBuf = c.corkBuf[:0]
	return err
}
