package sourceproto

import (
	"github.com/mailru/easyjson/jlexer"
	"github.com/mailru/easyjson/jwriter"
	"github.com/mailru/easyjson/opt"
)

// The JSON value set shared by the Runtime, console and query families:
// CDP Runtime shapes with the producer's opaque "handle" in place of a CDP
// objectId. A handle is meaningful only to the source generation and the
// DevTools session that received it; package object maps it to a
// connection-local objectId.

// RawJSON is one JSON value kept as bytes (returnByValue results, call
// argument values, app event data, query params and results). The envelope
// scanner has already checked its syntax, depth and string sizes; the
// decoder copies it so it never aliases the carrier's read buffer.
type RawJSON []byte

// UnmarshalEasyJSON copies the next value.
func (r *RawJSON) UnmarshalEasyJSON(l *jlexer.Lexer) {
	raw := l.Raw()
	if l.Ok() {
		*r = append((*r)[:0], raw...)
	}
}

// MarshalEasyJSON writes the value as is ("null" when empty).
func (r RawJSON) MarshalEasyJSON(w *jwriter.Writer) {
	if len(r) == 0 {
		w.RawString("null")
		return
	}
	w.Raw(r, nil)
}

// UnmarshalJSON and MarshalJSON let encoding/json handle RawJSON like
// json.RawMessage (used by the benchmark baseline and by callers that log).
func (r *RawJSON) UnmarshalJSON(b []byte) error { *r = append((*r)[:0], b...); return nil }

// MarshalJSON returns the value, or null when empty.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// RemoteObject is a value as the producer's realm saw it.
//
//easyjson:json
type RemoteObject struct {
	Type    ObjectType `json:"type"`
	Subtype Subtype    `json:"subtype,omitempty"`
	//lint:ignore SA5008 "intern" is an easyjson option (interned strings)
	ClassName string `json:"className,omitempty,intern"`
	// Value is the JSON value of a primitive (or of a returnByValue object).
	Value RawJSON `json:"value,omitempty"`
	// UnserializableValue is "Infinity", "-Infinity", "NaN", "-0" or a
	// bigint literal such as "12n"; exclusive with Value.
	UnserializableValue string         `json:"unserializableValue,omitempty"`
	Description         string         `json:"description,omitempty"`
	Handle              string         `json:"handle,omitempty"`
	Preview             *ObjectPreview `json:"preview,omitempty"`
}

// ObjectPreview is CDP Runtime.ObjectPreview.
//
//easyjson:json
type ObjectPreview struct {
	Type        ObjectType        `json:"type"`
	Subtype     Subtype           `json:"subtype,omitempty"`
	Description string            `json:"description,omitempty"`
	Overflow    bool              `json:"overflow"`
	Properties  []PropertyPreview `json:"properties"`
	Entries     []EntryPreview    `json:"entries,omitempty"`
}

// PropertyPreview is CDP Runtime.PropertyPreview.
//
//easyjson:json
type PropertyPreview struct {
	Name         string         `json:"name"`
	Type         PreviewType    `json:"type"`
	Value        string         `json:"value,omitempty"`
	ValuePreview *ObjectPreview `json:"valuePreview,omitempty"`
	Subtype      Subtype        `json:"subtype,omitempty"`
}

// EntryPreview is CDP Runtime.EntryPreview (Map/Set entries).
//
//easyjson:json
type EntryPreview struct {
	Key   *ObjectPreview `json:"key,omitempty"`
	Value ObjectPreview  `json:"value"`
}

// PropertyDescriptor is CDP Runtime.PropertyDescriptor.
//
//easyjson:json
type PropertyDescriptor struct {
	Name         string        `json:"name"`
	Value        *RemoteObject `json:"value,omitempty"`
	Writable     opt.Bool      `json:"writable,omitempty"`
	Get          *RemoteObject `json:"get,omitempty"`
	Set          *RemoteObject `json:"set,omitempty"`
	Configurable bool          `json:"configurable"`
	Enumerable   bool          `json:"enumerable"`
	WasThrown    bool          `json:"wasThrown,omitempty"`
	IsOwn        bool          `json:"isOwn,omitempty"`
	Symbol       *RemoteObject `json:"symbol,omitempty"`
}

// InternalPropertyDescriptor is CDP Runtime.InternalPropertyDescriptor.
//
//easyjson:json
type InternalPropertyDescriptor struct {
	Name  string        `json:"name"`
	Value *RemoteObject `json:"value,omitempty"`
}

// PrivatePropertyDescriptor is CDP Runtime.PrivatePropertyDescriptor.
//
//easyjson:json
type PrivatePropertyDescriptor struct {
	Name  string        `json:"name"`
	Value *RemoteObject `json:"value,omitempty"`
	Get   *RemoteObject `json:"get,omitempty"`
	Set   *RemoteObject `json:"set,omitempty"`
}

// CallFrame is one stack frame. Line and column are 0-based, as in CDP.
// Names and urls are interned: a console flood repeats the same few.
//
//easyjson:json
type CallFrame struct {
	//lint:ignore SA5008 "intern" is an easyjson option (interned strings)
	FunctionName string `json:"functionName,intern"`
	//lint:ignore SA5008 "intern" is an easyjson option (interned strings)
	URL          string `json:"url,intern"`
	LineNumber   int64  `json:"lineNumber"`
	ColumnNumber int64  `json:"columnNumber"`
	// ScriptID is optional (docs/protocol.md "The JSON value set": a host
	// producer knows V8's script id; a page's client scripts are addressed
	// by url). Added without a version bump: frames without it stay valid.
	ScriptID string `json:"scriptId,omitempty"`
}

// StackTrace is a synchronous stack (async parents are not carried in v1).
//
//easyjson:json
type StackTrace struct {
	Description string      `json:"description,omitempty"`
	CallFrames  []CallFrame `json:"callFrames"`
}

// ExceptionDetails is CDP Runtime.ExceptionDetails without scriptId (client
// scripts are addressed by url) and executionContextId (the source
// generation is the context).
//
//easyjson:json
type ExceptionDetails struct {
	ExceptionID  int64         `json:"exceptionId"`
	Text         string        `json:"text"`
	LineNumber   int64         `json:"lineNumber"`
	ColumnNumber int64         `json:"columnNumber"`
	URL          string        `json:"url,omitempty"`
	StackTrace   *StackTrace   `json:"stackTrace,omitempty"`
	Exception    *RemoteObject `json:"exception,omitempty"`
}

// CallArgument is CDP Runtime.CallArgument with a handle for objectId. At
// most one of the three is set; none means undefined.
//
//easyjson:json
type CallArgument struct {
	Value               RawJSON `json:"value,omitempty"`
	UnserializableValue string  `json:"unserializableValue,omitempty"`
	Handle              string  `json:"handle,omitempty"`
}

// TransportError is the error member of every response union.
//
//easyjson:json
type TransportError struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message,omitempty"`
}

// PageInfo identifies the page of a client realm (hello, and "page" items
// when a single-page app navigates or retitles).
//
//easyjson:json
type PageInfo struct {
	URL   string `json:"url"`
	Title string `json:"title"`
}
