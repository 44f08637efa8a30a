package carrier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Limits of the host pipe's outgoing queue.
//
// Overflow policy. The host is the run's one host source and cannot
// reconnect (fd 3 is inherited once), so worker-initiated frames never
// close the pipe: Outbox.Enqueue (Registry.Send) beyond hostSendLimit
// drops the frame, counts it and returns ErrQueueFull, and the sender
// answers its own request with an error. That is the normal case for a
// host paused at a breakpoint, which stops reading. Replies to the
// producer's own frames (acks, rejects, snapshot requests) may use up to
// hostReplyLimit: the producer keeps at most one append in flight, so a
// well-behaved producer has a handful of replies outstanding, and reaching
// the limit means it writes without reading; the pipe is then closed
// (ErrPolicy).
var (
	hostSendLimit  = queueLimit{frames: 256, bytes: 4 << 20}
	hostReplyLimit = queueLimit{frames: 1024, bytes: 8 << 20}
)

// hostGoodbyeTimeout bounds how long the last frames (a reject, a close
// frame) may take to write once the pipe is ending; a host that does not
// read them by then is hung up on.
const hostGoodbyeTimeout = 5 * time.Second

// The host finds its end of the channel as fd HostFD (the first of
// exec.Cmd.ExtraFiles, i.e. hostnode.Options.ExtraFiles) and learns that
// number from the environment variable HostFDEnv, which the preload reads
// before opening it.
const (
	HostFD    = 3
	HostFDEnv = "INSPECTOR_WORKER_FD"
)

// NewHostChannel creates the host pipe: a connected AF_UNIX stream
// socketpair. childEnd goes to the Node host as its fd 3 (first of
// ExtraFiles); the caller closes its copy once the child started, so that
// the child's exit shows as EOF on workerEnd. workerEnd is for
// ServeHostPipe. Both ends are close-on-exec: exec's dup to fd 3 is the
// only way the child end reaches a child, so no other process inherits it.
func NewHostChannel() (childEnd *os.File, workerEnd net.Conn, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("carrier: host channel socketpair: %w", err)
	}
	childEnd = os.NewFile(uintptr(fds[0]), "inspector-worker-host-pipe")
	wf := os.NewFile(uintptr(fds[1]), "inspector-worker-host-pipe-worker")
	// FileConn dups the fd (non-blocking, on the runtime poller), so the
	// *os.File is closed either way.
	workerEnd, err = net.FileConn(wf)
	wf.Close()
	if err != nil {
		childEnd.Close()
		return nil, nil, fmt.Errorf("carrier: host channel: %w", err)
	}
	return childEnd, workerEnd, nil
}

// ServeHostPipe runs the host pipe on conn (the worker's end of
// NewHostChannel) until the host hangs up, ctx ends, or the producer
// breaks the rules. It owns conn and closes it.
//
// The first line must be the host's hello (RoleHost, no token: the
// inherited socket is the credential); every later line is fed to
// Source.Ingest in order. A line longer than sourceproto.MaxFrameBytes is
// refused as soon as it passes the limit, never buffered whole: the host
// gets reject{oversized} and close{policy-violation}, and the pipe is
// closed, since a producer that broke the framing cannot be trusted to
// resynchronize. When ctx ends the host gets close{shutdown}.
//
// It returns nil when the host hung up or ctx ended, and otherwise why
// the worker hung up (ErrFrameTooLong, ErrHelloRefused, ErrPolicy, or an
// I/O error). logf may be nil; frames are never logged.
//
// Goroutines: the caller's runs the read loop; one sendLoop writes every
// frame (joined with errgroup before return); context.AfterFunc runs
// finish once if ctx ends first.
func ServeHostPipe(ctx context.Context, conn net.Conn, reg *sourceproto.Registry, logf func(string, ...any)) error {
	return serveLinePipe(ctx, conn, reg, "", logf)
}

// ServeChildPipe runs a followed child process's channel on conn (a
// loopback connection the worker already authenticated with the run's
// child token, see childrealm.CaptureHandler) exactly as ServeHostPipe
// runs the host's, with the same limits and overflow policy, except that
// the hello must claim the source id granted here ("child-<pid>"): a
// child holding the child token cannot replace the host's source or
// another child's.
func ServeChildPipe(ctx context.Context, conn net.Conn, reg *sourceproto.Registry, id string, logf func(string, ...any)) error {
	if id == "" {
		conn.Close()
		return errors.New("carrier: a child pipe needs the source id it grants")
	}
	return serveLinePipe(ctx, conn, reg, id, logf)
}

// serveLinePipe is ServeHostPipe; id, when set, is the one source id
// granted.
func serveLinePipe(ctx context.Context, conn net.Conn, reg *sourceproto.Registry, id string, logf func(string, ...any)) error {
	if logf == nil {
		logf = nopLogf
	}
	p := &hostPipe{conn: conn, logf: logf, q: newFrameQueue(), id: id}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { p.finish(shutdownEnding()) })
	defer stop()
	var g errgroup.Group
	g.Go(p.sendLoop)
	g.Go(func() error { p.readLoop(reg); return nil })
	_ = g.Wait() // both loops report through p.end
	if n := p.dropped.Load(); n > 0 {
		logf("host pipe: %d worker frames dropped while the host was not reading", n)
	}
	return p.ending().err
}

// hostPipe is one host pipe connection. It is the Outbox of its source.
type hostPipe struct {
	conn net.Conn             // Static after construction.
	logf func(string, ...any) // Static after construction.
	q    *frameQueue          // Static after construction; towards sendLoop.
	id   string               // Static after construction: the one source id granted ("": any, the host's pipe).
	mu   sync.Mutex           // Guards the fields below. Lock order: see docs/locks.md.
	end  *ending              // Guarded by mu: set once, by finish.
	src  *sourceproto.Source  // Guarded by mu: set once, after the hello.

	dropped atomic.Uint64 // worker frames refused by hostSendLimit
}

