package sourceproto

import (
	"errors"

	"github.com/mailru/easyjson/jlexer"
	"github.com/mailru/easyjson/jwriter"
)

// errEnum is recorded on the lexer for a value outside a closed set; it is
// mapped to RejectMalformed with a fixed reason (the value is never echoed).
var errEnum = errors.New("invalid enum value")

// readEnum reads a string member and maps it to one of vals without
// allocating: the returned value is the constant, not a copy of the input.
func readEnum[T ~string](l *jlexer.Lexer, vals []T) T {
	s := l.UnsafeString()
	for _, v := range vals {
		if string(v) == s {
			return v
		}
	}
	l.AddError(errEnum)
	return ""
}

// ObjectType is RemoteObject.type (CDP Runtime.RemoteObject.type).
type ObjectType string

const (
	TypeObject    ObjectType = "object"
	TypeFunction  ObjectType = "function"
	TypeUndefined ObjectType = "undefined"
	TypeString    ObjectType = "string"
	TypeNumber    ObjectType = "number"
	TypeBoolean   ObjectType = "boolean"
	TypeSymbol    ObjectType = "symbol"
	TypeBigint    ObjectType = "bigint"
)

var objectTypes = []ObjectType{TypeObject, TypeFunction, TypeUndefined, TypeString, TypeNumber, TypeBoolean, TypeSymbol, TypeBigint}

func (v *ObjectType) UnmarshalEasyJSON(l *jlexer.Lexer) { *v = readEnum(l, objectTypes) }
func (v ObjectType) MarshalEasyJSON(w *jwriter.Writer)  { w.String(string(v)) }

// PreviewType is PropertyPreview.type: ObjectType plus "accessor".
type PreviewType string

const PreviewAccessor PreviewType = "accessor"

var previewTypes = []PreviewType{"object", "function", "undefined", "string", "number", "boolean", "symbol", "bigint", PreviewAccessor}

func (v *PreviewType) UnmarshalEasyJSON(l *jlexer.Lexer) { *v = readEnum(l, previewTypes) }
func (v PreviewType) MarshalEasyJSON(w *jwriter.Writer)  { w.String(string(v)) }

// Subtype is RemoteObject.subtype for objects (CDP's list).
type Subtype string

var subtypes = []Subtype{"array", "null", "node", "regexp", "date", "map", "set", "weakmap", "weakset",
	"iterator", "generator", "error", "proxy", "promise", "typedarray", "arraybuffer", "dataview",
	"webassemblymemory", "wasmvalue", "trustedtype"}

func (v *Subtype) UnmarshalEasyJSON(l *jlexer.Lexer) { *v = readEnum(l, subtypes) }
func (v Subtype) MarshalEasyJSON(w *jwriter.Writer)  { w.String(string(v)) }

// ConsoleType is the console API call (CDP Runtime.consoleAPICalled.type).
type ConsoleType string

const (
	ConsoleLog     ConsoleType = "log"
	ConsoleDebug   ConsoleType = "debug"
	ConsoleInfo    ConsoleType = "info"
	ConsoleError   ConsoleType = "error"
	ConsoleWarning ConsoleType = "warning"
)

var consoleTypes = []ConsoleType{ConsoleLog, ConsoleDebug, ConsoleInfo, ConsoleError, ConsoleWarning,
	"dir", "dirxml", "table", "trace", "clear", "startGroup", "startGroupCollapsed", "endGroup",
	"assert", "profile", "profileEnd", "count", "timeEnd"}

func (v *ConsoleType) UnmarshalEasyJSON(l *jlexer.Lexer) { *v = readEnum(l, consoleTypes) }
func (v ConsoleType) MarshalEasyJSON(w *jwriter.Writer)  { w.String(string(v)) }

// Level maps a console API type to the Log-domain level DevTools filters by.
func (v ConsoleType) Level() string {
	switch v {
	case ConsoleError, "assert":
		return "error"
	case ConsoleWarning:
		return "warning"
	case ConsoleDebug:
		return "verbose"
	case ConsoleInfo:
		return "info"
	}
	return "info"
}

// RuntimeMethod is the discriminant of the Runtime command/result unions.
type RuntimeMethod string

