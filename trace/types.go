package trace

import "time"

// SchemaVersion versions every JSON document this package emits: the CLI's
// --json report, every HTTP answer and every stream message. Readers must
// check it; additions of optional fields do not bump it, anything else does.
//
//	1: first version (docs/trace.md).
//	2: the trace follows the program's Node children: an event, a failure
//	   and an exit may belong to a child (Event.pid, Failure.pid: absent
//	   for the traced program itself), Child.followed can be true and says
//	   why not in Child.note, exceptionCount counts the children's too, and
//	   Evidence.childCaveat names the children that were not followed. A
//	   version-1 reader would take a child's exception for the program's.
const SchemaVersion = 2

// Event kinds.
const (
	KindContext   = "context"   // an execution context was created or destroyed
	KindScript    = "script"    // a user script was parsed (node:internal and eval are filtered)
	KindConsole   = "console"   // console.* was called
	KindException = "exception" // an uncaught exception was reported
	KindOutput    = "output"    // one line the target wrote on stdout or stderr
	KindExit      = "exit"      // the target process ended
	KindTest      = "test"      // a node:test test failed (subtype "fail"; `trace -- node --test`)
)

// Session statuses. Terminal ones never change again; a stop by the user
// stays StatusStopped even when the exit is observed afterwards.
const (
	StatusStarting = "starting" // spawning node and attaching
	StatusRunning  = "running"  // attached, the script runs
	StatusExited   = "exited"   // the target ended on its own (any exit code)
	StatusFailed   = "failed"   // node could not be started or attached (see Session.Error)
	StatusStopped  = "stopped"  // stopped by the user or by the engine's shutdown
)

// Confidence levels of an Evidence, exactly as docs/trace.md defines them.
const (
	ConfidenceHigh   = "high"   // failure resolved to source AND the immediate cause is in the same file
	ConfidenceMedium = "medium" // failure resolved to source; the cause is elsewhere or absent
	ConfidenceLow    = "low"    // the failure has no source location
)

// Failure kinds.
const (
	FailureException = "exception" // the last uncaught exception
	FailureExit      = "exit"      // nonzero exit without an exception; message from stderr
	FailureStart     = "start"     // the target never ran
	FailureTest      = "test"      // the last failed node:test test, without an uncaught exception
)

// Caveat is part of every evidence answer (the honesty rule): the chain is
// ordered by time, and being close in time is not being the cause.
const Caveat = "Correlation, not causation: the immediate cause is the closest event captured " +
	"BEFORE the failure, and the previous state transitions are the events before that. " +
	"They are ordered by when the inspector reported them; none of them is proven to cause the failure. " +
	"Values are shallow previews capped at 500 characters, output lines are ordered separately from " +
	"inspector events, and events dropped by the per-session cap are not considered."

// Location is a position in a source file. File is an absolute path; Line
// and Column are 1-based (0 = unknown, omitted).
type Location struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitzero"`
	Column int    `json:"column,omitzero"`
}

// Frame is one user-code stack frame (node:internal and eval frames are
// filtered out). Generated is set when Location came from a source map.
type Frame struct {
	Function  string    `json:"function,omitempty"`
	Location  Location  `json:"location"`
	Generated *Location `json:"generated,omitempty"`
	mapNote   string    // why a declared source map did not map Location (copied to Event.SourceMapNote)
}

