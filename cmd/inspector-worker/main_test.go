package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// workerBin is the inspector-worker binary built from this checkout.
var workerBin string

func TestMain(m *testing.M) {
	if err := proctest.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "iw-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	workerBin = filepath.Join(dir, "inspector-worker")
	args := []string{"build", "-o", workerBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building inspector-worker: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuffer is a bytes.Buffer safe for the exec copier and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// workerProc is one inspector-worker process started by a test.
type workerProc struct {
	t              testing.TB
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	code           int
}

func startCmd(t testing.TB, dir string, args ...string) *workerProc {
	t.Helper()
	return startCmdEnv(t, dir, nil, args...)
}

// startCmdEnv is startCmd with env added to the worker's environment.
func startCmdEnv(t testing.TB, dir string, env []string, args ...string) *workerProc {
	t.Helper()
	if filepath.Base(workerBin) == "node" || slices.Contains(args, "node") {
		proctest.Node(t) // the worker (or the test) starts node by name
	}
	w := &workerProc{t: t, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	w.cmd = exec.Command(workerBin, args...)
	w.cmd.Dir = dir
	if env != nil {
		w.cmd.Env = append(os.Environ(), env...)
	}
	w.cmd.Stdout, w.cmd.Stderr = w.stdout, w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		w.cmd.Wait()
		w.code = w.cmd.ProcessState.ExitCode()
		if ws, ok := w.cmd.ProcessState.Sys().(interface{ Signaled() bool }); ok && ws.Signaled() {
			w.code = -1
		}
		close(w.done)
	}()
	t.Cleanup(func() {
		select {
		case <-w.done:
		default:
			w.cmd.Process.Kill()
			<-w.done
		}
		proctest.AssertGone(t, w.cmd.Process.Pid)
		if t.Failed() {
			t.Logf("worker stderr:\n%s\nworker stdout:\n%s", w.stderr, w.stdout)
		}
	})
	return w
}

// waitFor polls the worker's output for re and returns the first submatch.
func (w *workerProc) waitFor(out *syncBuffer, re string) string {
	w.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(cdptest.Timeout)
	for time.Now().Before(deadline) {
		if m := rx.FindStringSubmatch(out.String()); m != nil {
			if len(m) > 1 {
				return m[1]
			}
			return m[0]
		}
		select {
		case <-w.done:
			if m := rx.FindStringSubmatch(out.String()); m != nil {
				return m[len(m)-1]
			}
			w.t.Fatalf("worker exited (%d) before printing %q", w.code, re)
		case <-time.After(20 * time.Millisecond):
		}
	}
	w.t.Fatalf("worker never printed %q", re)
	return ""
}

// addr waits for the endpoint line and returns 127.0.0.1:PORT.
func (w *workerProc) addr() string {
	return w.waitFor(w.stderr, `inspector-worker: listening on http://(127\.0\.0\.1:\d+)`)
}

// nodePID returns the host's pid, which the fixtures print as "pid N".
func (w *workerProc) nodePID() int {
	pid, _ := strconv.Atoi(w.waitFor(w.stdout, `pid (\d+)`))
	return pid
}

func (w *workerProc) wait() int {
	w.t.Helper()
	select {
	case <-w.done:
		return w.code
	case <-time.After(cdptest.Timeout):
		w.t.Fatalf("worker did not exit within %v", cdptest.Timeout)
		return 0
	}
}

func writeScript(t testing.TB, body string) (dir, name string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "host.js"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, "host.js"
}
