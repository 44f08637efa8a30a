package cdpserver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/pagerealm"
)

// maxOpenRedials bounds how often an opening window dials Node again
// because the host was swapped (watch mode) while it dialled. Each redial
// needs a whole host restart during one dial (a restart takes a process
// start, seconds; a dial milliseconds), so one is already rare; past three
// the window is closed with a reason rather than chasing the host.
const maxOpenRedials = 3

// dialWindow takes a window slot (reserveWindow) and dials a Node session
// for a new window, outside swapMu: a Node that takes long to answer delays
// this window only, never another's upgrade nor a host swap. On failure host
// is nil and status (an HTTP status) and reason say why; the slot is given
// back. On success registerWindow takes the slot over.
func (s *Server) dialWindow(ctx context.Context) (host *websocket.Conn, batch *hostnode.SessionIO, gen uint64,
	status int, reason string) {
	if reason := s.reserveWindow(); reason != "" {
		return nil, nil, 0, http.StatusServiceUnavailable, reason
	}
	cur, gen, down := s.currentHostGen()
	if cur == nil {
		s.releaseWindow()
		return nil, nil, 0, http.StatusServiceUnavailable,
			"the Node host is not running (" + down + "); save a watched file to restart it, then reconnect"
	}
	batch = new(hostnode.SessionIO)
	host, err := cur.OpenSession(hostnode.WithSessionIO(ctx, batch))
	if err != nil {
		s.releaseWindow()
		return nil, nil, 0, http.StatusBadGateway, "cannot open a session to the Node host: " + err.Error()
	}
	host.SetReadLimit(maxHostMessageLimit)
	return host, batch, gen, 0, ""
}

// registerWindow binds an upgraded window to the Node session dialled for
// host generation gen and registers it, under swapMu so a host swap sees
// it or happens before it. The dial and the upgrade happened outside
// swapMu (no network I/O under it); if the host was swapped meanwhile, the
// session is for a host that is gone: it is closed, and a new one is
// dialled, again outside swapMu, to the host that replaced it. A host that
// is down now binds the window without host, as a window open across
// HostDown would be: it is told why and waits for HostUp. The window slot
// is released in every case; nil means the window must be closed with the
// returned reason.
func (s *Server) registerWindow(ctx context.Context, gen uint64, tr transport, dt *websocket.Conn, wire *gatedConn,
	host *websocket.Conn, batch *hostnode.SessionIO) (*Session, string) {
	for redials := 0; ; redials++ {
		s.swapMu.Lock()
		cur, now, down := s.currentHostGen()
		if now == gen || cur == nil {
			sess, closing := s.addSession(s.newSessionFunc(tr, dt, wire, host, batch))
			if sess != nil && now != gen {
				sess.detachHost(nil, down) // as HostDown would have; closes host without blocking
			}
			s.swapMu.Unlock()
			if sess == nil {
				hostnode.CloseSession(host)
			}
			return sess, closing
		}
		s.swapMu.Unlock()
		hostnode.CloseSession(host) // dialled for a host that was replaced
		if redials == maxOpenRedials {
			s.releaseWindow()
			return nil, fmt.Sprintf("the Node host restarted %d times while this window was opening; reconnect", redials+1)
		}
		batch = new(hostnode.SessionIO)
		var err error
		host, err = cur.OpenSession(hostnode.WithSessionIO(ctx, batch))
		if err != nil {
			s.releaseWindow()
			return nil, "cannot open a session to the restarted Node host: " + err.Error() + "; reconnect"
		}
		host.SetReadLimit(maxHostMessageLimit)
		gen = now
	}
}

// newSessionFunc builds the Session addSession registers.
func (s *Server) newSessionFunc(tr transport, dt *websocket.Conn, wire *gatedConn, host *websocket.Conn,
	batch *hostnode.SessionIO) func(id int64) *Session {
	return func(id int64) *Session {
		sess := &Session{
			srv: s, id: id, tr: tr, dt: dt, wire: wire, host: host, hostIO: batch,
			out:      newSendQueue(s.opts.MaxQueuedMessages, s.opts.MaxQueuedBytes),
			objects:  object.NewTable(),
			pending:  map[int64]string{},
			progress: make(chan struct{}, 1),
			sendDone: make(chan struct{}),
			rebound:  make(chan struct{}, 1),
			dtGone:   make(chan struct{}),
			watch:    newWatchState(s.opts.Watch),
			threads:  newThreadTable(),
			children: newChildTable(),
			native:   newNativeTable(),
		}
		sess.net = s.network.NewWindow(networkOutput{sess})
		sess.page = pagerealm.NewWindow(id, sess.objects, pageSink{sess}, sess.sendDone)
		return sess
	}
}
