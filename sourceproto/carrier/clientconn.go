package carrier

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/sync/errgroup"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Limits of one client connection's outgoing queue.
//
// Overflow policy: the queue never blocks its producers (the read loop's
// replies, Registry.Send from realm and cdpserver goroutines). When it
// would pass clientQueueLimit, the connection is closed with 1008 "client
// too slow": what is queued is dropped, Enqueue returns ErrQueueFull, and
// the consumer hears policy-violation. A browser reads its sockets off the
// page's main thread, so even a page stuck in a loop keeps taking frames;
// a full queue means a dead or hostile peer, and the page's bundle
// reconnects as a new generation. Dropping single frames instead would
// break acks and runtime answers silently.
var clientQueueLimit = queueLimit{frames: 1024, bytes: 8 << 20}

const (
	// clientCloseGrace is how long an ending connection may take to write
	// what is left and the close handshake before it is cut off.
	clientCloseGrace = 10 * time.Second
	// defaultHelloTimeout bounds the wait for the first message: a socket
	// that never says hello would otherwise hold a goroutine forever.
	// Bundles send the hello as soon as the socket opens.
	defaultHelloTimeout = 10 * time.Second
)

// clientConn is one /client WebSocket: one source generation. It is the
// Outbox of its source.
type clientConn struct {
	h           *ClientHandler     // Static after construction.
	ws          *websocket.Conn    // Static after construction.
	origin      string             // Static after construction; for logs.
	q           *frameQueue        // Static after construction; towards sendLoop.
	writeCtx    context.Context    // Static after construction; cancelled = stop writing now.
	cancelWrite context.CancelFunc // Static after construction.
	buf         bytes.Buffer       // Owned by the read loop: the current message.

	mu    sync.Mutex          // Guards the fields below. Lock order: see docs/locks.md.
	end   *ending             // Guarded by mu: set once, by finish.
	src   *sourceproto.Source // Guarded by mu: set once, after the hello.
	grace *time.Timer         // Guarded by mu: armed by finish.

	// ackMu orders the read loop's replies and the acks the source held
	// back (coalesced acks, sourceproto.Result.AckAfter): an ack never
	// overtakes a reply to a later frame. Lock order: see docs/locks.md.
	ackMu    sync.Mutex  // Lock order: see docs/locks.md.
	ackTimer *time.Timer // Guarded by ackMu: armed while an ack is held back.
}

func newClientConn(h *ClientHandler, ws *websocket.Conn, origin string) *clientConn {
	c := &clientConn{h: h, ws: ws, origin: origin, q: newFrameQueue()}
	c.writeCtx, c.cancelWrite = context.WithCancel(context.Background())
	return c
}

// serve runs the connection until both loops are done; the socket is
// closed by then.
func (c *clientConn) serve() {
	var g errgroup.Group
	g.Go(c.sendLoop)
	g.Go(func() error { c.readLoop(); return nil })
	_ = g.Wait() // both loops report through c.end
	c.ackMu.Lock()
	if c.ackTimer != nil {
		c.ackTimer.Stop()
	}
	c.ackMu.Unlock()
	c.mu.Lock()
	if c.grace != nil {
		c.grace.Stop()
	}
	c.mu.Unlock()
	c.cancelWrite()
}

// Enqueue implements sourceproto.Outbox; see the policy at clientQueueLimit.
// On overflow it ends the connection and closes the source; the registry
// never calls it under the source's lock (Send releases the registry's
// locks first, consumers run outside them).
func (c *clientConn) Enqueue(frame []byte) error {
	err := c.q.push(frame, clientQueueLimit)
	if errors.Is(err, ErrQueueFull) {
		c.finish(tooSlowEnding())
	}
	return err
}

func tooSlowEnding() ending {
	return ending{code: sourceproto.ClosePolicy, reason: "client too slow", discard: true,
		status: websocket.StatusPolicyViolation}
}

// reply queues the registry's replies and reports whether the connection
// is still up.
func (c *clientConn) reply(frames [][]byte) bool {
	ok, full := c.pushReplies(frames)
	if full {
		c.finish(tooSlowEnding())
	}
	return ok
}

// pushReplies is reply for a caller holding ackMu: a full queue is
// reported, not acted on, because finish closes the source, which calls
// the consumers on this goroutine; the caller finishes after unlocking.
func (c *clientConn) pushReplies(frames [][]byte) (ok, full bool) {
	for _, f := range frames {
		if err := c.q.push(f, clientQueueLimit); err != nil {
			return false, errors.Is(err, ErrQueueFull)
		}
	}
	return true, false
}

