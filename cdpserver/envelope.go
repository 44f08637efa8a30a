package cdpserver

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/internal/cdpwire"
)

// request is the strict envelope of a DevTools → worker message. Params stay raw
// bytes: only methods the worker intercepts ever decode them.
type request struct {
	ID        jsontext.Value // the raw integer, echoed back byte for byte
	Method    string
	SessionID string
	Params    jsontext.Value // nil when absent
}

// parseRequest reads the top-level members of a CDP request. It rejects
// anything that is not an object with an integer id and a string method.
func parseRequest(msg []byte) (request, *wireError) {
	var r request
	dec := jsontext.NewDecoder(bytes.NewReader(msg), cdpwire.DecodeOpts...)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return r, &wireError{codeParseError, "Message must be a valid JSON object"}
	}
	for dec.PeekKind() != '}' {
		name, err := cdpwire.ReadName(dec)
		if err != nil {
			return r, &wireError{codeParseError, "Message must be a valid JSON object"}
		}
		val, err := dec.ReadValue()
		if err != nil {
			return r, &wireError{codeParseError, "Message must be a valid JSON object"}
		}
		// A Value is only valid until the decoder's next call: keep the
		// bytes of msg it came from instead.
		end := dec.InputOffset()
		val = msg[end-int64(len(val)) : end]
		switch name {
		case "id":
			if val.Kind() != '0' || !isInteger(val) {
				return request{}, &wireError{codeInvalidRequest, "Message must have integer 'id' property"}
			}
			r.ID = val
		case "method":
			if val.Kind() != '"' {
				return r, &wireError{codeInvalidRequest, "Message must have string 'method' property"}
			}
			r.Method = cdpwire.Unquote(val)
		case "sessionId":
			if val.Kind() != '"' {
				return r, &wireError{codeInvalidRequest, "'sessionId' must be a string"}
			}
			r.SessionID = unquoteOrRaw(val)
		case "params":
			if val.Kind() != '{' {
				return r, &wireError{codeInvalidParams, "'params' must be an object"}
			}
			r.Params = val
		}
	}
	if _, err := dec.ReadToken(); err != nil || len(bytes.TrimSpace(msg[dec.InputOffset():])) > 0 {
		return r, &wireError{codeParseError, "Message must be a valid JSON object"}
	}
	if r.ID == nil {
		return r, &wireError{codeInvalidRequest, "Message must have integer 'id' property"}
	}
	if r.Method == "" {
		return r, &wireError{codeInvalidRequest, "Message must have string 'method' property"}
	}
	return r, nil
}

func isInteger(v jsontext.Value) bool {
	_, err := strconv.ParseInt(string(v), 10, 64)
	return err == nil
}

// unquoteOrRaw is unquote for strings that may hold lone surrogates (which
// have no UTF-8 form): those keep their raw JSON text, so they are never
// mistaken for an empty string.
func unquoteOrRaw(v jsontext.Value) string {
	if b, err := jsontext.AppendUnquote(nil, v); err == nil {
		return string(b)
	}
	return string(v)
}

// hostMessage is what the worker needs to know about a message from Node: the
// response id (responses) or the event method (events).
type hostMessage struct {
	ID         int64  // valid when IsResponse
	Method     string // event name; empty for responses
	IsResponse bool
}

// parseHostMessage classifies a message from Node. V8 serialises responses as
// {"id":N,… and events as {"method":"X",… — the fast paths read exactly that
// prefix; anything else falls back to a full envelope scan.
func parseHostMessage(msg []byte) (hostMessage, error) {
	if rest, ok := bytes.CutPrefix(msg, []byte(`{"id":`)); ok {
		end := 0
		for end < len(rest) && (rest[end] == '-' || rest[end] >= '0' && rest[end] <= '9') {
			end++
		}
		if id, err := strconv.ParseInt(string(rest[:end]), 10, 64); err == nil && end < len(rest) && (rest[end] == ',' || rest[end] == '}') {
			return hostMessage{ID: id, IsResponse: true}, nil
		}
	}
	if rest, ok := bytes.CutPrefix(msg, []byte(`{"method":"`)); ok {
		if end := bytes.IndexByte(rest, '"'); end > 0 && bytes.IndexByte(rest[:end], '\\') < 0 {
			return hostMessage{Method: eventName(rest[:end])}, nil
		}
	}
	return parseHostMessageSlow(msg)
}

// eventName returns the event name b as a string without allocating for the
// events Node sends many of (a switch on string(b) does not allocate).
func eventName(b []byte) string {
	switch string(b) {
	case "Runtime.consoleAPICalled":
		return "Runtime.consoleAPICalled"
	case "Debugger.scriptParsed":
		return "Debugger.scriptParsed"
	case "Runtime.exceptionThrown":
		return "Runtime.exceptionThrown"
	case "HeapProfiler.addHeapSnapshotChunk":
		return "HeapProfiler.addHeapSnapshotChunk"
	case "HeapProfiler.reportHeapSnapshotProgress":
		return "HeapProfiler.reportHeapSnapshotProgress"
	case "NodeTracing.dataCollected":
		return "NodeTracing.dataCollected"
	}
	return string(b)
}

// parseHostMessageSlow classifies by whichever of "id" and "method" comes
// first, exactly like the fast paths (V8 always writes it first; a message
// with both is not something Node sends, and both paths must agree on it).
func parseHostMessageSlow(msg []byte) (hostMessage, error) {
	var m hostMessage
	decided := false
	dec := jsontext.NewDecoder(bytes.NewReader(msg), cdpwire.DecodeOpts...)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return m, fmt.Errorf("cdpserver: host message is not a JSON object")
	}
	for dec.PeekKind() != '}' {
		name, err := cdpwire.ReadName(dec)
		if err != nil {
			return hostMessage{}, fmt.Errorf("cdpserver: host message: %w", err)
		}
		val, err := dec.ReadValue()
		if err != nil {
			return hostMessage{}, fmt.Errorf("cdpserver: host message: %w", err)
		}
		switch {
		case decided:
		case name == "id":
			id, err := strconv.ParseInt(string(val), 10, 64)
			if err != nil {
				return hostMessage{}, fmt.Errorf("cdpserver: host message id %s is not an integer", val)
			}
			m, decided = hostMessage{ID: id, IsResponse: true}, true
		case name == "method":
			if m.Method = cdpwire.Unquote(val); m.Method == "" {
				return hostMessage{}, fmt.Errorf("cdpserver: host message method %s is not a string", val)
			}
			decided = true
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return hostMessage{}, fmt.Errorf("cdpserver: host message: %w", err)
	}
	if !decided {
		return hostMessage{}, fmt.Errorf("cdpserver: host message has neither id nor method")
	}
	return m, nil
}
