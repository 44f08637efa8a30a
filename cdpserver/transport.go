package cdpserver

import (
	"context"

	"github.com/coder/websocket"
)

// transport is how a Session talks to its client: a DevTools window's own
// WebSocket (wsTransport), or a flat session on a browser connection
// (flatTransport, browser.go). Everything else about a Session — dispatch,
// the method table, its Node session, its bounded queue and the
// exactly-once answers — is the same for both, so a flat session on the
// combined target is exactly a window.
//
// Each method has one caller goroutine, as the Session's doc says.
type transport interface {
	// read returns the client's next request (readLoop only). An error
	// means the client is gone: the Session ends.
	read(ctx context.Context) ([]byte, error)
	// write sends one message to the client (sendLoop, or hostLoop holding
	// the writer token of a direct run). It must not keep msg: the slice
	// may be shared.
	write(ctx context.Context, msg []byte) error
	// close ends the client's side after the last message, with a status
	// and reason (sendLoop only).
	close(code websocket.StatusCode, reason string)
	// closeNow drops the client without a goodbye; any goroutine.
	closeNow()
}

// wsTransport is a DevTools window's WebSocket.
type wsTransport struct {
	conn *websocket.Conn // Static after construction.
	rd   msgReader       // Owned by readLoop.
}

func (t *wsTransport) read(ctx context.Context) ([]byte, error) { return t.rd.read(ctx, t.conn) }

func (t *wsTransport) write(ctx context.Context, msg []byte) error {
	return t.conn.Write(ctx, websocket.MessageText, msg)
}

func (t *wsTransport) close(code websocket.StatusCode, reason string) {
	t.conn.Close(code, truncate(reason, maxCloseReason))
}

func (t *wsTransport) closeNow() { t.conn.CloseNow() }
