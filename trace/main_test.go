package trace

import (
	"context"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMain fails the run when a test left a child process (zombies
// included) or a goroutine behind.
func TestMain(m *testing.M) {
	os.Exit(proctest.Main(m, proctest.MainOptions{Package: "trace", Children: true}))
}

// testCtx is a watchdog, not a timing assertion: a hung test fails with a
// goroutine dump instead of hanging the suite.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	return proctest.Watchdog(t, 120*time.Second)
}

// workspace writes files (name → content) into a new directory and returns
// its real path.
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// newEngine returns an engine whose cleanup shuts it down and checks that
// every process it ever started is gone.
func newEngine(t *testing.T, opts Options) *Engine {
	t.Helper()
	proctest.Node(t)
	e := New(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		sessions := e.List()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		for _, s := range sessions {
			if s.PID != 0 {
				proctest.AssertGone(t, s.PID)
			}
		}
	})
	return e
}

// run starts target and waits for its end.
func run(t *testing.T, ctx context.Context, e *Engine, req StartRequest) SessionDetail {
	t.Helper()
	s, err := e.Start(ctx, req)
	if err != nil {
		t.Fatalf("Start(%+v): %v", req, err)
	}
	if s.Status != StatusRunning && s.Status != StatusExited {
		t.Fatalf("Start returned status %q, want running", s.Status)
	}
	if _, err := e.Wait(ctx, s.ID); err != nil {
		d, _ := e.Get(s.ID)
		t.Fatalf("Wait: %v; session so far: %+v", err, d)
	}
	d, err := e.Get(s.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	proctest.AssertGone(t, d.Session.PID)
	return d
}

func kinds(events []Event) map[string]int {
	out := map[string]int{}
	for _, ev := range events {
		out[ev.Kind]++
	}
	return out
}

func findEvent(events []Event, kind, subtype string) *Event {
	for i := range events {
		if events[i].Kind == kind && (subtype == "" || events[i].Subtype == subtype) {
			return &events[i]
		}
	}
	return nil
}
