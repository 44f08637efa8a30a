package trace

import "errors"

// Sentinels, matched with errors.Is. The HTTP layer maps each to one status
// code (see statusFor in http.go); everything the client got wrong is a 4xx.
var (
	// ErrBadRequest: the request is malformed (unknown field, missing target,
	// too many arguments, a target that is not a regular file …).
	ErrBadRequest = errors.New("trace: bad request")
	// ErrOutsideWorkspace: the target or cwd resolves (symlinks included)
	// outside the workspace root.
	ErrOutsideWorkspace = errors.New("trace: path is outside the workspace")
	// ErrNotFound: no session has that id (never existed or was evicted).
	ErrNotFound = errors.New("trace: no such session")
	// ErrTooManySessions: every session slot holds a session that has not
	// finished, so none can be evicted.
	ErrTooManySessions = errors.New("trace: too many unfinished sessions")
	// ErrNodeUnavailable: the configured node executable cannot be resolved.
	ErrNodeUnavailable = errors.New("trace: node executable unavailable")
	// ErrWorkspace: the workspace root itself cannot be resolved.
	ErrWorkspace = errors.New("trace: workspace root unavailable")
	// ErrStart: node could not be started or the inspector attach failed.
	// The session stays listed with status "failed" and the reason.
	ErrStart = errors.New("trace: cannot start or attach the target")
	// ErrClosed: the engine is shutting down.
	ErrClosed = errors.New("trace: engine is shut down")
)
