package cdpserver

import (
	"fmt"

	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/realm"
)

// handleInPage answers one request of a page target's session by the
// method table's page-target column (targetEntryOf): one lookup, one
// switch, exactly one answer, as handle does for the combined target.
func (sess *Session) handleInPage(req request) {
	if req.SessionID != "" {
		sess.refuse(req, &wireError{codeServerError, fmt.Sprintf(
			"%s: a page target has no child sessions (sessionId %s); its page's workers are not attached", req.Method, quoteShort(req.SessionID))})
		return
	}
	e, ok := targetEntryOf(req.Method)
	if !ok {
		sess.refuse(req, notFound(req.Method))
		return
	}
	sess.answer(req, e, func() { sess.routeInPage(req, e) })
}

// routeInPage sends a Runtime request to the page by the entry's pages'
// column, after checking that every id it names is the page's own.
func (sess *Session) routeInPage(req request, e methodEntry) {
	r, err := sess.pageRealmFor(req)
	if err != nil {
		sess.refuse(req, &wireError{codeServerError, req.Method + ": " + err.Error()})
		return
	}
	switch e.page.Answer {
	case pageAgent:
		sess.srv.clients.RuntimeRequest(sess.page, toPage(req), r, e.page.Runtime)
	case pageLiteral:
		sess.enqueue(appendResult(nil, req.ID, []byte(e.page.Result)))
	case pageRefusal:
		err := &realm.UnsupportedError{Realm: r.ID, Method: req.Method, Reason: e.page.Reason}
		sess.refuse(req, &wireError{codeServerError, err.Error()})
	default:
		sess.refuse(req, &wireError{codeServerError, fmt.Sprintf("%s is not served on a page target", req.Method)})
	}
}

// pageRealmFor is the realm a page target's request addresses: the page's
// current load, whether named by its context (id or unique id), by one of
// its objects, or by nothing (the default context). Any other realm's id is
// refused with the reason: a page target never reaches the host or another
// page.
func (sess *Session) pageRealmFor(req request) (*realm.Realm, error) {
	own, err := sess.srv.clients.TargetRealm(sess.page)
	p := routingParams{}
	if req.Params != nil {
		p = scanRoutingParams(req.Params)
	}
	reg := sess.srv.registry
	switch {
	case p.objectID != "":
		if !object.Owns(p.objectID) {
			return nil, fmt.Errorf("object %s is not this page's: a page target holds its page's objects only "+
				"(the Node host's and other targets' objects are not reachable from it)", quoteShort(p.objectID))
		}
		h, ok := sess.objects.Lookup(p.objectID)
		if !ok {
			return nil, fmt.Errorf("could not find object with given id %s in this page target's session "+
				"(objects are per session: another session's or another page's ids are unknown here)", quoteShort(p.objectID))
		}
		if err != nil {
			return nil, err
		}
		if h.Realm != own.ID {
			return nil, fmt.Errorf("object %s belongs to an earlier load of the page: its objects went with it", quoteShort(p.objectID))
		}
	case p.uniqueID != "" || p.contextID != nil:
		r, rerr := reg.Route(p.contextID, p.uniqueID)
		if err != nil {
			return nil, err
		}
		if rerr != nil || r != own {
			return nil, fmt.Errorf("execution context %s is not this page's current context: a page target sees its page's "+
				"context only (omit contextId for the page's default context)", contextName(p))
		}
	}
	return own, err
}

func contextName(p routingParams) string {
	if p.uniqueID != "" {
		return quoteShort(p.uniqueID)
	}
	return fmt.Sprint(*p.contextID)
}

// The page-target column's own handlers (methods.go names them).

// targetRuntimeEnable: the page's context and its console replay follow
// the answer, as on the combined target.
func targetRuntimeEnable(s *Session, req request) {
	s.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
	s.srv.clients.RuntimeEnabled(s.page)
}

// targetRuntimeDisable stops the page's console for the session and
// releases its objects.
func targetRuntimeDisable(s *Session, req request) {
	s.srv.clients.RuntimeDisabled(s.page)
	s.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
}

// targetDiscardConsole forgets the session's console objects; the page's
// replay buffer is the combined target's too, and stays.
func targetDiscardConsole(s *Session, req request) {
	s.srv.clients.DiscardConsoleObjects(s.page)
	s.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
}

func targetReleaseGroup(s *Session, req request) {
	s.srv.clients.ReleaseObjectGroup(s.page, toPage(req))
	s.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
}

func targetFrameTree(s *Session, req request) {
	s.srv.clients.TargetFrameTree(s.page, toPage(req), false)
}

func targetResourceTree(s *Session, req request) {
	s.srv.clients.TargetFrameTree(s.page, toPage(req), true)
}

func targetLifecycle(s *Session, req request) { s.srv.clients.SetLifecycleEvents(s.page, toPage(req)) }

// targetNavigate is answered when the page's next load connects (with its
// loaderId), or with an error once the client Runtime deadline passes.
func targetNavigate(s *Session, req request) {
	s.srv.clients.Navigate(s.page, toPage(req), s.srv.opts.ClientRuntimeTimeout)
}

// targetReload runs location.reload() in the page and answers at once, as
// Chrome answers before the new load.
func targetReload(s *Session, req request) {
	if err := s.srv.clients.PageEval(s.page, req.Method, "void location.reload()", nil); err != nil {
		s.refuse(req, &wireError{codeServerError, err.Error()})
		return
	}
	s.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
}

// targetCreateWorld: a named world is the page's own world under a context
// of its own (pagerealm/pageworld.go): a JavaScript agent cannot make
// another.
func targetCreateWorld(s *Session, req request) {
	s.srv.clients.CreateIsolatedWorld(s.page, toPage(req))
}

func targetAddNewDocScript(s *Session, req request) {
	s.srv.clients.AddNewDocumentScript(s.page, toPage(req))
}

func targetRemoveNewDocScript(s *Session, req request) {
	s.srv.clients.RemoveNewDocumentScript(s.page, toPage(req))
}

// notOnPageTarget is the refusal of a Node domain on a page target.
func notOnPageTarget(domain string) string {
	return "a page target is a browser page reached through its JavaScript agent: it has no " + domain +
		" domain (the Node host's " + domain + " is on the first target of /json/list)"
}

// jsAgentCannot is the refusal of what only a browser's own debugger can
// do, naming the limit.
func jsAgentCannot(what string) string {
	return "a page target is reached through a JavaScript agent in the page, which cannot " + what +
		"; a browser with its own debugging port can"
}
