package cdpserver

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/coder/websocket"
	"golang.org/x/sync/errgroup"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/fetchcapture"
	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/pagerealm"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Page targets (docs/agent-note.md "Page targets"): besides the combined
// target (the host and every page, as the DevTools window shows them),
// each connected page is a "page" target of its own, listed in /json/list
// with its own webSocketDebuggerUrl, whose sessions see that page alone:
// its Runtime (the default context is the page's), console, Network, DOM
// and frame; the host's and the other pages' ids are refused by name. The
// method table's page-target column (methods.go, targetEntryOf) says what
// each method does there; pagetarget_dispatch.go routes by it.
//
// A page target's session has no Node session: it is a Session whose
// scope is set and whose host is nil, run by runPage (no hostLoop). It
// survives its page's reloads and navigations (the target id is the page's
// frame id, which the hub keeps across them) and is closed when the page
// target ends (the page closed and did not come back within the hub's
// grace).

// pageScope is what a page target's session is scoped to. Static.
type pageScope struct {
	targetID string // the page target's id (the page's frame id)
	sourceID string // the page's source id (pagerealm.Window.Target)
}

// pageTargetInfo is one page target, for discovery and for the browser
// endpoint's Target domain.
type pageTargetInfo struct {
	ID    string
	URL   string
	Title string
	// Attached: a load of the page is connected now (false while it
	// reloads or navigates; the target stays).
	Attached bool
	sourceID string
}

// pageTargets lists the page targets, in the order their pages first
// connected. The browser endpoint reads it again whenever
// pageTargetsChanged's channel is closed.
func (s *Server) pageTargets() []pageTargetInfo {
	pts := s.clients.PageTargets()
	out := make([]pageTargetInfo, 0, len(pts))
	for _, p := range pts {
		out = append(out, toTargetInfo(p))
	}
	return out
}

// pageTargetsChanged returns a channel closed at the next change of the
// page targets (one appears, reloads, is renamed or navigates, ends): the
// hook a Target.setDiscoverTargets watcher waits on before it reads
// pageTargets again (targetCreated, targetInfoChanged, targetDestroyed).
func (s *Server) pageTargetsChanged() <-chan struct{} { return s.clients.TargetsChanged() }

// pageTarget is the page target with id.
func (s *Server) pageTarget(id string) (pageTargetInfo, bool) {
	p, ok := s.clients.PageTargetByID(id)
	return toTargetInfo(p), ok
}

func toTargetInfo(p pagerealm.PageTarget) pageTargetInfo {
	return pageTargetInfo{ID: p.ID, URL: p.URL, Title: p.Title, Attached: p.Connected, sourceID: p.SourceID}
}

// pageTargetJSON is a page target as /json/list lists it.
func (s *Server) pageTargetJSON(hostport string, p pageTargetInfo) targetJSON {
	ws := hostport + "/devtools/page/" + p.ID
	return targetJSON{
		Description:          "inspector-worker: a page of the app, on its own (the host and the other pages are on the first target)",
		DevtoolsFrontendURL:  "devtools://devtools/bundled/devtools_app.html?ws=" + ws,
		ID:                   p.ID,
		Title:                p.Title,
		Type:                 "page",
		URL:                  p.URL,
		WebSocketDebuggerURL: "ws://" + ws,
	}
}

// handlePageTarget upgrades a DevTools connection to a page target. The
// caller checked the Origin.
func (s *Server) handlePageTarget(w http.ResponseWriter, r *http.Request, pt pageTargetInfo) {
	if reason := s.reserveWindow(); reason != "" {
		s.logf("refused DevTools connection to page target %s from %s: %s", pt.ID, r.RemoteAddr, reason)
		http.Error(w, reason, http.StatusServiceUnavailable)
		return
	}
	gate := &closeGate{ResponseWriter: w}
	dt, err := websocket.Accept(gate, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // originProblem checked it, with a reason the user can read
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		s.releaseWindow()
		return
	}
	dt.SetReadLimit(maxDevToolsMessage)
	sess, closing := s.registerPageSession(pt, func(sess *Session) { sess.tr, sess.dt, sess.wire = &wsTransport{conn: dt}, dt, gate.conn })
	if sess == nil {
		dt.Close(websocket.StatusGoingAway, truncate(closing, maxCloseReason))
		return
	}
	defer s.removeSession(sess)
	gate.holdCloseWith(sess.awaitAnswersWritten)
	s.logf("DevTools connection %d opened on page target %s (%s)", sess.id, pt.ID, r.RemoteAddr)
	sess.run()
	s.logf("DevTools connection %d closed", sess.id)
}

