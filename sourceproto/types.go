package sourceproto

import (
	"github.com/mailru/easyjson/jlexer"
	"github.com/mailru/easyjson/jwriter"
)

// FrameType is the envelope discriminant. The zero value is invalid.
type FrameType uint8

// Frame types, grouped by family. The wire names are in frameTypeNames.
const (
	frameInvalid FrameType = iota

	// Source lifecycle.
	FrameHello           // producer → worker
	FrameWelcome         // worker → producer
	FrameReplace         // producer → worker, sequenced
	FrameAppend          // producer → worker, sequenced
	FrameAck             // worker → producer, sequenced
	FrameSnapshotRequest // worker → producer
	FrameReject          // worker → producer
	FrameClose           // both

	// Runtime.
	FrameRuntimeCommand // worker → producer
	FrameRuntimeResult  // producer → worker
	FrameRuntimeCancel  // worker → producer
	FrameRuntimeAck     // worker → producer

	// Console lifecycle (console events travel as append items).
	FrameConsoleEnable  // worker → producer
	FrameConsoleDisable // worker → producer
	FrameConsoleDiscard // worker → producer

	// Chunked script reads.
	FrameScriptRead  // worker → producer
	FrameScriptMeta  // producer → worker
	FrameScriptChunk // producer → worker
	FrameScriptEnd   // producer → worker

	// Semantic queries.
	FrameQueryRequest // worker → producer
	FrameQueryResult  // producer → worker

	// DOM mutation events (DOM commands are Runtime union members).
	FrameDOMEvent // producer → worker

	frameTypeCount
)

var frameTypeNames = [frameTypeCount]string{
	FrameHello:           "hello",
	FrameWelcome:         "welcome",
	FrameReplace:         "replace",
	FrameAppend:          "append",
	FrameAck:             "ack",
	FrameSnapshotRequest: "snapshot-request",
	FrameReject:          "reject",
	FrameClose:           "close",
	FrameRuntimeCommand:  "runtime.command",
	FrameRuntimeResult:   "runtime.result",
	FrameRuntimeCancel:   "runtime.cancel",
	FrameRuntimeAck:      "runtime.ack",
	FrameConsoleEnable:   "console.enable",
	FrameConsoleDisable:  "console.disable",
	FrameConsoleDiscard:  "console.discard",
	FrameScriptRead:      "script.read",
	FrameScriptMeta:      "script.meta",
	FrameScriptChunk:     "script.chunk",
	FrameScriptEnd:       "script.end",
	FrameQueryRequest:    "query.request",
	FrameQueryResult:     "query.result",
	FrameDOMEvent:        "dom.event",
}

// String returns the wire name ("append"), or "" for an invalid type.
func (t FrameType) String() string {
	if t >= frameTypeCount {
		return ""
	}
	return frameTypeNames[t]
}

// frameTypeOf maps a wire name to its type without allocating.
func frameTypeOf(b []byte) FrameType {
	for t := FrameHello; t < frameTypeCount; t++ {
		if string(b) == frameTypeNames[t] {
			return t
		}
	}
	return frameInvalid
}

// Direction says who may send a frame type.
type Direction uint8

const (
	ToWorker   Direction = 1 << iota // producer → worker
	ToProducer                       // worker → producer
)

type frameRule struct {
	dir       Direction
	sequenced bool       // envelope "seq" present (and only then)
	noGen     bool       // envelope "gen" absent (hello only)
	needs     Capability // capability the hello must declare; 0 = none
}

var frameRules = [frameTypeCount]frameRule{
	FrameHello:           {dir: ToWorker, noGen: true},
	FrameWelcome:         {dir: ToProducer},
	FrameReplace:         {dir: ToWorker, sequenced: true},
	FrameAppend:          {dir: ToWorker, sequenced: true},
	FrameAck:             {dir: ToProducer, sequenced: true},
	FrameSnapshotRequest: {dir: ToProducer},
	FrameReject:          {dir: ToProducer},
	FrameClose:           {dir: ToWorker | ToProducer},
	FrameRuntimeCommand:  {dir: ToProducer, needs: CapRuntime},
	FrameRuntimeResult:   {dir: ToWorker, needs: CapRuntime},
	FrameRuntimeCancel:   {dir: ToProducer, needs: CapRuntime},
	FrameRuntimeAck:      {dir: ToProducer, needs: CapRuntime},
	FrameConsoleEnable:   {dir: ToProducer, needs: CapConsole},
	FrameConsoleDisable:  {dir: ToProducer, needs: CapConsole},
	FrameConsoleDiscard:  {dir: ToProducer, needs: CapConsole},
	FrameScriptRead:      {dir: ToProducer, needs: CapScripts},
	FrameScriptMeta:      {dir: ToWorker, needs: CapScripts},
	FrameScriptChunk:     {dir: ToWorker, needs: CapScripts},
	FrameScriptEnd:       {dir: ToWorker, needs: CapScripts},
	FrameQueryRequest:    {dir: ToProducer, needs: CapQuery},
	FrameQueryResult:     {dir: ToWorker, needs: CapQuery},
	FrameDOMEvent:        {dir: ToWorker, needs: CapDOM},
}

// Direction reports who may send frames of this type.
func (t FrameType) Direction() Direction {
	if t >= frameTypeCount {
		return 0
	}
	return frameRules[t].dir
}

// Sequenced reports whether frames of this type carry envelope "seq".
func (t FrameType) Sequenced() bool { return t < frameTypeCount && frameRules[t].sequenced }

