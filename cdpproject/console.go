package cdpproject

import (
	cdpruntime "github.com/chromedp/cdproto/runtime"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// ConsoleAPICalledParams projects a page's console call. ids, when not
// nil, holds each argument's objectId in the receiving window ("" for
// none); the page's handles are never exposed.
func (v *Values) ConsoleAPICalledParams(ev *sourceproto.ConsoleEvent, ids []string) *cdpruntime.EventConsoleAPICalled {
	out := &cdpruntime.EventConsoleAPICalled{Type: cdpruntime.ConsoleAPICalledType(ev.Type), Args: make([]*cdpruntime.RemoteObject, len(ev.Args)),
		ExecutionContextID: cdpruntime.ExecutionContextID(v.ContextID), Timestamp: cdpruntime.Timestamp(ev.Timestamp),
		StackTrace: v.StackTrace(ev.StackTrace), Context: ev.Context}
	for i := range ev.Args {
		id := ""
		if ids != nil {
			id = ids[i]
		}
		out.Args[i] = remoteObject(&ev.Args[i], id)
	}
	return out
}

// AppendConsoleAPICalled appends the whole Runtime.consoleAPICalled
// message to b.
func (v *Values) AppendConsoleAPICalled(b []byte, ev *sourceproto.ConsoleEvent, ids []string) []byte {
	return append(b, Event("Runtime.consoleAPICalled", v.ConsoleAPICalledParams(ev, ids))...)
}
