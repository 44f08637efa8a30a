package carrier

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// ending is why a connection ends. Each connection records the first one
// (later ones are ignored) and acts on it in one place, its finish method.
type ending struct {
	code    sourceproto.CloseCode // told to the consumer through Source.Close
	reason  string                // fixed text: close frame, WebSocket close reason, logs
	goodbye bool                  // send close{code, reason} to the producer before hanging up
	discard bool                  // drop queued frames: the peer is gone or too slow to take them
	status  websocket.StatusCode  // client connections: the WebSocket close status
	err     error                 // host pipe: what ServeHostPipe returns
}

// maxCloseReason is the WebSocket limit on a close reason (RFC 6455: 125
// bytes of control payload, 2 of them the status).
const maxCloseReason = 123

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// closeFrame encodes close{code, reason} for ref. It returns nil only if
// the registry issued an invalid ref, which Marshal refuses; the carrier
// then hangs up without the frame.
func closeFrame(ref sourceproto.SourceRef, code sourceproto.CloseCode, reason string) []byte {
	b, err := sourceproto.Marshal(sourceproto.Header{Source: ref.ID, Gen: ref.Gen},
		&sourceproto.Close{Code: code, Reason: reason})
	if err != nil {
		return nil
	}
	return b
}

// oversizedReject is the reject a carrier sends for a frame it refused
// itself, before the registry could see it: the same frame the registry
// sends for an oversized frame. ref is nil before the hello (an anonymous
// reject).
func oversizedReject(ref *sourceproto.SourceRef) []byte {
	h := sourceproto.Header{}
	if ref != nil {
		h = sourceproto.Header{Source: ref.ID, Gen: ref.Gen}
	}
	b, _ := sourceproto.Marshal(h, &sourceproto.Reject{ // a fixed, valid frame
		Code: sourceproto.RejectOversized, Reason: "over MaxFrameBytes",
		Limit: "MaxFrameBytes", Max: sourceproto.MaxFrameBytes,
	})
	return b
}

// safeOpen and safeIngest recover a panic in the registry or in a
// consumer it calls: one bad frame must never kill the worker. The
// connection is then ended (its state may be inconsistent).
func safeOpen(reg *sourceproto.Registry, frame []byte, o sourceproto.OpenOptions) (src *sourceproto.Source, res sourceproto.Result, err error) {
	defer recoverTo(&err)
	src, res = reg.Open(frame, o)
	return src, res, nil
}

func safeIngest(src *sourceproto.Source, frame []byte) (res sourceproto.Result, err error) {
	defer recoverTo(&err)
	return src.Ingest(frame), nil
}

func recoverTo(err *error) {
	if v := recover(); v != nil {
		*err = fmt.Errorf("carrier: panic while handling a frame: %v\n%s", v, debug.Stack())
	}
}

// panicEnding ends a connection after a recovered panic. The consumer
// hears going-away: from its side the carrier was lost.
func panicEnding(err error) ending {
	return ending{code: sourceproto.CloseGoingAway, reason: "internal error", discard: true,
		status: websocket.StatusInternalError, err: err}
}

// helloEnding ends a connection whose first frame the registry refused;
// the registry's reject is already queued. The close reason names the
// reject code only: the registry's reason for unauthorized deliberately
// does not say whether the role or the token failed, and neither do we.
func helloEnding(rerr error) ending {
	reason := "hello refused"
	var re *sourceproto.RejectError
	if errors.As(rerr, &re) {
		reason += ": " + string(re.Code)
		if re.Code == sourceproto.RejectUnauthorized {
			reason = "hello refused: bad token or role"
		}
	}
	return ending{code: sourceproto.ClosePolicy, reason: reason,
		status: websocket.StatusPolicyViolation, err: fmt.Errorf("%w: %w", ErrHelloRefused, rerr)}
}

// resultEnding ends a connection after Ingest returned Close. The registry
// has already closed the source (and queued a close frame when it was for
// too many rejects); code only matters if it had not.
func resultEnding(res sourceproto.Result) ending {
	switch {
	case res.Err == nil:
		return ending{code: sourceproto.CloseNormal, reason: "closed by producer", status: websocket.StatusNormalClosure}
	case errors.Is(res.Err, sourceproto.ErrStaleGeneration):
		return ending{code: sourceproto.CloseReplaced, reason: "replaced by a newer connection",
			status: websocket.StatusNormalClosure}
	case errors.Is(res.Err, sourceproto.ErrClosed):
		return ending{code: sourceproto.ClosePolicy, reason: "source closed",
			status: websocket.StatusPolicyViolation, err: fmt.Errorf("%w: %w", ErrPolicy, res.Err)}
	}
	return ending{code: sourceproto.ClosePolicy, reason: "too many rejected frames",
		status: websocket.StatusPolicyViolation, err: fmt.Errorf("%w: %w", ErrPolicy, res.Err)}
}

// replacedEnding is for OnSuperseded: a newer hello took the source id.
// The registry already told the consumer; the old producer hears close
// {replaced} so it does not reconnect and fight the new generation.
func replacedEnding() ending {
	return ending{code: sourceproto.CloseReplaced, reason: "replaced by a newer connection", goodbye: true,
		status: websocket.StatusNormalClosure}
}

// shutdownEnding is for the worker stopping.
func shutdownEnding() ending {
	return ending{code: sourceproto.CloseShutdown, reason: "worker shutting down", goodbye: true,
		status: websocket.StatusGoingAway}
}

func nopLogf(string, ...any) {}
