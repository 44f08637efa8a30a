// Package cork batches a connection's writes into one write syscall.
//
// coder/websocket flushes its buffer after every message, so n messages cost
// n write syscalls; on a 2-core machine the syscalls were the largest part of
// the relay's CPU (pprof of cdpserver's BenchmarkRelayFlood: ~23% in
// write(2) for the DevTools side; BenchmarkRelayPipelined: ~23% for the
// requests written to Node). A writer that knows more messages follow at
// once corks the connection: the library's flushes collect in a buffer and
// go out in one write when it uncorks (or when the buffer would pass Max).
// Nothing is ever held without a known writer that uncorks it soon: callers
// cork only while they hold more messages in hand.
package cork

import "sync"

// Max bounds the bytes held while corked. A DevTools socket's send buffer is
// 256 KiB (cdpserver's devToolsSendBuffer), so one write still fits it.
const Max = 64 << 10

// Writer is the corkable write side of a connection. Write is safe for
// concurrent use; a write from another goroutine while corked is held too
// and goes out with the rest at Uncork.
type Writer struct {
	// Lock order: see docs/locks.md.
	mu     sync.Mutex
	corked bool   // Guarded by mu.
	held   []byte // Guarded by mu: bytes written while corked.
	write  func([]byte) (int, error)
}

// New returns a Writer that writes through write (a net.Conn's Write).
func New(write func([]byte) (int, error)) *Writer { return &Writer{write: write} }

func (c *Writer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked && len(c.held)+len(p) <= Max {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	if err := c.flushLocked(); err != nil {
		return 0, err
	}
	return c.write(p)
}

// Cork holds writes until Uncork.
func (c *Writer) Cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// Uncork writes what was held. Its error is the error of the writes it stood
// in for: the connection is broken.
func (c *Writer) Uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	return c.flushLocked()
}

func (c *Writer) flushLocked() error {
	if len(c.held) == 0 {
		return nil
	}
	_, err := c.write(c.held) // a net.Conn writes all of it or fails
	c.held = c.held[:0]
	return err
}
