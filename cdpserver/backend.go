package cdpserver

import (
	"bytes"
	"fmt"

	"github.com/inspector-worker/inspector-worker/realm"
)

// realmBackend serves the routed requests (methods.go, answerRouted) of
// every realm of one kind, by the realm's column of the method table. The
// dispatcher never asks "is this the host?": it asks the registry which
// realm owns the request's id and hands the request to that realm kind's
// backend, after refusing what the column refuses (a client script's
// Debugger methods are refused by the pages' column, clientScriptRequest).
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
		msg = replaceParams(msg, e.hostParams(req.Params))
	}
	sess.relay(req, msg)
}

// clientBackend is every browser page: its Runtime slot is the page agent
// over sourceproto (clients_runtime.go, the table's pageAgent entries), its
// script reads are reached before routing by script id
// (clients_scripts.go), and debugging is refused by the table's pages'
// column.
type clientBackend struct{ hub *clientHub }

func (b clientBackend) serve(sess *Session, req request, _ []byte, e methodEntry, r *realm.Realm) {
	if e.page.answer == pageAgent {
		b.hub.runtimeRequest(sess, req, r)
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