// openPageSession registers a session on the page target with id whose
// client attach sets (the Session's transport fields: a window's socket,
// or the browser endpoint's flat session), not yet running: the caller
// runs it (Session.run) and removes it when it ends (removeSession). It
// takes one of the MaxWindows slots. An error says why not, for the client.
func (s *Server) openPageSession(id string, attach func(*Session)) (*Session, error) {
	pt, ok := s.pageTarget(id)
	if !ok {
		return nil, fmt.Errorf("no page target with id %s (the page closed); see Target.getTargets", quoteShort(id))
	}
	if reason := s.reserveWindow(); reason != "" {
		return nil, errors.New(reason)
	}
	sess, closing := s.registerPageSession(pt, attach)
	if sess == nil {
		return nil, errors.New(closing)
	}
	return sess, nil
}

// registerPageSession turns a reserved window slot into a page target's
// session (addSession releases the slot either way).
func (s *Server) registerPageSession(pt pageTargetInfo, attach func(*Session)) (*Session, string) {
	return s.addSession(func(id int64) *Session {
		sess := s.newPageSession(id, pt)
		attach(sess)
		return sess
	})
}

// newPageSession builds a session on page target pt, without its client
// (registerPageSession's attach sets it). It has no Node session.
func (s *Server) newPageSession(id int64, pt pageTargetInfo) *Session {
	sess := &Session{
		srv: s, id: id,
		out:      newSendQueue(s.opts.MaxQueuedMessages, s.opts.MaxQueuedBytes),
		objects:  object.NewTable(),
		pending:  map[int64]string{},
		progress: make(chan struct{}, 1),
		sendDone: make(chan struct{}),
		rebound:  make(chan struct{}, 1),
		dtGone:   make(chan struct{}),
		threads:  newThreadTable(),
		children: newChildTable(),
		native:   newNativeTable(), // empty: native pages attach to the combined target only
		downWhy:  "a page target has no Node session",
		scope:    &pageScope{targetID: pt.ID, sourceID: pt.sourceID},
	}
	src := pt.sourceID
	sess.net = s.network.NewWindowOf(networkOutput{sess}, func(r *fetchcapture.Request) bool {
		return r.Source.Role == sourceproto.RoleClient && r.Source.ID == src
	})
	sess.page = pagerealm.NewPageWindow(id, sess.objects, pageSink{sess}, sess.sendDone, src)
	return sess
}

// runPage runs a page target's session (Session.run): its reader and
// writer, and a watcher that closes it when the target ends.
func (sess *Session) runPage() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		sess.guard("targetWatch", false, sess.watchPageTarget)
	}()
	var g errgroup.Group
	g.Go(func() error { sess.guard("sendLoop", true, sess.sendLoop); return nil })
	g.Go(func() error { sess.guard("readLoop", false, sess.readLoop); return nil })
	g.Wait()
	<-done
	if t := sess.watchdog.Load(); t != nil {
		t.Stop()
	}
}

// watchPageTarget closes the session once its page target is gone, with
// the reason as the close frame's (every request of the session was
// answered by then: the hub fails a page's calls when it closes).
func (sess *Session) watchPageTarget() {
	for {
		changed := sess.srv.pageTargetsChanged()
		if _, ok := sess.srv.pageTarget(sess.scope.targetID); !ok {
			sess.out.close(&closeState{websocket.StatusGoingAway, "the page closed: its target is gone"})
			return
		}
		select {
		case <-changed:
		case <-sess.dtGone:
			return
		}
	}
}

// targetInfoAnswer is Target.getTargetInfo on a page target.
func targetInfoAnswer(s *Session, req request) {
	pt, ok := s.srv.pageTarget(s.scope.targetID)
	if !ok {
		s.refuse(req, &wireError{codeServerError, "the page of this target has gone (it closed)"})
		return
	}
	s.enqueue(appendResult(nil, req.ID, cdpproject.TargetInfo(pt.ID, pt.Title, pt.URL)))
}