// Enqueue implements sourceproto.Outbox for Registry.Send; see the
// overflow policy at hostSendLimit.
func (p *hostPipe) Enqueue(frame []byte) error {
	err := p.q.push(frame, hostSendLimit)
	if errors.Is(err, ErrQueueFull) {
		p.dropped.Add(1)
	}
	return err
}

// readLoop reads lines until the pipe ends, then closes the source.
func (p *hostPipe) readLoop(reg *sourceproto.Registry) {
	lines := newLineReader(p.conn, sourceproto.MaxFrameBytes)
	hello, err := lines.next()
	if err != nil {
		p.finish(p.readEnding(err, nil))
		return
	}
	src, res, err := safeOpen(reg, hello, sourceproto.OpenOptions{
		Role: sourceproto.RoleHost, Outbox: p, ID: p.id,
		OnSuperseded: func() { p.finish(replacedEnding()) },
	})
	switch {
	case err != nil:
		p.logf("host pipe: %v", err)
		p.finish(panicEnding(err))
		return
	case src == nil:
		p.reply(res.Replies)
		p.finish(helloEnding(res.Err))
		return
	}
	p.mu.Lock()
	p.src = src
	p.mu.Unlock()
	defer func() { src.Close(p.ending().code) }()
	ref := src.Ref()
	p.logf("host pipe: source %s generation %d open", ref.ID, ref.Gen)
	if !p.reply(res.Replies) {
		return
	}
	for {
		frame, err := lines.next()
		if err != nil {
			p.finish(p.readEnding(err, &ref))
			return
		}
		res, err := safeIngest(src, frame)
		if err != nil {
			p.logf("host pipe: %v", err)
			p.finish(panicEnding(err))
			return
		}
		if !p.reply(res.Replies) {
			return
		}
		if res.Close {
			p.finish(resultEnding(res))
			return
		}
	}
}

// reply queues the registry's replies; see the policy at hostReplyLimit.
// It reports whether the pipe is still up.
func (p *hostPipe) reply(frames [][]byte) bool {
	for _, f := range frames {
		err := p.q.push(f, hostReplyLimit)
		if errors.Is(err, ErrQueueFull) {
			// It is not reading: a goodbye frame would only wait for the
			// write deadline.
			p.finish(ending{code: sourceproto.ClosePolicy, reason: "producer does not read its answers",
				discard: true, err: fmt.Errorf("%w: replies not read", ErrPolicy)})
		}
		if err != nil {
			return false
		}
	}
	return true
}

// readEnding says what a read error means. ref is nil before the hello.
func (p *hostPipe) readEnding(err error, ref *sourceproto.SourceRef) ending {
	lost := ending{code: sourceproto.CloseGoingAway, reason: "host closed the pipe"}
	switch {
	case p.ending().code != "":
		return lost // finish ran already (ctx, write error); this is its echo
	case errors.Is(err, ErrFrameTooLong):
		p.reply([][]byte{oversizedReject(ref)})
		return ending{code: sourceproto.ClosePolicy, reason: "frame over MaxFrameBytes", goodbye: true, err: err}
	case errors.Is(err, io.EOF):
		return lost
	case errors.Is(err, errTruncated):
		p.logf("host pipe: %v", err)
		return lost
	}
	lost.err = fmt.Errorf("carrier: host pipe read: %w", err)
	return lost
}

// finish records why the pipe ends (the first call wins) and acts on it:
// closes the queue (with the goodbye frame last, if any), bounds the time
// left for writing, stops the read loop, and closes the source.
func (p *hostPipe) finish(e ending) {
	p.mu.Lock()
	if p.end != nil {
		p.mu.Unlock()
		return
	}
	p.end = &e
	src := p.src
	p.mu.Unlock()
	var bye []byte
	if e.goodbye && src != nil {
		bye = closeFrame(src.Ref(), e.code, e.reason)
	}
	p.q.close(e.discard, bye)
	// Deadlines also apply to a read or write already blocked. Errors only
	// mean the socket is closed already, which is what we want.
	past := time.Unix(1, 0)
	writeBy := time.Now().Add(hostGoodbyeTimeout)
	if e.discard && bye == nil {
		writeBy = past // nothing more is for this peer: stop a blocked write now
	}
	_ = p.conn.SetWriteDeadline(writeBy)
	_ = p.conn.SetReadDeadline(past)
	if src != nil {
		// Now rather than when the read loop returns; safe because finish
		// never runs under the source's lock (see clientConn.finish).
		src.Close(e.code)
	}
}

// ending returns why the pipe ends (the zero ending while it runs).
func (p *hostPipe) ending() ending {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.end == nil {
		return ending{}
	}
	return *p.end
}

var newline = []byte{'\n'}

// sendLoop is the one writer: it writes every queued frame followed by
// "\n", a whole batch per writev, until the queue is closed and drained.
func (p *hostPipe) sendLoop() error {
	var frames [][]byte
	var bufs net.Buffers
	for {
		var done bool
		frames, done = p.q.next(frames)
		if done {
			return nil
		}
		bufs = bufs[:0]
		for _, f := range frames {
			bufs = append(bufs, f, newline)
		}
		w := bufs // WriteTo consumes its receiver
		if _, err := w.WriteTo(p.conn); err != nil {
			p.finish(ending{code: sourceproto.CloseGoingAway, reason: "host pipe write failed", discard: true,
				err: fmt.Errorf("carrier: host pipe write: %w", err)})
		}
	}
}
