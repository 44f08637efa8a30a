package cdpserver

import (
	"bytes"
	"fmt"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/internal/cdpwire"
	"github.com/inspector-worker/inspector-worker/pagerealm"
	"github.com/inspector-worker/inspector-worker/realm"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// realmBackend serves the routed requests (methods.go, answerRouted) of
// every realm of one kind, by the realm's column of the method table. The
// dispatcher never asks "is this the host?": it asks the registry which
// realm owns the request's id and hands the request to that realm kind's
// backend, after refusing what the column refuses (a client script's
// Debugger methods are refused by the pages' column, pagerealm.Hub.ScriptRequest).
//
// The interface lives here rather than in package realm because a backend
// answers on a Session (sockets are cdpserver's); realm keeps the
// descriptions and the routing tables.
type realmBackend interface {
	// serve answers req, addressed to realm r, exactly once.
	serve(sess *Session, req request, msg []byte, e methodEntry, r *realm.Realm)
}

// hostBackend is the Node host: its Runtime, Console, Sources and Debugger
// slots are all the window's own Node inspector session, so serving is the
// byte-exact relay (see agent-note "Relay rules").
type hostBackend struct{}

// clientObjectRef marks a table-owned objectId as a JSON member value:
// `"objectId":"iw:…"`, `"promiseObjectId":"iw:…"` or an argument's. Inside a
// JSON string (an expression that mentions one) the quotes are escaped, so
// the raw bytes only match real structure; and only members named …ObjectId
// match, so an expression that starts with "iw:" (a label) still reaches Node.
var clientObjectRef = []byte(`bjectId":"iw:`)

func (hostBackend) serve(sess *Session, req request, msg []byte, e methodEntry, _ *realm.Realm) {
	// A page's objectId never reaches Node: V8 would answer "Could not find
	// object", which hides that the user mixed realms.
	if bytes.Contains(req.Params, clientObjectRef) {
		sess.refuse(req, &wireError{codeServerError, fmt.Sprintf(
			"%s names an object of a client page; page objects cannot be passed to the Node host "+
				"(evaluate in the page's context instead)", req.Method)})
		return
	}
	if e.hostParams != nil && req.Params != nil {
		msg = cdpwire.ReplaceParams(msg, e.hostParams(req.Params))
	}
	sess.relay(req, msg)
}

// clientBackend is every browser page: package pagerealm. Its Runtime is
// the page agent over sourceproto (the table's pageAgent entries name the
// handlers), its script reads are reached before routing by script id
// (Hub.ScriptRequest), and debugging is refused by the table's pages'
// column.
type clientBackend struct{ hub *pagerealm.Hub }

func (b clientBackend) serve(sess *Session, req request, _ []byte, e methodEntry, r *realm.Realm) {
	if e.page.Answer == pageAgent {
		b.hub.RuntimeRequest(sess.page, toPage(req), r, e.page.Runtime)
		return
	}
	sess.refuse(req, &wireError{codeServerError, fmt.Sprintf("%s is not served for the page %q", req.Method, r.Name)})
}

// backend returns the backend of a realm kind.
func (s *Server) backend(k realm.Kind) realmBackend {
	if k == realm.KindClient {
		return clientBackend{s.clients}
	}
	return hostBackend{}
}

// toPage is req as the page backend takes it.
func toPage(req request) pagerealm.Request {
	return pagerealm.Request{ID: req.ID, Method: req.Method, Params: req.Params}
}

// pageServer is what the page backend needs of the server.
type pageServer struct{ s *Server }

// Windows lists the open windows; the hub holds its lock (Hub.mu →
// Server.mu).
func (h pageServer) Windows() []*pagerealm.Window {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	out := make([]*pagerealm.Window, 0, len(h.s.sessions))
	for sess := range h.s.sessions {
		out = append(out, sess.page)
	}
	return out
}

func (h pageServer) Logf(format string, args ...any) { h.s.logf(format, args...) }

func (h pageServer) ResourceTree(children []cdpproject.FrameTree) []byte {
	return h.s.resourceTree(children)
}

// pageSink is a window's queue as the page backend reaches it.
type pageSink struct{ s *Session }

func (p pageSink) Enqueue(msg []byte)         { p.s.enqueue(msg) }
func (p pageSink) PushLossy(msg []byte) bool  { return p.s.out.pushLossy(msg) }
func (p pageSink) PushFront(msg []byte) error { return p.s.out.pushFront(msg) }
func (p pageSink) Pushed() int64              { return p.s.out.pushedCount() }
func (p pageSink) Written() int64             { return p.s.out.writtenCount() }

func (p pageSink) Refuse(req pagerealm.Request, code int, message string) {
	p.s.refuse(request{ID: req.ID, Method: req.Method, Params: req.Params}, &wireError{code, message})
}

// ClientConsumer is the sourceproto.Consumer that projects client pages into
// every DevTools window. Create the sourceproto.Registry with it, then hand
// the registry back with SetSourceRegistry (the hub sends script reads).
func (s *Server) ClientConsumer() sourceproto.Consumer { return s.clients }

// SetSourceRegistry gives the page backend the registry it sends worker →
// page frames through.
func (s *Server) SetSourceRegistry(reg *sourceproto.Registry) { s.clients.SetRegistry(reg) }

// The method table's entry points into the page backend: each converts the
// window and the request; the hub does the work under its own lock.

// pageEnable and pageResourceTree answer under the hub's lock, so frame
// events and the tree agree.
func pageEnable(s *Session, req request) { s.srv.clients.PageEnable(s.page, toPage(req)) }

func pageResourceTree(s *Session, req request) { s.srv.clients.ResourceTree(s.page, toPage(req)) }

// pageDisable stops the window's frame events.
func pageDisable(s *Session, req request) { s.srv.clients.PageDisable(s.page, toPage(req)) }

// pageGetResourceContent reads a page's document from the page.
func pageGetResourceContent(s *Session, req request) {
	s.srv.clients.GetResourceContent(s.page, toPage(req))
}

// domPerformSearch, domGetSearchResults and domDiscardSearchResults are
// the pages' search in Elements (pagerealm/dom_search.go).
func domPerformSearch(s *Session, req request) { s.srv.clients.PerformSearch(s.page, toPage(req)) }

func domGetSearchResults(s *Session, req request) {
	s.srv.clients.GetSearchResults(s.page, toPage(req))
}

func domDiscardSearchResults(s *Session, req request) {
	s.srv.clients.DiscardSearchResults(s.page, toPage(req))
}

// runtimeEnabled runs once the host's successful answer to Runtime.enable
// is queued: the client contexts and console replay follow the answer.
func runtimeEnabled(s *Session) { s.srv.clients.RuntimeEnabled(s.page) }

// debuggerEnabled runs on the host's successful answer, before it is
// queued: the client scripts come first, as V8 does for its own.
func debuggerEnabled(s *Session, _ string) { s.srv.clients.DebuggerEnabled(s.page) }

// clientFlagOff runs on the host's successful answer to Runtime.disable or
// Debugger.disable.
func clientFlagOff(s *Session, method string) {
	if method == "Runtime.disable" {
		s.srv.clients.RuntimeDisabled(s.page)
		return
	}
	s.srv.clients.DebuggerDisabled(s.page)
}

// discardClientConsole forgets the client replay buffers and the window's
// page console objects; the request is then relayed so the host discards
// its own.
func discardClientConsole(s *Session, _ request) { s.srv.clients.DiscardConsole(s.page) }

// releaseClientGroup releases the window's page objects of the group in
// their pages before the request goes to the host.
func releaseClientGroup(s *Session, req request) {
	s.srv.clients.ReleaseObjectGroup(s.page, toPage(req))
}
