package cdpserver

import (
	"bufio"
	"encoding/binary"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/inspector-worker/inspector-worker/internal/cork"
)

// The close gate. coder/websocket answers a peer's close frame the moment its
// reader sees it: it writes the close reply and closes the connection
// (read.go, handleControl), so nothing can be sent after Conn.Read returned
// the close error. A client that sends requests and then its close frame
// (chrome-remote-interface's REPL on piped input does) would lose the answers
// to every request still in flight to Node, where Node itself answers them.
//
// So the DevTools connection is read through a gatedConn: it follows the
// client's frame boundaries and delivers bytes only up to the start of a
// close frame; the next Read blocks in the session's hold
// (Session.awaitAnswersWritten), which returns once the answers to every
// request read before the close frame are written (bounded), and then lets
// the close frame through to the library, which replies as usual.

// closeGate wraps the http.ResponseWriter of a DevTools upgrade so that
// websocket.Accept hijacks a gatedConn.
type closeGate struct {
	http.ResponseWriter
	conn *gatedConn // Set by Hijack (inside websocket.Accept), read after Accept returns.
}

// Unwrap lets http.ResponseController reach the server's writer.
func (g *closeGate) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// Hijack returns the connection wrapped in a gatedConn. Bytes the HTTP server
// had already read past the request headers go through the gate too: the
// returned bufio.Reader is empty, so websocket.Accept's own carry-over of
// buffered bytes (golang/go#32314) has nothing to bypass it with.
// devToolsSendBuffer fixes the kernel send buffer of a DevTools socket
// (Linux doubles it, and no longer autotunes it up to 4 MiB). What a window
// has not read then waits in the worker's own queue, where its bounds, the
// loss policy and the loss notices (which go ahead of that queue) apply,
// instead of in megabytes of kernel buffer that hid a stuck window and held
// a loss notice back by seconds behind ~13,000 older console messages.
// 256 KiB still takes a large answer in a few writes.
const devToolsSendBuffer = 256 << 10

func (g *closeGate) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(g.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	var raw syscall.RawConn
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(devToolsSendBuffer)
		raw, _ = tc.SyscallConn()
	}
	buffered, _ := brw.Reader.Peek(brw.Reader.Buffered())
	g.conn = &gatedConn{Conn: conn, raw: raw, pre: append([]byte(nil), buffered...), closed: make(chan struct{}), out: cork.New(conn.Write)}
	g.conn.br = bufio.NewReader(g.conn)
	// The server's writer is empty after Hijack (it flushed the 101
	// response); the library's writes go through the cork (sendLoop).
	return g.conn, bufio.NewReadWriter(g.conn.br, bufio.NewWriter(g.conn)), nil
}

// holdCloseWith makes the connection's close frame wait for hold. Without a
// hold (a refused session) the close frame passes at once.
func (g *closeGate) holdCloseWith(hold func(abort <-chan struct{})) {
	if g.conn != nil {
		g.conn.hold.Store(&hold)
	}
}

// gatedConn is a net.Conn whose Read stops at the start of the peer's close
// frame until its hold returns. Writes go through out, which passes them
// straight on except while sendLoop has it corked (internal/cork).
type gatedConn struct {
	net.Conn
	out *cork.Writer    // Static after construction.
	raw syscall.RawConn // Static after construction: nil unless TCP; for sendRoom (direct.go).
	br  *bufio.Reader   // Static after construction: the library reads through it; peeked only by its reader (readLoop).

	// Owned by Read: coder/websocket never reads from two goroutines at once
	// (its readMu).
	pre      []byte       // read from the socket (or the HTTP server's buffer) but not yet delivered
	preErr   error        // the socket's error that came with pre's bytes
	track    frameTracker // where the peer's frames begin
	released bool         // the close frame was let through; Read passes everything

	hold      atomic.Pointer[func(abort <-chan struct{})]
	closed    chan struct{} // closed by Close: aborts a hold
	closeOnce sync.Once
}

