package cdpserver

import (
	"fmt"
	"strings"

	"github.com/inspector-worker/inspector-worker/realm"
)

// The entry points the method table (methods.go) calls for answers that
// involve client realms. The hub does the work under its own lock.

// pageEnable and pageResourceTree answer under the hub's lock, so frame
// events and the tree agree.
func pageEnable(s *Session, req request) { s.srv.clients.pageRequest(s, req) }

func pageResourceTree(s *Session, req request) { s.srv.clients.pageRequest(s, req) }

// pageDisable stops the window's frame events.
func pageDisable(s *Session, req request) {
	s.srv.clients.setFlag(s, req.Method)
	s.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
}

// runtimeEnabled and debuggerEnabled run on the host's successful answer,
// before it is queued: the client contexts, console replay and scripts come
// first, as V8 does for its own.
func runtimeEnabled(s *Session, _ string) { s.srv.clients.runtimeEnabling(s) }

func debuggerEnabled(s *Session, _ string) { s.srv.clients.debuggerEnabling(s) }

// clientFlagOff runs on the host's successful answer to Runtime.disable or
// Debugger.disable.
func clientFlagOff(s *Session, method string) { s.srv.clients.setFlag(s, method) }

// discardClientConsole forgets the client replay buffers; the request is
// then relayed so the host discards its own.
func discardClientConsole(s *Session) { s.srv.clients.discardConsole() }

// evalSideEffectRefusal is what DevTools' eager evaluation expects when an
// expression cannot be evaluated without side effects; a CDP error instead
// would log an error per keystroke.
const evalSideEffectRefusal = `{"result":{"type":"object","subtype":"error","className":"EvalError","description":"EvalError: Possible side-effect in debug-evaluate"},` +
	`"exceptionDetails":{"exceptionId":0,"text":"Uncaught","lineNumber":0,"columnNumber":0,` +
	`"exception":{"type":"object","subtype":"error","className":"EvalError","description":"EvalError: Possible side-effect in debug-evaluate"}}}`

// clientRuntime answers Runtime requests routed to a client realm. The client
// Runtime backend (live objects, evaluation in the page) is not part of this
// version: requests get explicit answers that keep the frontend quiet and
// tell the user what is missing.
func (sess *Session) clientRuntime(req request, r *realm.Realm) {
	switch req.Method {
	case "Runtime.evaluate":
		if strings.Contains(string(req.Params), `"throwOnSideEffect":true`) {
			sess.enqueue(appendResult(nil, req.ID, []byte(evalSideEffectRefusal)))
			return
		}
	case "Runtime.globalLexicalScopeNames":
		sess.enqueue(appendResult(nil, req.ID, []byte(`{"names":[]}`)))
		return
	}
	sess.refuse(req, &wireError{codeServerError, fmt.Sprintf(
		"%s in the page %q is not supported yet: inspector-worker shows client pages' console and scripts; "+
			"evaluating in a page comes with the client Runtime backend", req.Method, r.Name)})
}