const (
	MethodEvaluate                RuntimeMethod = "evaluate"
	MethodGetProperties           RuntimeMethod = "getProperties"
	MethodCallFunctionOn          RuntimeMethod = "callFunctionOn"
	MethodAwaitPromise            RuntimeMethod = "awaitPromise"
	MethodReleaseObject           RuntimeMethod = "releaseObject"
	MethodReleaseObjectGroup      RuntimeMethod = "releaseObjectGroup"
	MethodGlobalLexicalScopeNames RuntimeMethod = "globalLexicalScopeNames"

	// The DOM agent's methods (dom.go): DOMParams in, DOMResult out.
	MethodDOMChildren  RuntimeMethod = "domChildren"  // a node's children (DOM.requestChildNodes)
	MethodDOMDescribe  RuntimeMethod = "domDescribe"  // one node (DOM.describeNode)
	MethodDOMPush      RuntimeMethod = "domPush"      // nodes made known with their paths (DOM.requestNode …)
	MethodDOMResolve   RuntimeMethod = "domResolve"   // a node as a Runtime object (DOM.resolveNode)
	MethodDOMOuterHTML RuntimeMethod = "domOuterHTML" // DOM.getOuterHTML
	MethodDOMEdit      RuntimeMethod = "domEdit"      // one edit (DOMEdit)
	MethodDOMDisable   RuntimeMethod = "domDisable"   // forget the session's nodes in the page
	MethodDOMSearch    RuntimeMethod = "domSearch"    // find nodes (DOM.performSearch)
	MethodDOMResults   RuntimeMethod = "domResults"   // a range of the search's nodes, pushed (DOM.getSearchResults)
	MethodDOMBox       RuntimeMethod = "domBox"       // an element's box model (DOM.getBoxModel)
	MethodDOMOverlay   RuntimeMethod = "domOverlay"   // highlight, hide, select a node (Overlay.*, DOM.setInspectedNode)
	MethodDOMCSS       RuntimeMethod = "domCSS"       // a CSS query or edit (css.go: CSSQuery)
	// MethodDOMListeners: the event listeners of a node or window named by
	// handle (DOMDebugger.getEventListeners; dom.go DOMListener).
	MethodDOMListeners RuntimeMethod = "domListeners"
	// MethodDOMPlace: an edit that makes a node anew (setNodeName, moveTo,
	// copyTo) and answers its id with its path.
	MethodDOMPlace RuntimeMethod = "domPlace"
	// MethodDOMLocate: the element at a point of the page's viewport
	// (DOM.getNodeForLocation), pushed with its path.
	MethodDOMLocate RuntimeMethod = "domLocate"
	// MethodDOMClasses: the class names used in a node's subtree
	// (DOM.collectClassNamesFromSubtree).
	MethodDOMClasses RuntimeMethod = "domClasses"
)

var runtimeMethods = []RuntimeMethod{MethodEvaluate, MethodGetProperties, MethodCallFunctionOn,
	MethodAwaitPromise, MethodReleaseObject, MethodReleaseObjectGroup, MethodGlobalLexicalScopeNames,
	MethodDOMChildren, MethodDOMDescribe, MethodDOMPush, MethodDOMResolve, MethodDOMOuterHTML, MethodDOMEdit, MethodDOMDisable,
	MethodDOMSearch, MethodDOMResults, MethodDOMBox, MethodDOMOverlay, MethodDOMCSS, MethodDOMListeners,
	MethodDOMPlace, MethodDOMLocate, MethodDOMClasses}

// IsDOM reports whether m is one of the DOM agent's methods.
func (m RuntimeMethod) IsDOM() bool { return len(m) > 3 && m[:3] == "dom" }

func (v *RuntimeMethod) UnmarshalEasyJSON(l *jlexer.Lexer) { *v = readEnum(l, runtimeMethods) }
func (v RuntimeMethod) MarshalEasyJSON(w *jwriter.Writer)  { w.String(string(v)) }

// ErrorCode is the transport-failure union of Runtime, script and query
// responses. A JavaScript exception is not an ErrorCode: it is a successful
// result carrying exceptionDetails.
type ErrorCode string

const (
	ErrCodeCancelled       ErrorCode = "cancelled"        // the worker sent a cancel
	ErrCodeDeadline        ErrorCode = "deadline"         // the producer's own time bound
	ErrCodeNoSuchHandle    ErrorCode = "no-such-handle"   // released, other session, other generation
	ErrCodeNoSuchScript    ErrorCode = "no-such-script"   // script.read of an unknown url
	ErrCodeUnsupported     ErrorCode = "unsupported"      // e.g. eval blocked by the page's CSP
	ErrCodeInvalidArgument ErrorCode = "invalid-argument" // a parameter the producer cannot use
	ErrCodeTooLarge        ErrorCode = "too-large"        // the answer would break a limit
	ErrCodeInternal        ErrorCode = "internal"         // a bug in the producer
)

