package pagerealm

import (
	"errors"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The Event Listeners pane (docs/agent-note.md "Event listeners"): the
// listeners of a page's node or window, named by the window's objectId (the
// frontend resolves the selected node and evaluates `self` in the node's
// page), asked of the page (client/js/listeners.mjs) as domListeners, a
// member of the Runtime union: the handlers' objects follow the Runtime's
// ack rules and join the object's group. The page finds each handler's
// place in its scripts; the worker names the script by its id in the
// window.

// GetEventListeners is DOMDebugger.getEventListeners.
var GetEventListeners DOM = func(h *Hub, w *Window, req Request, p *cdpDOMParams, _ *[][]byte) ([]byte, error) {
	if p.ObjectID == "" {
		return nil, errors.New("objectId is required")
	}
	n, handle, err := h.objectNodeLocked(w, p.ObjectID)
	if err != nil {
		return nil, err
	}
	// The handlers join the object's group, as Runtime.getProperties'
	// values do (the pane releases its group on every refresh).
	e, _ := w.objects.Entry(p.ObjectID)
	if p.Depth < -1 {
		return nil, errors.New("depth must be -1 (the whole subtree) or a positive integer")
	}
	return nil, h.domCallLocked(w, req, n, sourceproto.MethodDOMListeners,
		&sourceproto.DOMParams{Handle: handle, Depth: p.Depth, Pierce: p.Pierce, ObjectGroup: e.Group},
		func(call *runtimeCall, r *sourceproto.DOMResult, m *objectMapper) ([][]byte, []byte, error) {
			return nil, cdpproject.EventListenersAnswer(r.Listeners, m.values(), idsOf(call.domNS)), nil
		})
}
