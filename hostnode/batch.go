package hostnode

import (
	"context"

	"github.com/inspector-worker/inspector-worker/internal/cork"
)

// WriteBatch lets the one goroutine that writes requests to a session send
// several of them in one write syscall: between Hold and Release, the
// session's writes collect (bounded by cork.Max) and go out together. It is
// for a relay that already holds the next requests in hand; holding a write
// while waiting for anything else would delay Node's answer.
//
// A WriteBatch is bound to the session whose Dial got its context
// (WithWriteBatch); unbound (another Dial, or a Host that does not dial
// through this package) its methods do nothing.
type WriteBatch struct {
	w *cork.Writer // the session's, set by Dial
}

type batchKey struct{}

// WithWriteBatch returns a context for Dial (or a Host's OpenSession) that
// binds b to the session it opens.
func WithWriteBatch(ctx context.Context, b *WriteBatch) context.Context {
	return context.WithValue(ctx, batchKey{}, b)
}

// Hold starts holding writes.
func (b *WriteBatch) Hold() {
	if b != nil && b.w != nil {
		b.w.Cork()
	}
}

// Release writes what was held; an error means the connection is broken.
func (b *WriteBatch) Release() error {
	if b == nil || b.w == nil {
		return nil
	}
	return b.w.Uncork()
}
