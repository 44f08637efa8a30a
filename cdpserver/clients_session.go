package cdpserver

import (
	"fmt"
	"strings"

	"github.com/inspector-worker/inspector-worker/realm"
)

// pageMethods are the Page methods clientRequest answers.
var pageMethods = []string{"Page.enable", "Page.disable", "Page.getResourceTree"}

// clientRequest intercepts the requests whose answer involves client realms.
// It reports whether it answered.
func (sess *Session) clientRequest(req request) bool {
	h := sess.srv.clients
	switch req.Method {
	case "Page.enable", "Page.getResourceTree":
		h.pageRequest(sess, req)
		return true
	case "Page.disable":
		h.setFlag(sess, req.Method)
		sess.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
		return true
	case "Runtime.discardConsoleEntries":
		h.discardConsole()
		return false // the host discards its own too
	}
	if strings.HasPrefix(req.Method, "Debugger.") {
		return h.clientScriptRequest(sess, req)
	}
	return false
}

// hostAnswered runs on the host's answer to a relayed request, before that
// answer is queued: enabling Runtime or the Debugger brings the client
// contexts, console replay and scripts first, as V8 does for its own.
func (sess *Session) hostAnswered(method string, answer []byte) {
	switch method {
	case "Runtime.enable", "Debugger.enable", "Runtime.disable", "Debugger.disable":
	default:
		return
	}
	if _, _, isError := findMember(answer, "error"); isError {
		return
	}
	h := sess.srv.clients
	switch method {
	case "Runtime.enable":
		h.runtimeEnabling(sess)
	case "Debugger.enable":
		h.debuggerEnabling(sess)
	default:
		h.setFlag(sess, method)
	}
}

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
