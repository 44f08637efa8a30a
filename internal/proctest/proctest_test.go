package proctest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestLeakCheck: a goroutine started after the snapshot and still blocked
// is reported with its stack; once it ends, the check passes; one that
// existed before, or is ignored, is never reported.
func TestLeakCheck(t *testing.T) {
	old := make(chan struct{})
	defer close(old)
	go func() { <-old }()
	before := goroutineIDs()

	block := make(chan struct{})
	go leakyWorker(block)
	err := checkLeaks("proctest", before, nil, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "proctest.leakyWorker") || !strings.Contains(err.Error(), " 1 goroutines leaked") {
		t.Errorf("leak not reported (or more reported): %v", err)
	}
	if err := checkLeaks("proctest", before, []string{"proctest.leakyWorker"}, 50*time.Millisecond); err != nil {
		t.Errorf("ignored goroutine reported: %v", err)
	}
	// A goroutine that ends within the settle window is no leak.
	time.AfterFunc(20*time.Millisecond, func() { close(block) })
	if err := checkLeaks("proctest", before, nil, leakSettle); err != nil {
		t.Errorf("ended goroutine reported: %v", err)
	}
}

func leakyWorker(block chan struct{}) { <-block }

// TestWatchdog: past its deadline the watchdog ends the context, runs
// onFire, and fails the test with a goroutine dump naming where it hung.
func TestWatchdog(t *testing.T) {
	fired := make(chan struct{})
	ft := &fakeTB{TB: t, name: t.Name() + "/hung"}
	ctx := Watchdog(ft, 10*time.Millisecond, func() { close(fired) })
	<-ctx.Done()
	<-fired // hangs (and the test binary's -timeout reports it) if onFire never runs
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("ctx.Err() = %v", ctx.Err())
	}
	ft.runCleanups()
	if len(ft.errors) != 1 || !strings.Contains(ft.errors[0], "still running after 10ms") || !strings.Contains(ft.errors[0], "proctest.TestWatchdog") {
		t.Errorf("watchdog failure = %q", ft.errors)
	}

	quiet := &fakeTB{TB: t, name: t.Name() + "/quick"}
	_ = Watchdog(quiet, time.Hour, func() { t.Error("onFire ran for a test that ended in time") })
	quiet.runCleanups()
	if len(quiet.errors) != 0 {
		t.Errorf("a test that ended in time failed: %q", quiet.errors)
	}
}

// fakeTB records what Watchdog reports, so that its failure does not fail
// this test.
type fakeTB struct {
	testing.TB
	name     string
	cleanups []func()
	errors   []string
}

func (f *fakeTB) Helper()                  {}
func (f *fakeTB) Name() string             { return f.name }
func (f *fakeTB) Context() context.Context { return context.Background() }
func (f *fakeTB) Cleanup(fn func())        { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}