// Capability returns the capability a source must declare before frames of
// this type may flow, or 0.
func (t FrameType) Capability() Capability {
	if t >= frameTypeCount {
		return 0
	}
	return frameRules[t].needs
}

// Role is what kind of producer a source is. The carrier decides it (the
// host pipe grants RoleHost, /client grants RoleClient) and the hello must
// claim the same role.
type Role string

const (
	RoleHost   Role = "host"
	RoleClient Role = "client"
)

var roles = []Role{RoleHost, RoleClient}

// Capability is a request/response family a source serves. Capabilities
// are a bit set so checks on the hot path are one AND.
type Capability uint8

const (
	CapRuntime Capability = 1 << iota // runtime.* frames
	CapConsole                        // console.enable/disable/discard
	CapScripts                        // script.* frames
	CapQuery                          // query.* frames
	CapDOM                            // the DOM agent: dom* Runtime methods, dom.event
	capAll     = CapRuntime | CapConsole | CapScripts | CapQuery | CapDOM
)

var capabilityNames = []struct {
	c    Capability
	name string
}{{CapRuntime, "runtime"}, {CapConsole, "console"}, {CapScripts, "scripts"}, {CapQuery, "query"}, {CapDOM, "dom"}}

// String returns the wire name of a single capability.
func (c Capability) String() string {
	for _, n := range capabilityNames {
		if n.c == c {
			return n.name
		}
	}
	return ""
}

// Has reports whether every capability in want is in c.
func (c Capability) Has(want Capability) bool { return c&want == want }

// Topic is a kind of append/replace item. Topics are a bit set for the same
// reason as capabilities.
type Topic uint8

const (
	TopicConsole Topic = 1 << iota // ConsoleEvent
	TopicPage                      // PageInfo
	TopicScript                    // ScriptInfo
	TopicFetch                     // FetchEvent
	TopicApp                       // AppEvent
	topicAll     = TopicConsole | TopicPage | TopicScript | TopicFetch | TopicApp
)

var topicNames = []struct {
	t    Topic
	name string
}{{TopicConsole, "console"}, {TopicPage, "page"}, {TopicScript, "script"}, {TopicFetch, "fetch"}, {TopicApp, "app"}}

// String returns the wire name of a single topic.
func (t Topic) String() string {
	for _, n := range topicNames {
		if n.t == t {
			return n.name
		}
	}
	return ""
}

// Has reports whether every topic in want is in t.
func (t Topic) Has(want Topic) bool { return t&want == want }

func topicOf(name string) Topic {
	for _, n := range topicNames {
		if n.name == name {
			return n.t
		}
	}
	return 0
}

// UnmarshalEasyJSON reads a JSON array of distinct capability names.
func (c *Capability) UnmarshalEasyJSON(l *jlexer.Lexer) {
	*c = 0
	l.Delim('[')
	for !l.IsDelim(']') {
		s := l.UnsafeString()
		var bit Capability
		for _, n := range capabilityNames {
			if n.name == s {
				bit = n.c
			}
		}
		if bit == 0 || *c&bit != 0 {
			l.AddError(errEnum)
		}
		*c |= bit
		l.WantComma()
	}
	l.Delim(']')
}

// MarshalEasyJSON writes the set as an array of names.
func (c Capability) MarshalEasyJSON(w *jwriter.Writer) {
	w.RawByte('[')
	first := true
	for _, n := range capabilityNames {
		if c&n.c != 0 {
			if !first {
				w.RawByte(',')
			}
			first = false
			w.String(n.name)
		}
	}
	w.RawByte(']')
}

// UnmarshalEasyJSON reads a JSON array of distinct topic names.
func (t *Topic) UnmarshalEasyJSON(l *jlexer.Lexer) {
	*t = 0
	l.Delim('[')
	for !l.IsDelim(']') {
		bit := topicOf(l.UnsafeString())
		if bit == 0 || *t&bit != 0 {
			l.AddError(errEnum)
		}
		*t |= bit
		l.WantComma()
	}
	l.Delim(']')
}

// MarshalEasyJSON writes the set as an array of names.
func (t Topic) MarshalEasyJSON(w *jwriter.Writer) {
	w.RawByte('[')
	first := true
	for _, n := range topicNames {
		if t&n.t != 0 {
			if !first {
				w.RawByte(',')
			}
			first = false
			w.String(n.name)
		}
	}
	w.RawByte(']')
}

// CloseCode says why a source ended.
type CloseCode string

const (
	CloseNormal    CloseCode = "normal"           // producer or worker finished cleanly
	CloseGoingAway CloseCode = "going-away"       // page unload, host exit, carrier lost
	CloseReplaced  CloseCode = "replaced"         // a newer generation of the same source
	ClosePolicy    CloseCode = "policy-violation" // too many rejects, failed hello
	CloseShutdown  CloseCode = "shutdown"         // the worker is stopping
)

var closeCodes = []CloseCode{CloseNormal, CloseGoingAway, CloseReplaced, ClosePolicy, CloseShutdown}

// UnmarshalEasyJSON reads a frame type name (Reject.RefType).
func (t *FrameType) UnmarshalEasyJSON(l *jlexer.Lexer) {
	*t = frameTypeOf(l.UnsafeBytes())
	if *t == frameInvalid {
		l.AddError(errEnum)
	}
}

// MarshalEasyJSON writes the wire name.
func (t FrameType) MarshalEasyJSON(w *jwriter.Writer) { w.String(t.String()) }
