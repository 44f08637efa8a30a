package hostnode

import (
	"io"
	"os"
	"sync/atomic"
	"time"
)

// outputCopier copies one of node's output pipes (stdout, stderr) to a
// writer. exec.Cmd's own copier with WaitDelay gives up a fixed time after
// node exited even while it is still copying: a slow consumer (a trace under
// load, adding an event per line) lost the last 64 KiB pipe buffer of a
// flood, ~6,600 lines. This copier gives up only after the pipe was idle for
// outputDrainGrace after the exit: nothing node wrote is lost, and a
// descendant that left node's group (setsid) but kept the pipe open, silent,
// cannot hold Done forever.
//
// Goroutines: loop, until the pipe ends or drain gives up on it.
type outputCopier struct {
	r    *os.File  // Static after construction; our end, read by loop only.
	w    io.Writer // Static after construction; written by loop only.
	done chan struct{}

	busy     atomic.Bool  // loop is inside a Read that returned data, or a Write
	lastUsed atomic.Int64 // UnixNano of the last data read or written
}

// newOutputCopier returns the end to give the child and the copier. Call
// start once the child has its copy.
func newOutputCopier(w io.Writer) (*os.File, *outputCopier, error) {
	r, child, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	return child, &outputCopier{r: r, w: w, done: make(chan struct{})}, nil
}

func (c *outputCopier) start() {
	c.lastUsed.Store(time.Now().UnixNano())
	go c.loop()
}

func (c *outputCopier) loop() {
	defer close(c.done)
	defer c.r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.r.Read(buf)
		if n > 0 {
			c.busy.Store(true)
			_, _ = c.w.Write(buf[:n])
			c.lastUsed.Store(time.Now().UnixNano())
			c.busy.Store(false)
		}
		if err != nil {
			return // EOF: every copy of the write end is closed; or drain's deadline
		}
	}
}

// drain waits for the pipe to end after node exited, giving up once nothing
// was read or written for outputDrainGrace.
func (c *outputCopier) drain() {
	exited := time.Now().UnixNano()
	tick := time.NewTicker(outputDrainGrace / 10)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-tick.C:
			last := max(c.lastUsed.Load(), exited)
			if !c.busy.Load() && time.Since(time.Unix(0, last)) > outputDrainGrace {
				_ = c.r.SetReadDeadline(time.Now()) // ends loop's Read; the rest is lost
				<-c.done
				return
			}
		}
	}
}

// abandon releases both ends when the child never started.
func (c *outputCopier) abandon(child *os.File) {
	child.Close()
	c.r.Close()
	close(c.done)
}
