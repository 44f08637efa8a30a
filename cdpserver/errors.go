package cdpserver

import (
	"errors"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/internal/cdpwire"
)

// CDP error codes the worker answers with (cdpwire: the page backend
// answers with them too).
const (
	codeParseError     = cdpwire.CodeParseError
	codeInvalidRequest = cdpwire.CodeInvalidRequest
	codeMethodNotFound = cdpwire.CodeMethodNotFound
	codeInvalidParams  = cdpwire.CodeInvalidParams
	codeInternal       = cdpwire.CodeInternal
	codeServerError    = cdpwire.CodeServerError
	codeSessionUnknown = cdpwire.CodeSessionUnknown
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
	return cdpwire.AppendError(b, id, sessionID, e.Code, e.Message)
}

// appendResult renders {"id":ID,"result":RESULT}; result must be a JSON object.
func appendResult(b []byte, id jsontext.Value, result []byte) []byte {
	return cdpwire.AppendResult(b, id, result)
}

// logEntry renders a Log.entryAdded the worker itself says.
func logEntry(level, text string, at time.Time) []byte {
	return cdpproject.LogEntry(cdpproject.SourceOther, cdplog.EntryLevel(level), text, cdpproject.Millis(at))
}
