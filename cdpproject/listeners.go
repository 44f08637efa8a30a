package cdpproject

import (
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domdebugger"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// noScript is V8's id for "no script" (v8::UnboundScript::kNoScriptId):
// what Chrome sends for a handler without a script position, and what a
// window gets for a handler whose place the page could not find for sure
// or whose script it knows no id for (the page's inline scripts).
const noScript cdp.ScriptID = "0"

type eventListenersAnswer struct {
	Listeners []*domdebugger.EventListener `json:"listeners"`
}

// EventListenersAnswer is DOMDebugger.getEventListeners' answer: the
// page's listeners with the window's objectIds and scriptIds, and the
// window's node ids (id) for listeners below the object asked about.
func EventListenersAnswer(ls []sourceproto.DOMListener, v *Values, id NodeIDs) []byte {
	out := make([]*domdebugger.EventListener, 0, len(ls))
	for i := range ls {
		l := &ls[i]
		e := &domdebugger.EventListener{Type: l.Type, UseCapture: l.UseCapture, Passive: l.Passive, Once: l.Once,
			ScriptID: noScript, Handler: v.RemoteObject(l.Handler), OriginalHandler: v.RemoteObject(l.OriginalHandler)}
		if sid := v.scriptID(l.URL); l.URL != "" && sid != "" {
			e.ScriptID, e.LineNumber, e.ColumnNumber = sid, l.Line, l.Column
		}
		if l.Node != 0 {
			e.BackendNodeID = cdp.BackendNodeID(id(l.Node))
		}
		out = append(out, e)
	}
	return mustMarshal(&eventListenersAnswer{out})
}