var errorCodes = []ErrorCode{ErrCodeCancelled, ErrCodeDeadline, ErrCodeNoSuchHandle, ErrCodeNoSuchScript,
	ErrCodeUnsupported, ErrCodeInvalidArgument, ErrCodeTooLarge, ErrCodeInternal}

func (v *ErrorCode) UnmarshalEasyJSON(l *jlexer.Lexer) { *v = readEnum(l, errorCodes) }
func (v ErrorCode) MarshalEasyJSON(w *jwriter.Writer)  { w.String(string(v)) }

func (v *Role) UnmarshalEasyJSON(l *jlexer.Lexer)       { *v = readEnum(l, roles) }
func (v Role) MarshalEasyJSON(w *jwriter.Writer)        { w.String(string(v)) }
func (v *CloseCode) UnmarshalEasyJSON(l *jlexer.Lexer)  { *v = readEnum(l, closeCodes) }
func (v CloseCode) MarshalEasyJSON(w *jwriter.Writer)   { w.String(string(v)) }
func (v *RejectCode) UnmarshalEasyJSON(l *jlexer.Lexer) { *v = readEnum(l, rejectCodes) }
func (v RejectCode) MarshalEasyJSON(w *jwriter.Writer)  { w.String(string(v)) }

var rejectCodes = []RejectCode{RejectMalformed, RejectOversized, RejectUnsupportedVersion, RejectUnknownType,
	RejectWrongDirection, RejectUnauthorized, RejectSourceMismatch, RejectStaleGeneration,
	RejectUnknownGeneration, RejectUnexpectedFrame, RejectUndeclaredCapability, RejectUndeclaredTopic,
	RejectSequenceRegression, RejectClosed, RejectOverCapacity}

// ReplaceReason says why a producer sent a replacement.
type ReplaceReason string

const (
	ReplaceInitial   ReplaceReason = "initial"   // first sequenced frame of a generation
	ReplaceRequested ReplaceReason = "requested" // answer to a snapshot-request
	ReplaceProducer  ReplaceReason = "producer"  // the producer reset its own state
)

var replaceReasons = []ReplaceReason{ReplaceInitial, ReplaceRequested, ReplaceProducer}

func (v *ReplaceReason) UnmarshalEasyJSON(l *jlexer.Lexer) { *v = readEnum(l, replaceReasons) }
func (v ReplaceReason) MarshalEasyJSON(w *jwriter.Writer)  { w.String(string(v)) }

// FetchPhase is the step of a fetch a FetchEvent reports.
type FetchPhase string

const (
	PhaseRequest  FetchPhase = "request"
	PhaseResponse FetchPhase = "response"
	PhaseBody     FetchPhase = "body"
	PhaseFinished FetchPhase = "finished"
	PhaseFailed   FetchPhase = "failed"
)

var fetchPhases = []FetchPhase{PhaseRequest, PhaseResponse, PhaseBody, PhaseFinished, PhaseFailed}

func (v *FetchPhase) UnmarshalEasyJSON(l *jlexer.Lexer) { *v = readEnum(l, fetchPhases) }
func (v FetchPhase) MarshalEasyJSON(w *jwriter.Writer)  { w.String(string(v)) }

// FetchKind is the API a fetch was made with (FetchRequest.kind). Absent
// on the wire means KindFetch, so frames from producers older than the
// member stay valid. CDP ResourceType: Fetch, XHR, Other.
type FetchKind string

const (
	KindFetch FetchKind = "fetch"
	KindXHR   FetchKind = "xhr"
	// KindHTTP is node:http/https (diagnostics_channel); its bodies are
	// not read (FetchRequest.BodiesNotRead).
	KindHTTP FetchKind = "http"
)

var fetchKinds = []FetchKind{KindFetch, KindXHR, KindHTTP}

func (v *FetchKind) UnmarshalEasyJSON(l *jlexer.Lexer) { *v = readEnum(l, fetchKinds) }
func (v FetchKind) MarshalEasyJSON(w *jwriter.Writer)  { w.String(string(v)) }

// BodyPart says which body a fetch body chunk belongs to.
type BodyPart string

const (
	PartRequest  BodyPart = "request"
	PartResponse BodyPart = "response"
)

var bodyParts = []BodyPart{PartRequest, PartResponse}

func (v *BodyPart) UnmarshalEasyJSON(l *jlexer.Lexer) { *v = readEnum(l, bodyParts) }
func (v BodyPart) MarshalEasyJSON(w *jwriter.Writer)  { w.String(string(v)) }
