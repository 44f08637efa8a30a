package proctest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Watchdog returns a context that ends with the test (t.Context) or after
// d, whichever comes first: a hang detector, not a timing assertion. When d
// passes first, it records every goroutine's stack at that moment, runs
// onFire (e.g. closing the test's connections, so that waits which do not
// watch the context fail at once too), and the test fails with the dump,
// instead of stalling the suite or failing without saying where it hung.
func Watchdog(t testing.TB, d time.Duration, onFire ...func()) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	fired := make(chan string, 1)
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return // the test ended first
		}
		fired <- strings.Join(Goroutines(), "\n\n")
		for _, f := range onFire {
			f()
		}
	})
	name := t.Name()
	t.Cleanup(func() {
		stop()
		// ctx.Err keeps the first reason: DeadlineExceeded only when d
		// passed before the test ended, and then the dump is (being) taken.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("watchdog: %s still running after %v (a hang?); goroutines then:\n%s", name, d, <-fired)
		}
		cancel()
	})
	return ctx
}
