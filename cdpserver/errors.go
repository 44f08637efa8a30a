package cdpserver

import (
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// CDP error codes the worker answers with. The frontend logs "Request X failed"
// in its own console for every code except codeServerError (-32000),
// -32001, -32015 and -32016, so deliberate refusals use codeServerError.
const (
	codeParseError     = -32700 // the message is not JSON or not an object
	codeInvalidRequest = -32600 // id/method missing or of the wrong type
	codeMethodNotFound = -32601 // nobody implements the method
	codeInvalidParams  = -32602 // params of an intercepted method are malformed
	codeInternal       = -32603 // the worker failed (a recovered panic)
	codeServerError    = -32000 // deliberate refusal or host gone; quiet in the frontend
	codeSessionUnknown = -32001 // a flattened child session id we never created
)

// Sentinel errors of this package.
var (
	ErrNonLoopback = errors.New("cdpserver: refusing to listen on a non-loopback address")
	ErrHostGone    = errors.New("cdpserver: the Node host is gone")
)

// wireError is the one CDP error type; it renders as the "error" member of an answer.
type wireError struct {
	Code    int
	Message string
}

func (e *wireError) Error() string { return e.Message }

func notFound(method string) *wireError {
	return &wireError{codeMethodNotFound, "'" + method + "' wasn't found"}
}

// appendError renders {"id":ID,"error":{"code":C,"message":M}} (id omitted when
// the request carried none, as Chrome does for unparseable input).
func appendError(b []byte, id jsontext.Value, sessionID string, e *wireError) []byte {
	b = append(b, '{')
	if len(id) > 0 {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	if sessionID != "" {
		b = append(b, `"sessionId":`...)
		b, _ = jsontext.AppendQuote(b, sessionID)
		b = append(b, ',')
	}
	b = append(b, `"error":{"code":`...)
	b = strconv.AppendInt(b, int64(e.Code), 10)
	b = append(b, `,"message":`...)
	b, _ = jsontext.AppendQuote(b, e.Message)
	return append(b, "}}"...)
}

// appendResult renders {"id":ID,"result":RESULT}; result must be a JSON object.
func appendResult(b []byte, id jsontext.Value, result []byte) []byte {
	b = append(b, `{"id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}
