package pagerealm

import (
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/internal/cdpwire"
	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/realm"
)

// The seam between the transport (cdpserver: sockets, dispatch, sessions,
// the method table) and this backend: what the hub needs of the worker
// (Host), of each DevTools window (Window, through its Sink), and the
// requests and rules it is handed (Request, Rule). This package never
// imports cdpserver.

// Request is a DevTools request routed to the page backend: its id as sent
// (raw JSON), its method and its raw params.
type Request struct {
	ID     jsontext.Value
	Method string
	Params []byte
}

// request keeps the moved code's name for a Request.
type request = Request

// Host is what the hub needs of the worker.
type Host interface {
	// Windows lists the open DevTools windows. The hub calls it holding
	// its mu (lock order: Hub.mu → the server's lock).
	Windows() []*Window
	// Logf logs for the operator; it may run under Hub.mu and must not
	// call back into the hub.
	Logf(format string, args ...any)
	// ResourceTree is the answer to Page.getResourceTree with the pages'
	// frames as the main frame's children.
	ResourceTree(children []cdpproject.FrameTree) []byte
}

// Config is the hub's static configuration.
type Config struct {
	// TargetID is the page target's id: the parent of every page's frame.
	TargetID string
	// Registry is the realm registry the hub adds the pages' realms to.
	Registry *realm.Registry
	// RuntimeTimeout bounds a page's Runtime answer, from the request's
	// arrival.
	RuntimeTimeout time.Duration
	// Served lists the Runtime methods the page agent serves (the method
	// table's Rule.Runtime entries), named when another is refused.
	Served []string
}

// Sink is how the hub reaches one window's outgoing queue.
type Sink interface {
	// Enqueue queues an answer or the worker's own message. It never
	// blocks; on overflow it retires the window (timers only).
	Enqueue(msg []byte)
	// PushLossy queues an observation unless the window has fallen
	// behind; it reports whether it did.
	PushLossy(msg []byte) bool
	// PushFront queues msg ahead of the window's backlog (a loss report).
	PushFront(msg []byte) error
	// Refuse answers req with an error, logged like the dispatcher's
	// refusals.
	Refuse(req Request, code int, message string)
	// Pushed and Written count the messages queued to the window and
	// written to its socket so far: a replay paces itself by them.
	Pushed() int64
	Written() int64
}

// Window is one DevTools window as the page backend sees it: its identity,
// its object table, its queue and what the hub knows of it.
type Window struct {
	id      int64         // Static after construction.
	objects *object.Table // Static after construction: the window's object table.
	sink    Sink          // Static after construction.
	done    <-chan struct{}
	client  sessionState // Guarded by Hub.mu.
}

// NewWindow describes a window to the hub. done is closed when the window's
// sender stops (a replay in progress then stops too).
func NewWindow(id int64, objects *object.Table, sink Sink, done <-chan struct{}) *Window {
	return &Window{id: id, objects: objects, sink: sink, done: done}
}

// NewPageWindow describes a window on one page's own target
// (pagetarget.go): it sees the page whose source id is sourceID and
// nothing else.
func NewPageWindow(id int64, objects *object.Table, sink Sink, done <-chan struct{}, sourceID string) *Window {
	w := NewWindow(id, objects, sink, done)
	w.client.target = sourceID
	return w
}

func (w *Window) enqueue(msg []byte) { w.sink.Enqueue(msg) }

func (w *Window) refuse(req Request, e *wireError) { w.sink.Refuse(req, e.Code, e.Message) }

// wireError is a CDP error answer.
type wireError struct {
	Code    int
	Message string
}

func (e *wireError) Error() string { return e.Message }

const codeServerError = cdpwire.CodeServerError

func appendResult(b []byte, id jsontext.Value, result []byte) []byte {
	return cdpwire.AppendResult(b, id, result)
}

func appendError(b []byte, id jsontext.Value, sessionID string, e *wireError) []byte {
	return cdpwire.AppendError(b, id, sessionID, e.Code, e.Message)
}

// maxQueuedMessages bounds a window's queue (cdpserver's).
const maxQueuedMessages = cdpwire.MaxQueuedMessages

// Answer says what a page realm does with a routed method addressed to it
// (by the method's realm key): the method table's pages' column.
type Answer uint8

const (
	// AnswerAbsent: the entry says nothing; its domain's rule applies.
	AnswerAbsent Answer = iota
	// AnswerHost: the method never reaches a page; the host answers it.
	AnswerHost
	// AnswerAgent: a runtime.command to the page's agent; Rule.Runtime
	// builds it and renders the answer (runtime_wire.go). Without a
	// Runtime the method is refused, naming Config.Served.
	AnswerAgent
	// AnswerScriptRead: the script's source, read from the page
	// (scripts.go); Rule.Script answers from it.
	AnswerScriptRead
	// AnswerLiteral: a fixed answer (Rule.Result).
	AnswerLiteral
	// AnswerRefusal: -32000 with Rule.Reason, in the realm's words
	// (realm.UnsupportedError).
	AnswerRefusal
)

// Rule is one method's column for page realms in the method table.
type Rule struct {
	Answer  Answer
	Result  string   // AnswerLiteral
	Reason  string   // AnswerRefusal
	Tell    bool     // AnswerRefusal: the reason also goes to the window's Console
	Runtime *Runtime // AnswerAgent: the page agent's handler
	Script  *Script  // AnswerScriptRead: the answer from the script's source
}

// logEntry renders a Log.entryAdded the worker itself says.
func logEntry(level, text string, at time.Time) []byte {
	return logEntryAt(level, text, cdpproject.Millis(at))
}

// logEntryAt is logEntry with a CDP timestamp (ms since the epoch).
func logEntryAt(level, text string, ms float64) []byte {
	return cdpproject.LogEntry(cdpproject.SourceOther, cdplog.EntryLevel(level), text, ms)
}
