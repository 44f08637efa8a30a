package carrier

import "errors"

// Package sentinels; match with errors.Is.
var (
	// ErrFrameTooLong: a host-pipe line grew past sourceproto.MaxFrameBytes
	// without a newline. The carrier refused it and hung up.
	ErrFrameTooLong = errors.New("carrier: frame over MaxFrameBytes")
	// ErrQueueFull: Outbox.Enqueue found the outgoing queue at its limit.
	// On the host pipe the frame is dropped and the pipe stays up; on a
	// client connection the connection is being closed as too slow.
	ErrQueueFull = errors.New("carrier: outgoing queue full")
	// ErrConnClosed: the connection is ending; nothing more is sent on it.
	ErrConnClosed = errors.New("carrier: connection closed")
	// ErrHelloRefused: the first frame did not open a source (the registry's
	// reject was sent and the carrier hung up). Wraps the *RejectError.
	ErrHelloRefused = errors.New("carrier: hello refused")
	// ErrPolicy: the producer broke the carrier's rules (wrote without
	// reading its answers, too many rejected frames) and was hung up on.
	ErrPolicy = errors.New("carrier: producer violated the carrier policy")
)
