// Package cdpwire is what the worker's transport (cdpserver) and its realm
// backends (pagerealm, hostrealm) share about a DevTools window's wire: the
// error codes, the answer envelope, the bound of a window's queue, and the
// lookups of a message's members that leave its other bytes untouched
// (member.go). It has no state.
package cdpwire

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// CDP error codes the worker answers with. The frontend logs "Request X failed"
// in its own console for every code except CodeServerError (-32000),
// -32001, -32015 and -32016, so deliberate refusals use CodeServerError.
const (
	CodeParseError     = -32700 // the message is not JSON or not an object
	CodeInvalidRequest = -32600 // id/method missing or of the wrong type
	CodeMethodNotFound = -32601 // nobody implements the method
	CodeInvalidParams  = -32602 // params of an intercepted method are malformed
	CodeInternal       = -32603 // the worker failed (a recovered panic)
	CodeServerError    = -32000 // deliberate refusal or host gone; quiet in the frontend
	CodeSessionUnknown = -32001 // a flattened child session id we never created
)

// MaxQueuedMessages bounds the messages queued to one window: ~3 s of
// Node's fastest console flood to one session. A realm backend sizes what it
// sends a window at once (an enable's list) by it.
const MaxQueuedMessages = 100_000

// AppendError renders {"id":ID,"error":{"code":C,"message":M}} (id omitted when
// the request carried none, as Chrome does for unparseable input).
func AppendError(b []byte, id jsontext.Value, sessionID string, code int, message string) []byte {
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
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b, _ = jsontext.AppendQuote(b, message)
	return append(b, "}}"...)
}

// AppendResult renders {"id":ID,"result":R}; result is JSON already.
func AppendResult(b []byte, id jsontext.Value, result []byte) []byte {
	b = append(b, `{"id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}