// readLoop opens the source with the first message, feeds the rest to
// Ingest in order, and closes the source when the connection ends.
func (c *clientConn) readLoop() {
	hello, err := c.readHello()
	if err != nil {
		c.finish(c.readEnding(err))
		return
	}
	src, res, err := safeOpen(c.h.reg, hello, sourceproto.OpenOptions{
		Role: sourceproto.RoleClient, Token: c.h.token, Outbox: c,
		OnSuperseded: func() { c.finish(replacedEnding()) },
		CoalesceAcks: true,
	})
	switch {
	case err != nil:
		c.h.logf("client from %q: %v", c.origin, err)
		c.finish(panicEnding(err))
		return
	case src == nil:
		c.reply(res.Replies)
		e := helloEnding(res.Err)
		c.h.logf("client from %q: %s", c.origin, e.reason)
		c.finish(e)
		return
	}
	c.mu.Lock()
	c.src = src
	c.mu.Unlock()
	defer func() { src.Close(c.ending().code) }()
	if !c.reply(res.Replies) {
		return
	}
	for {
		frame, err := c.readMessage(context.Background())
		if err != nil {
			c.finish(c.readEnding(err))
			return
		}
		// The consumers have the frame before its replies are queued; none
		// runs under ackMu. ackMu need not cover Ingest: a reply that
		// carries an ack is decided with no ack left held back, so a
		// flushAck between Ingest and reply finds none to send, and a
		// flushAck that took one first holds ackMu until it is queued.
		res, err := safeIngest(src, frame)
		if err != nil {
			c.h.logf("client %s: %v", src.Ref().ID, err)
			c.finish(panicEnding(err))
			return
		}
		c.ackMu.Lock()
		ok, full := c.pushReplies(res.Replies)
		if ok && res.AckAfter > 0 && c.ackTimer == nil {
			c.ackTimer = time.AfterFunc(res.AckAfter, func() { c.flushAck(src) })
		}
		c.ackMu.Unlock()
		if full {
			c.finish(tooSlowEnding())
		}
		if !ok {
			return
		}
		if res.Close {
			c.finish(resultEnding(res))
			return
		}
	}
}

// flushAck queues the ack the source held back, if one is still due: the
// AckAfter timer's end.
func (c *clientConn) flushAck(src *sourceproto.Source) {
	c.ackMu.Lock()
	c.ackTimer = nil
	var full bool
	if f := src.FlushAck(); f != nil {
		_, full = c.pushReplies([][]byte{f})
	}
	c.ackMu.Unlock()
	if full {
		c.finish(tooSlowEnding())
	}
}

// readHello reads the first message within helloTimeout. The timer ends
// the connection through finish, so the page gets a close status with a
// reason rather than a dropped socket.
func (c *clientConn) readHello() ([]byte, error) {
	t := time.AfterFunc(c.h.helloTimeout, func() {
		c.finish(ending{code: sourceproto.ClosePolicy, reason: "no hello", status: websocket.StatusPolicyViolation})
	})
	defer t.Stop()
	return c.readMessage(context.Background())
}

// errNotText: a binary message; frames are JSON text.
var errNotText = errors.New("carrier: binary message on /client")

// readMessage reads one text message into c.buf. Reads take a context
// that is never cancelled: the read loop ends when the socket closes,
// which every ending does (sendLoop's close handshake or the grace
// timer), and a cancellable context would cost a timer per message.
func (c *clientConn) readMessage(ctx context.Context) ([]byte, error) {
	typ, r, err := c.ws.Reader(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, errNotText
	}
	c.buf.Reset()
	if _, err := c.buf.ReadFrom(r); err != nil {
		return nil, err
	}
	return c.buf.Bytes(), nil
}

// readEnding says what a read error means.
func (c *clientConn) readEnding(err error) ending {
	switch {
	case errors.Is(err, errNotText):
		return ending{code: sourceproto.ClosePolicy, reason: "frames are text messages",
			status: websocket.StatusUnsupportedData}
	case errors.Is(err, websocket.ErrMessageTooBig):
		// The library already closed with 1009 while reading; the page
		// learns the limit from the welcome's limits.
		return ending{code: sourceproto.ClosePolicy, reason: "frame over MaxFrameBytes",
			status: websocket.StatusMessageTooBig}
	}
	return ending{code: sourceproto.CloseGoingAway, reason: "connection lost", discard: true,
		status: websocket.StatusGoingAway}
}

// finish records why the connection ends (the first call wins) and acts
// on it: closes the queue (the goodbye frame last, if any), after which
// the sendLoop writes what is left and closes the socket with e.status;
// arms the grace timer that cuts off a peer that takes none of it; and
// closes the source.
func (c *clientConn) finish(e ending) {
	c.mu.Lock()
	if c.end != nil {
		c.mu.Unlock()
		return
	}
	c.end = &e
	src := c.src
	c.grace = time.AfterFunc(clientCloseGrace, c.cancelWrite)
	c.mu.Unlock()
	if src != nil && e.code != sourceproto.CloseGoingAway {
		ref := src.Ref()
		c.h.logf("client %s generation %d from %q: %s", ref.ID, ref.Gen, c.origin, e.reason)
	}
	var bye []byte
	if e.goodbye && src != nil {
		bye = closeFrame(src.Ref(), e.code, e.reason)
	}
	c.q.close(e.discard, bye)
	if src != nil {
		// Now, not when the read loop notices: the consumer and Send
		// callers must not treat a dead connection as live for the
		// close handshake's duration. finish never runs under the
		// source's lock (Enqueue is called after Ingest or Send released
		// it, OnSuperseded outside all locks), so this cannot deadlock.
		src.Close(e.code)
	}
}

// ending returns why the connection ends (the zero ending while it runs).
func (c *clientConn) ending() ending {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.end == nil {
		return ending{}
	}
	return *c.end
}

// sendLoop is the one writer: one text message per frame, until the queue
// is closed and drained; then the close handshake with the ending's
// status and reason.
func (c *clientConn) sendLoop() error {
	var frames [][]byte
	for {
		var done bool
		frames, done = c.q.next(frames)
		if done {
			break
		}
		for _, f := range frames {
			if err := c.ws.Write(c.writeCtx, websocket.MessageText, f); err != nil {
				c.finish(ending{code: sourceproto.CloseGoingAway, reason: "write failed", discard: true,
					status: websocket.StatusGoingAway})
				_ = c.ws.CloseNow()
				return nil
			}
		}
	}
	e := c.ending()
	if err := c.ws.Close(e.status, truncate(e.reason, maxCloseReason)); err != nil {
		_ = c.ws.CloseNow()
	}
	return nil
}