func (c *gatedConn) Read(p []byte) (int, error) {
	if c.released && len(c.pre) == 0 && c.preErr == nil {
		return c.Conn.Read(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	if len(c.pre) > 0 {
		n = copy(p, c.pre)
		c.pre = c.pre[n:]
	} else if c.preErr == nil {
		var err error
		n, err = c.Conn.Read(p)
		if n == 0 {
			return 0, err
		}
		c.preErr = err // delivered with the last of these bytes
	}
	if !c.released {
		if k, atClose := c.track.scan(p[:n]); atClose {
			if k > 0 {
				// Deliver what precedes the close frame; the rest waits.
				c.pre = append(append([]byte(nil), p[k:n]...), c.pre...)
				return k, nil
			}
			c.waitForRelease()
		}
	}
	if len(c.pre) == 0 && c.preErr != nil {
		err := c.preErr
		c.preErr = nil
		return n, err
	}
	return n, nil
}

// waitForRelease runs the hold (if any) before the close frame is delivered.
func (c *gatedConn) waitForRelease() {
	if h := c.hold.Load(); h != nil {
		(*h)(c.closed)
	}
	c.released = true
}

func (c *gatedConn) Write(p []byte) (int, error) { return c.out.Write(p) }

func (c *gatedConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// maxFrameHeader is the longest WebSocket frame header (RFC 6455 §5.2): 2
// bytes, a 64-bit extended length and a 4-byte mask key. It is all the
// tracker ever holds: payloads are counted, never buffered.
const maxFrameHeader = 2 + 8 + 4

const opClose = 0x8

// frameTracker follows the frame boundaries of a client→server WebSocket
// byte stream, fed in arbitrary pieces. It only needs to find where a close
// frame starts; the library validates everything else. A header the library
// will reject (a 64-bit length with the top bit set) makes the tracker give
// up: it then never gates, and the library fails the connection itself.
type frameTracker struct {
	hdr       [maxFrameHeader]byte
	have      int    // header bytes collected; 0 at a frame boundary
	remaining uint64 // payload bytes of the current frame still to skip
	broken    bool
}

// scan consumes p up to the start of a close frame. It returns the number of
// bytes consumed and whether a close frame starts right after them; the
// close frame's bytes are not consumed, so scanning them again stops at once.
func (t *frameTracker) scan(p []byte) (int, bool) {
	i := 0
	for i < len(p) && !t.broken {
		if t.remaining > 0 {
			step := uint64(len(p) - i)
			if step > t.remaining {
				step = t.remaining
			}
			t.remaining -= step
			i += int(step)
			continue
		}
		if t.have == 0 && p[i]&0x0F == opClose {
			return i, true
		}
		t.hdr[t.have] = p[i]
		t.have++
		i++
		if need := t.headerLen(); t.have == need {
			t.remaining = t.payloadLen()
			t.have = 0
		}
	}
	return len(p), false
}

// headerLen is the length of the header being collected, as far as its
// collected bytes tell (2 until the second byte is in).
func (t *frameTracker) headerLen() int {
	if t.have < 2 {
		return 2
	}
	n := 2
	switch t.hdr[1] & 0x7F {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if t.hdr[1]&0x80 != 0 {
		n += 4
	}
	return n
}

func (t *frameTracker) payloadLen() uint64 {
	switch l := t.hdr[1] & 0x7F; l {
	case 126:
		return uint64(binary.BigEndian.Uint16(t.hdr[2:4]))
	case 127:
		n := binary.BigEndian.Uint64(t.hdr[2:10])
		if n>>63 != 0 {
			t.broken = true
			return 0
		}
		return n
	default:
		return uint64(l)
	}
}

// messageBuffered reports whether the connection's read buffer already holds
// a whole single-frame data message, so the next read returns without
// waiting for the socket. readLoop asks between messages to know that more
// requests follow at once (it then holds their writes to Node for one
// syscall). A control frame or a fragment answers false: the library would
// read on past it.
func (c *gatedConn) messageBuffered() bool {
	b, _ := c.br.Peek(c.br.Buffered())
	return wholeDataFrame(b)
}

func wholeDataFrame(b []byte) bool {
	if len(b) < 2 || b[0]&0x80 == 0 { // FIN unset: a fragment
		return false
	}
	if op := b[0] & 0x0F; op != 0x1 && op != 0x2 {
		return false
	}
	var t frameTracker
	t.have = copy(t.hdr[:], b)
	need := t.headerLen()
	if len(b) < need {
		return false
	}
	payload := t.payloadLen()
	return !t.broken && uint64(len(b)-need) >= payload
}
