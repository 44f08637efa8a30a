package sourceproto

import (
	"errors"
	"strings"

	"github.com/mailru/easyjson"
	"github.com/mailru/easyjson/jlexer"
)

// Body is the decoded body of one frame type. The set is closed (the
// unexported method): a type switch over the *Hello … *QueryResult cases
// is exhaustive.
type Body interface {
	// FrameType is the envelope type this body travels under.
	FrameType() FrameType
	easyjson.Marshaler
	// validate checks what the schema cannot: required values, closed
	// unions, limits on counts and sizes.
	validate() *RejectError
}

func (*Hello) FrameType() FrameType           { return FrameHello }
func (*Welcome) FrameType() FrameType         { return FrameWelcome }
func (*Replace) FrameType() FrameType         { return FrameReplace }
func (*Append) FrameType() FrameType          { return FrameAppend }
func (*Ack) FrameType() FrameType             { return FrameAck }
func (*SnapshotRequest) FrameType() FrameType { return FrameSnapshotRequest }
func (*Reject) FrameType() FrameType          { return FrameReject }
func (*Close) FrameType() FrameType           { return FrameClose }
func (*RuntimeCommand) FrameType() FrameType  { return FrameRuntimeCommand }
func (*RuntimeResult) FrameType() FrameType   { return FrameRuntimeResult }
func (*RuntimeCancel) FrameType() FrameType   { return FrameRuntimeCancel }
func (*RuntimeAck) FrameType() FrameType      { return FrameRuntimeAck }
func (*ConsoleEnable) FrameType() FrameType   { return FrameConsoleEnable }
func (*ConsoleDisable) FrameType() FrameType  { return FrameConsoleDisable }
func (*ConsoleDiscard) FrameType() FrameType  { return FrameConsoleDiscard }
func (*ScriptRead) FrameType() FrameType      { return FrameScriptRead }
func (*ScriptMeta) FrameType() FrameType      { return FrameScriptMeta }
func (*ScriptChunk) FrameType() FrameType     { return FrameScriptChunk }
func (*ScriptEnd) FrameType() FrameType       { return FrameScriptEnd }
func (*QueryRequest) FrameType() FrameType    { return FrameQueryRequest }
func (*QueryResult) FrameType() FrameType     { return FrameQueryResult }
func (*DOMEvents) FrameType() FrameType       { return FrameDOMEvent }

// newBody returns an empty body of type t.
func newBody(t FrameType) Body {
	switch t {
	case FrameHello:
		return new(Hello)
	case FrameWelcome:
		return new(Welcome)
	case FrameReplace:
		return new(Replace)
	case FrameAppend:
		return new(Append)
	case FrameAck:
		return new(Ack)
	case FrameSnapshotRequest:
		return new(SnapshotRequest)
	case FrameReject:
		return new(Reject)
	case FrameClose:
		return new(Close)
	case FrameRuntimeCommand:
		return new(RuntimeCommand)
	case FrameRuntimeResult:
		return new(RuntimeResult)
	case FrameRuntimeCancel:
		return new(RuntimeCancel)
	case FrameRuntimeAck:
		return new(RuntimeAck)
	case FrameConsoleEnable:
		return new(ConsoleEnable)
	case FrameConsoleDisable:
		return new(ConsoleDisable)
	case FrameConsoleDiscard:
		return new(ConsoleDiscard)
	case FrameScriptRead:
		return new(ScriptRead)
	case FrameScriptMeta:
		return new(ScriptMeta)
	case FrameScriptChunk:
		return new(ScriptChunk)
	case FrameScriptEnd:
		return new(ScriptEnd)
	case FrameQueryRequest:
		return new(QueryRequest)
	case FrameQueryResult:
		return new(QueryResult)
	case FrameDOMEvent:
		return new(DOMEvents)
	}
	return nil
}

// Frame is a fully decoded frame.
type Frame struct {
	Envelope
	Body Body
}

// Decode reads any frame of either direction: envelope first, then the
// body of the type the envelope names, then the body's own rules. Every
// topic is allowed; the declared-topic check needs a source and is the
// Registry's. Errors are *RejectError. Body bytes are copied; f does not
// alias frame.
func Decode(frame []byte) (Frame, error) {
	env, err := DecodeEnvelope(frame)
	if err != nil {
		return Frame{}, err
	}
	b := newBody(env.Type)
	if rerr := decodeBody(env.Body, b, topicAll); rerr != nil {
		return Frame{}, rerr
	}
	env.Body = nil
	return Frame{Envelope: env, Body: b}, nil
}

// decodeBody decodes raw into b, allowing item topics in allowed, then
// validates it. raw has passed the envelope scanner.
func decodeBody(raw []byte, b Body, allowed Topic) *RejectError {
	return decodeBodyWith(new(jlexer.Lexer), raw, b, allowed)
}

// decodeBodyWith is decodeBody with a caller-owned lexer (a Source reuses
// one, so the hot path does not allocate it per frame).
func decodeBodyWith(l *jlexer.Lexer, raw []byte, b Body, allowed Topic) *RejectError {
	*l = jlexer.Lexer{Data: raw}
	switch v := b.(type) {
	case *Append:
		decodeAppend(l, allowed, v)
	case *Replace:
		decodeReplace(l, allowed, v)
	case easyjson.Unmarshaler:
		v.UnmarshalEasyJSON(l)
	}
	l.Consumed()
	if err := l.Error(); err != nil {
		return lexReject(err)
	}
	return b.validate()
}

// lexReject maps a decoder error to a reject with fixed text: lexer errors
// quote the input, and rejects must never echo it.
func lexReject(err error) *RejectError {
	var le *jlexer.LexerError
	switch {
	case errors.Is(err, errUndeclaredTopic):
		return reject(RejectUndeclaredTopic, "item topic not declared in hello")
	case errors.Is(err, errEnum):
		return malformed("value outside its closed set")
	case errors.Is(err, errUnion):
		return malformed("union must have exactly one member")
	case errors.Is(err, errUnknownMember), errors.As(err, &le) && le.Reason == "unknown field":
		return malformed("unknown member")
	case errors.Is(err, errMissingMember):
		return malformed("missing member")
	case strings.HasPrefix(err.Error(), "key '"):
		return malformed("missing member")
	}
	return malformed("body does not match its schema")
}
