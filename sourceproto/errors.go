package sourceproto

import (
	"errors"
	"strconv"
)

// RejectCode is the machine-readable reason in a reject frame. The set is
// closed: producers switch on it. docs/protocol.md, "Reject codes", says
// when each one is sent.
type RejectCode string

const (
	// RejectMalformed: not JSON, not the envelope grammar, or a body that
	// does not match its schema (unknown member, wrong type, missing or
	// invalid value, union with zero or several members).
	RejectMalformed RejectCode = "malformed"
	// RejectOversized: the frame or one of its parts is over a limit; the
	// reject names the limit and its maximum.
	RejectOversized RejectCode = "oversized"
	// RejectUnsupportedVersion: envelope "v" is not Version.
	RejectUnsupportedVersion RejectCode = "unsupported-version"
	// RejectUnknownType: envelope "type" names no frame type.
	RejectUnknownType RejectCode = "unknown-type"
	// RejectWrongDirection: a worker-to-producer frame type sent by a
	// producer (or the reverse).
	RejectWrongDirection RejectCode = "wrong-direction"
	// RejectUnauthorized: a hello with a missing or wrong token, or a role
	// the carrier does not grant.
	RejectUnauthorized RejectCode = "unauthorized"
	// RejectSourceMismatch: a frame names another source than the one the
	// connection opened.
	RejectSourceMismatch RejectCode = "source-mismatch"
	// RejectStaleGeneration: the frame's generation (or the connection's)
	// was replaced by a newer hello for the same source.
	RejectStaleGeneration RejectCode = "stale-generation"
	// RejectUnknownGeneration: a generation the worker never assigned to
	// this source.
	RejectUnknownGeneration RejectCode = "unknown-generation"
	// RejectUnexpectedFrame: valid frame, wrong state (append before the
	// initial replace, a second hello on one connection).
	RejectUnexpectedFrame RejectCode = "unexpected-frame"
	// RejectUndeclaredCapability: a frame of a family whose capability the
	// hello did not declare.
	RejectUndeclaredCapability RejectCode = "undeclared-capability"
	// RejectUndeclaredTopic: an item of a topic the hello did not declare.
	RejectUndeclaredTopic RejectCode = "undeclared-topic"
	// RejectSequenceRegression: a sequence number at or below one already
	// consumed (a duplicate or a reordering; the carriers are ordered).
	RejectSequenceRegression RejectCode = "sequence-regression"
	// RejectClosed: a frame after the source closed.
	RejectClosed RejectCode = "closed"
	// RejectOverCapacity: the registry already holds MaxSources sources.
	RejectOverCapacity RejectCode = "over-capacity"
)

// Package sentinels. A *RejectError matches the sentinel of its code with
// errors.Is, so callers need not compare codes.
var (
	ErrMalformed             = errors.New("sourceproto: malformed frame")
	ErrOversized             = errors.New("sourceproto: over a limit")
	ErrUnsupportedVersion    = errors.New("sourceproto: unsupported protocol version")
	ErrUnknownType           = errors.New("sourceproto: unknown frame type")
	ErrWrongDirection        = errors.New("sourceproto: frame type sent in the wrong direction")
	ErrUnauthorized          = errors.New("sourceproto: unauthorized")
	ErrSourceMismatch        = errors.New("sourceproto: frame for another source")
	ErrStaleGeneration       = errors.New("sourceproto: stale generation")
	ErrUnknownGeneration     = errors.New("sourceproto: unknown generation")
	ErrUnexpectedFrame       = errors.New("sourceproto: frame not allowed in this state")
	ErrUndeclaredCapability  = errors.New("sourceproto: undeclared capability")
	ErrUndeclaredTopic       = errors.New("sourceproto: undeclared topic")
	ErrSequenceRegression    = errors.New("sourceproto: sequence regression")
	ErrClosed                = errors.New("sourceproto: source closed")
	ErrOverCapacity          = errors.New("sourceproto: too many sources")
	ErrUnknownSource         = errors.New("sourceproto: unknown source")
	ErrNoOutbox              = errors.New("sourceproto: source has no outbox")
	errUnknownRejectSentinel = errors.New("sourceproto: reject")
)

var codeSentinels = map[RejectCode]error{
	RejectMalformed:            ErrMalformed,
	RejectOversized:            ErrOversized,
	RejectUnsupportedVersion:   ErrUnsupportedVersion,
	RejectUnknownType:          ErrUnknownType,
	RejectWrongDirection:       ErrWrongDirection,
	RejectUnauthorized:         ErrUnauthorized,
	RejectSourceMismatch:       ErrSourceMismatch,
	RejectStaleGeneration:      ErrStaleGeneration,
	RejectUnknownGeneration:    ErrUnknownGeneration,
	RejectUnexpectedFrame:      ErrUnexpectedFrame,
	RejectUndeclaredCapability: ErrUndeclaredCapability,
	RejectUndeclaredTopic:      ErrUndeclaredTopic,
	RejectSequenceRegression:   ErrSequenceRegression,
	RejectClosed:               ErrClosed,
	RejectOverCapacity:         ErrOverCapacity,
}

// RejectError is why a frame was refused. Reason is fixed text written by
// this package: it never quotes the frame, so a reject can be logged and
// sent back without echoing a token or page data.
type RejectError struct {
	Code   RejectCode
	Reason string
	// Limit and Max name the bound for RejectOversized (e.g.
	// "MaxFrameBytes", 1048576); empty otherwise.
	Limit string
	Max   int64
}

func (e *RejectError) Error() string {
	s := "sourceproto: " + string(e.Code)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Limit != "" {
		s += " (" + e.Limit + " " + strconv.FormatInt(e.Max, 10) + ")"
	}
	return s
}

// Is makes errors.Is(err, ErrStaleGeneration) and friends work.
func (e *RejectError) Is(target error) bool {
	s, ok := codeSentinels[e.Code]
	if !ok {
		s = errUnknownRejectSentinel
	}
	return s == target
}

func reject(code RejectCode, reason string) *RejectError {
	return &RejectError{Code: code, Reason: reason}
}

func overLimit(limit string, max int64) *RejectError {
	return &RejectError{Code: RejectOversized, Reason: "over " + limit, Limit: limit, Max: max}
}

func malformed(reason string) *RejectError {
	return &RejectError{Code: RejectMalformed, Reason: reason}
}
