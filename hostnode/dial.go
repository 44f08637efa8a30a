package hostnode

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/internal/cork"
)

// MaxHostMessage bounds one message read from Node's inspector. The 32 KiB
// default of coder/websocket is far too small: Debugger.getScriptSource
// returns a whole script (bundles of 50 MB exist and must pass), and
// HeapProfiler chunks and Runtime results can be large too. 256 MiB still
// stops a runaway peer before it exhausts memory.
const MaxHostMessage = 256 << 20

// hostTransport is the HTTP client under every connection to Node: no proxy
// (the inspector must never be reached through, or revealed to, a proxy), no
// redirects, no keep-alive (an idle socket to the inspector has no use), and
// a dialer that re-checks that the peer really is loopback.
func hostTransport(dial func(context.Context, string, string) (net.Conn, error)) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:              nil,
			DialContext:        dial,
			DisableKeepAlives:  true,
			DisableCompression: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

var (
	dialClient     = hostTransport(dialQuickAck)
	discoverClient = hostTransport(dialLoopback)
)

// Dial opens a NEW WebSocket session to a Node inspector URL the way Node's
// inspector wants it: Host: HOST:PORT exactly as in the URL (Node rejects
// other Host values to stop DNS rebinding), no compression, a read limit of
// MaxHostMessage. The library never pings on its own; callers must not call
// Conn.Ping either, nor write with Conn.Writer (fragmented frames) or binary
// messages: Node drops a session that receives any of them.
//
// The TCP connection re-arms TCP_QUICKACK after every Read (Linux): Node's
// inspector socket does not set TCP_NODELAY, so without a prompt ACK from us
// the last small answer of a pipelined burst waits ~40 ms for our delayed ACK.
func Dial(ctx context.Context, wsURL string) (*websocket.Conn, error) {
	_, hostport, needsDiscover, err := ParseInspectorAddr(wsURL)
	if err != nil {
		return nil, err
	}
	if needsDiscover {
		return nil, fmt.Errorf("%w %q: Dial needs the ws:// URL node printed; resolve HOST:PORT with Discover first", ErrBadAddr, wsURL)
	}
	// Node prints "Debugger attached." for the session; announce it first,
	// so that the stderr banner filters of that node drop exactly that line.
	undoAttach := attachWatchers.announceAttach(wsURL)
	conn, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{
		HTTPClient:      dialClient,
		Host:            hostport,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		undoAttach()
		return nil, fmt.Errorf("hostnode: dial node inspector %s: %w", wsURL, err)
	}
	conn.SetReadLimit(MaxHostMessage)
	if slot, ok := ctx.Value(batchKey{}).(*SessionIO); ok {
		slot.handshakeDone()
	}
	return conn, nil
}

// dialLoopback dials and then refuses a peer that is not loopback: a name
// like localhost passed the address check, but the resolver decides where it
// points.
func dialLoopback(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if ta, ok := conn.RemoteAddr().(*net.TCPAddr); !ok || !ta.IP.IsLoopback() {
		conn.Close()
		return nil, fmt.Errorf("%w: %s resolved to %v", ErrNotLoopback, addr, conn.RemoteAddr())
	}
	return conn, nil
}

func dialQuickAck(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := dialLoopback(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return conn, nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return conn, nil
	}
	rearmQuickAck(raw)
	qc := &quickAckConn{Conn: conn, raw: raw, out: cork.New(conn.Write)}
	if slot, ok := ctx.Value(batchKey{}).(*SessionIO); ok {
		slot.w, slot.c = qc.out, qc
	}
	return qc, nil
}

// quickAckConn re-arms TCP_QUICKACK after every Read: Linux leaves quick-ACK
// mode again on its own (it is a hint, not a setting), so one setsockopt at
// dial time would help only the first burst.
type quickAckConn struct {
	net.Conn
	raw syscall.RawConn // Static after construction.
	out *cork.Writer    // Static after construction: writes go through it (SessionIO).

	frames frameLens // Node's frame headers, for SessionIO (MoreBuffered, NextLen)
}

func (c *quickAckConn) Write(p []byte) (int, error) { return c.out.Write(p) }

func (c *quickAckConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.frames.feed(b[:n])
		rearmQuickAck(c.raw)
	}
	return n, err
}

// closeHandshakeWait bounds how long CloseSession waits for Node's answer to
// its close frame. Node usually answers at once; while it is exiting it may
// never answer, and the library's own wait (5 s) would hold the exit up.
const closeHandshakeWait = 500 * time.Millisecond

// CloseSession ends a session dialled with Dial without blocking the caller:
// a WebSocket close frame first (Node 20 sometimes crashed with SIGSEGV, exit
// 139, when sessions were dropped abruptly while it was exiting), then an
// abrupt close if Node has not answered within closeHandshakeWait.
func CloseSession(c *websocket.Conn) {
	go func() {
		done := make(chan struct{})
		go func() {
			_ = c.Close(websocket.StatusNormalClosure, "")
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(closeHandshakeWait):
			_ = c.CloseNow()
		}
	}()
}
