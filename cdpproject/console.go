package cdpproject

import (
	"math"
	"strconv"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Runtime.consoleAPICalled is the one message encoded by hand: every
// console call of every page goes through it, under the hub's lock.
// BenchmarkClientConsoleToDevTools measured the typed path (consoleParams
// through jsonv2) at +9 allocations and +650 B per event over this one
// (docs/agent-note.md, "One projector"). The hand encoder decides nothing:
// which members are present and their values come from the same helpers
// as the typed projection (objectValue, scriptID, Preview), and it writes
// the members in cdproto's order, so TestConsoleHandMatchesTyped holds it
// byte for byte to consoleParams encoded by jsonv2.

// consoleParams is the typed projection of a page's console call, the
// reference the hand encoder is held to. ids, when not nil, holds each
// argument's objectId in the receiving window ("" for none); the page's
// handles are never exposed.
func (v *Values) consoleParams(ev *sourceproto.ConsoleEvent, ids []string) *cdpruntime.EventConsoleAPICalled {
	out := &cdpruntime.EventConsoleAPICalled{Type: cdpruntime.ConsoleAPICalledType(ev.Type), Args: make([]*cdpruntime.RemoteObject, len(ev.Args)),
		ExecutionContextID: cdpruntime.ExecutionContextID(v.ContextID), Timestamp: cdpruntime.Timestamp(ev.Timestamp),
		StackTrace: v.StackTrace(ev.StackTrace), Context: ev.Context}
	for i := range ev.Args {
		out.Args[i] = remoteObject(&ev.Args[i], argID(ids, i))
	}
	return out
}

func argID(ids []string, i int) string {
	if ids == nil {
		return ""
	}
	return ids[i]
}

// AppendConsoleAPICalled appends the whole Runtime.consoleAPICalled
// message for a page's console call to b. ids is as for consoleParams.
func (v *Values) AppendConsoleAPICalled(b []byte, ev *sourceproto.ConsoleEvent, ids []string) []byte {
	b = append(b, `{"method":"Runtime.consoleAPICalled","params":{"type":`...)
	b = appendString(b, string(ev.Type))
	b = append(b, `,"args":[`...)
	for i := range ev.Args {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendRemoteObject(b, &ev.Args[i], argID(ids, i))
	}
	b = append(b, `],"executionContextId":`...)
	b = strconv.AppendInt(b, int64(v.ContextID), 10)
	b = append(b, `,"timestamp":`...)
	b = appendFloat(b, ev.Timestamp)
	if st := ev.StackTrace; st != nil {
		b = append(b, `,"stackTrace":{`...)
		if st.Description != "" {
			b = append(b, `"description":`...)
			b = appendString(b, st.Description)
			b = append(b, ',')
		}
		b = append(b, `"callFrames":[`...)
		for i := range st.CallFrames {
			f := &st.CallFrames[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"functionName":`...)
			b = appendString(b, f.FunctionName)
			b = append(b, `,"scriptId":`...)
			b = appendString(b, string(v.scriptID(f.URL)))
			b = append(b, `,"url":`...)
			b = appendString(b, f.URL)
			b = append(b, `,"lineNumber":`...)
			b = strconv.AppendInt(b, f.LineNumber, 10)
			b = append(b, `,"columnNumber":`...)
			b = strconv.AppendInt(b, f.ColumnNumber, 10)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	if ev.Context != "" {
		b = append(b, `,"context":`...)
		b = appendString(b, ev.Context)
	}
	return append(b, "}}"...)
}

// appendRemoteObject writes remoteObject(a, objectID) as jsonv2 would.
func appendRemoteObject(b []byte, a *sourceproto.RemoteObject, objectID string) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, string(a.Type))
	if a.Subtype != "" {
		b = append(b, `,"subtype":`...)
		b = appendString(b, string(a.Subtype))
	}
	if a.ClassName != "" {
		b = append(b, `,"className":`...)
		b = appendString(b, a.ClassName)
	}
	if val := objectValue(a); val != nil {
		b = append(b, `,"value":`...)
		b = append(b, val...) // validated JSON already (the decoder's)
	}
	if a.UnserializableValue != "" {
		b = append(b, `,"unserializableValue":`...)
		b = appendString(b, a.UnserializableValue)
	}
	if a.Description != "" {
		b = append(b, `,"description":`...)
		b = appendString(b, a.Description)
	}
	if objectID != "" {
		b = append(b, `,"objectId":`...)
		b = appendString(b, objectID)
	}
	if a.Preview != nil {
		// Rare beside primitives, and nested: the typed path, so a preview
		// is projected in one place.
		if pb, err := Marshal(Preview(a.Preview)); err == nil {
			b = append(b, `,"preview":`...)
			b = append(b, pb...)
		}
	}
	return append(b, '}')
}

// appendString quotes s as the encoder does with AllowInvalidUTF8: an
// invalid byte becomes U+FFFD (the error says only that).
func appendString(b []byte, s string) []byte {
	b, _ = jsontext.AppendQuote(b, s)
	return b
}

// appendFloat writes a number as the encoder does (ES6 number syntax):
// plain digits between 1e-6 and 1e21, which every CDP timestamp is, else
// jsontext's own formatting. The decoder never yields NaN or ±Inf.
func appendFloat(b []byte, f float64) []byte {
	if a := math.Abs(f); a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	return append(b, jsontext.Float(f).String()...)
}
