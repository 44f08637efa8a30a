package trace

import (
	"context"
	"errors"
	"fmt"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain fails the run when a test left a child process (zombies
// included) or one of this package's goroutines behind.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := checkNoChildren(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		if err := checkNoLeakedGoroutines(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// children lists the pids whose parent is this test binary.
func children() []string {
	self := strconv.Itoa(os.Getpid())
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may contain spaces, so cut at the last ')'.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		if f := strings.Fields(string(stat)[i+1:]); len(f) > 1 && f[1] == self {
			out = append(out, d.Name()+" "+strings.TrimSpace(string(stat)))
		}
	}
	return out
}

func checkNoChildren() error {
	var left []string
	for range 500 {
		if left = children(); len(left) == 0 {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("trace tests: child processes left behind:\n%s", strings.Join(left, "\n"))
}

func checkNoLeakedGoroutines() error {
	return proctest.CheckNoLeakedGoroutines("trace", "trace.(*control)", "trace.(*api)", "hostnode.(*Process)", "coder/websocket.(*Conn)", "os/exec.(*Cmd)")
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
				assertGone(t, s.PID)
			}
		}
	})
	return e
}

// assertGone fails unless pid ends up nonexistent. Sessions' children are
// reaped by hostnode before their session finishes, so ESRCH is reliable.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	for range 1000 {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	t.Errorf("process %d still exists: %s", pid, stat)
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
	assertGone(t, d.Session.PID)
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