// Value is a shallow, capped preview of a JavaScript value. The engine never
// keeps object ids and never asks the target for properties.
type Value struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype,omitempty"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitzero"`
}

// Event is one captured event. Events are immutable once stored.
type Event struct {
	Seq       int64     `json:"seq"` // 1-based, in capture order, per session
	Time      time.Time `json:"time"`
	Kind      string    `json:"kind"`
	Subtype   string    `json:"subtype,omitempty"` // console type, output stream, created/destroyed
	Detail    string    `json:"detail"`
	Location  *Location `json:"location,omitempty"`
	Generated *Location `json:"generated,omitempty"` // the compiled position when Location is source-mapped
	// SourceMapNote says why Location is a COMPILED position although the
	// script declares a source map (unusable map, unmapped range, webpack://).
	SourceMapNote string  `json:"sourceMapNote,omitempty"`
	CallStack     []Frame `json:"callStack,omitempty"`
	Values        []Value `json:"values,omitempty"`
	ErrorMessage  string  `json:"errorMessage,omitempty"`
	Stack         string  `json:"stack,omitempty"`      // Error.stack as Node rendered it, user frames only
	SourceLine    string  `json:"sourceLine,omitempty"` // syntax errors: the text of the offending line
	ExitCode      *int    `json:"exitCode,omitempty"`
	Truncated     bool    `json:"truncated,omitzero"` // Detail (or the output line) was cut
	// PID is the followed child process the event comes from; 0 (omitted)
	// is the traced program itself. Output lines are always the program's:
	// a child writing to an inherited stdout or stderr writes to the
	// program's pipes.
	PID int `json:"pid,omitzero"`

	child *childReport // the preload's report of a child process: never stored as an event
}

// Session is a summary of one trace.
type Session struct {
	ID             string     `json:"id"`
	Status         string     `json:"status"`
	Target         string     `json:"target"`
	Args           []string   `json:"args"`
	Cwd            string     `json:"cwd"`
	Node           string     `json:"node"`
	NodeArgs       []string   `json:"nodeArgs"` // the argv executed; [0] is the resolved node
	PID            int        `json:"pid,omitzero"`
	StartedAt      time.Time  `json:"startedAt"`
	EndedAt        *time.Time `json:"endedAt,omitempty"`
	ExitCode       *int       `json:"exitCode,omitempty"`
	Error          string     `json:"error,omitempty"`
	StopReason     string     `json:"stopReason,omitempty"`
	Events         int        `json:"events"`         // stored now (<= MaxEvents)
	DroppedEvents  int64      `json:"droppedEvents"`  // evicted by the cap, oldest first
	Truncated      bool       `json:"truncated"`      // DroppedEvents > 0
	ExceptionCount int        `json:"exceptionCount"` // the program's and its followed children's
	HasFailure     bool       `json:"hasFailure"`
	// Children are the processes the target and its followed children
	// started (spawn, fork, exec, cluster), and the Node processes that
	// registered with the engine, in the order the engine learned of them
	// (docs/trace.md, "Child processes").
	Children        []Child `json:"children,omitempty"`
	ChildrenDropped int     `json:"childrenDropped,omitzero"` // beyond the cap of 100
}

// Child is a process the traced program (or a followed child) started, or
// a Node process that registered with the engine.
type Child struct {
	PID      int      `json:"pid"`
	PPID     int      `json:"ppid,omitzero"`      // its parent's pid (the program's or a child's); 0 = unknown
	Command  []string `json:"command"`            // the child's argv as its parent passed it, or as it registered (capped)
	ExitCode *int     `json:"exitCode,omitempty"` // as its parent saw it, else as it reported itself; absent until seen
	Signal   string   `json:"signal,omitempty"`   // the signal that ended it, if any
	// Followed: the engine attached to the child's inspector before any of
	// the child's own code ran, so its exceptions, console calls and exit
	// are events (with its pid). False: none of its events are captured,
	// and Note says why.
	Followed bool   `json:"followed"`
	Note     string `json:"note,omitempty"`   // why it is not (or only partly) followed
	Partial  bool   `json:"partial,omitzero"` // followed, but some of its code ran before the attach (Note says what)

	exitEvent bool // its exit is in the timeline
}

// SessionDetail is a session with its stored events, oldest first.
type SessionDetail struct {
	SchemaVersion int     `json:"schemaVersion"`
	Session       Session `json:"session"`
	Events        []Event `json:"events"`
	StderrTail    string  `json:"stderrTail"` // last <= 4000 chars of stderr, inspector banners removed
}

// Evidence is the correlation-aware failure chain of one session.
type Evidence struct {
	Failure                  Failure `json:"failure"`
	ImmediateCause           *Event  `json:"immediateCause"`           // closest PRIOR inspector event, or null
	PreviousStateTransitions []Event `json:"previousStateTransitions"` // <= 10 before the immediate cause, oldest first
	OriginatingValue         *Value  `json:"originatingValue"`         // the thrown value, or null
	RelevantInput            Input   `json:"relevantInput"`
	Confidence               string  `json:"confidence"`
	ConfidenceReason         string  `json:"confidenceReason"`
	Caveat                   string  `json:"caveat"`
	// ChildCaveat names the child processes whose events are not in the
	// evidence (not followed, or followed only partly); "" when none.
	ChildCaveat string `json:"childCaveat,omitempty"`
}

// Failure is what went wrong.
type Failure struct {
	Kind           string    `json:"kind"`         // exception, test, exit or start
	PID            int       `json:"pid,omitzero"` // the followed child that failed; 0 = the traced program
	Message        string    `json:"message"`
	MessageSource  string    `json:"messageSource,omitempty"` // exit failures: console, child-console, stderr or exit-code
	MessageSeq     int64     `json:"messageSeq,omitzero"`     // exit failures: the console event the message is from
	EventSeq       int64     `json:"eventSeq,omitzero"`       // the exception or exit event
	Location       *Location `json:"location,omitempty"`
	Generated      *Location `json:"generated,omitempty"`
	SourceMapNote  string    `json:"sourceMapNote,omitempty"` // the script's declared source map could not place the failure
	SourceResolved bool      `json:"sourceResolved"`          // Location is known (through a source map when Generated is set)
	ExitCode       *int      `json:"exitCode,omitempty"`
	Stack          string    `json:"stack,omitempty"`
	SourceLine     string    `json:"sourceLine,omitempty"` // syntax errors: the text of the offending line
	StderrTail     string    `json:"stderrTail,omitempty"`
}

// Input is what the target was started with.
type Input struct {
	Target   string   `json:"target"`
	Args     []string `json:"args"`
	Cwd      string   `json:"cwd"`
	NodeArgs []string `json:"nodeArgs"`
}

// EvidenceReport is the answer of GET /api/trace/evidence. Evidence is null
// when the session has no failure (yet); Caveat is always present.
type EvidenceReport struct {
	SchemaVersion int       `json:"schemaVersion"`
	SessionID     string    `json:"sessionId"`
	Status        string    `json:"status"`
	Evidence      *Evidence `json:"evidence"`
	Caveat        string    `json:"caveat"`
}

// Report is the CLI's --json document: one finished session, its events
// and its evidence.
type Report struct {
	SchemaVersion int       `json:"schemaVersion"`
	Node          NodeInfo  `json:"node"`
	Session       Session   `json:"session"`
	Events        []Event   `json:"events"`
	StderrTail    string    `json:"stderrTail"`
	Evidence      *Evidence `json:"evidence"` // null: no failure
	Caveat        string    `json:"caveat"`
}

// StartRequest is the body of POST /api/trace/start. Target and Cwd are
// relative to the workspace root (or absolute inside it); Cwd "" is the root.
type StartRequest struct {
	Target string   `json:"target"`
	Args   []string `json:"args,omitempty"`
	Cwd    string   `json:"cwd,omitempty"`
	// Test runs Target as a node:test file (`trace -- node --test file`):
	// in the traced process itself, with the engine's test reporter beside
	// Node's TAP one. Not part of the HTTP API.
	Test bool `json:"-"`
}

// StopRequest is the body of POST /api/trace/stop.
type StopRequest struct {
	ID string `json:"id"`
}

// SessionReport wraps one session summary (start and stop answers).
type SessionReport struct {
	SchemaVersion int     `json:"schemaVersion"`
	Session       Session `json:"session"`
}

// ListReport is the answer of GET /api/trace/list, oldest session first.
type ListReport struct {
	SchemaVersion int       `json:"schemaVersion"`
	Sessions      []Session `json:"sessions"`
}

// StreamMessage is one message of ws /api/trace/stream.
type StreamMessage struct {
	SessionID string `json:"sessionId"`
	Event     Event  `json:"event"`
}

// Status is the answer of GET /api/trace/status.
type Status struct {
	SchemaVersion  int          `json:"schemaVersion"`
	Workspace      string       `json:"workspace"`
	WorkspaceError string       `json:"workspaceError,omitempty"`
	Capabilities   Capabilities `json:"capabilities"`
	Sessions       int          `json:"sessions"`
	Active         int          `json:"active"`
}

// Capabilities say exactly what the engine can do, nothing more.
type Capabilities struct {
	Runtime       string        `json:"runtime"` // "node"
	Available     bool          `json:"available"`
	Node          NodeInfo      `json:"node"`
	SourceMapping SourceMapping `json:"sourceMapping"`
	Replay        string        `json:"replay"` // always "timeline"
	ReplayNote    string        `json:"replayNote"`
	Limits        Limits        `json:"limits"`
}

// NodeInfo is the node executable the engine runs.
type NodeInfo struct {
	Path    string `json:"path,omitempty"`
	Version string `json:"version"` // "v20.20.2", or "unavailable"
	Error   string `json:"error,omitempty"`
}

// SourceMapping reports how positions reach original sources.
type SourceMapping struct {
	Enabled bool   `json:"enabled"`
	Flag    string `json:"flag"` // node flag passed to every target
	Note    string `json:"note"`
}

// Limits are the engine's caps.
type Limits struct {
	MaxEvents       int `json:"maxEvents"`
	MaxSessions     int `json:"maxSessions"`
	MaxValueChars   int `json:"maxValueChars"`
	MaxLineChars    int `json:"maxLineChars"`
	StderrTailChars int `json:"stderrTailChars"`
	MaxFollowed     int `json:"maxFollowedChildren"` // children followed at once per session; 0: following is off
}

// ErrorReport is the body of every non-2xx answer of the HTTP API.
type ErrorReport struct {
	SchemaVersion int       `json:"schemaVersion"`
	Error         ErrorBody `json:"error"`
}

// ErrorBody names the problem: Code is stable, Message is for people.
type ErrorBody struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	SessionID string `json:"sessionId,omitempty"`
}
