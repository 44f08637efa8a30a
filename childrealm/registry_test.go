package childrealm

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientjs "github.com/inspector-worker/inspector-worker/client/js"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// childScript prints its pid, starts a worker thread (which must not
// register: it is not a process) and lives until its stdin closes.
const childScript = `
const { Worker } = require('node:worker_threads');
new Worker('setTimeout(() => {}, 60000)', { eval: true }).unref();
process.stdout.write(process.pid + '\n');
process.stdin.on('data', () => {}).on('end', () => process.exit(0));
`

type fixture struct {
	t       *testing.T
	reg     *Registry
	srv     *httptest.Server
	token   sourceproto.Token
	preload string
	script  string
	changes chan struct{}
}

func newFixture(t *testing.T, limit int) *fixture {
	t.Helper()
	tok, err := sourceproto.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := &fixture{t: t, token: tok, preload: filepath.Join(dir, "preload.cjs"), script: filepath.Join(dir, "child.js"),
		changes: make(chan struct{}, 64)}
	if err := os.WriteFile(f.preload, clientjs.PreloadCJS(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.script, []byte(childScript), 0o600); err != nil {
		t.Fatal(err)
	}
	f.reg = NewRegistry(Options{Limit: limit, Logf: t.Logf, OnChange: func() {
		select {
		case f.changes <- struct{}{}:
		default:
		}
	}})
	f.srv = httptest.NewServer(Handler(f.reg, tok))
	t.Cleanup(func() {
		f.reg.Close()
		f.srv.Close()
	})
	return f
}

// child is one node process started as the host would start it: the
// preload through NODE_OPTIONS, the child variables in its environment.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	pid    int
	stderr *syncBuffer
}

func (f *fixture) start(token string) *child {
	f.t.Helper()
	cmd := exec.Command(proctest.Node(f.t), f.script)
	cmd.Env = append(os.Environ(),
		"NODE_OPTIONS=--require "+f.preload,
		"INSPECTOR_WORKER_CHILD_ENDPOINT="+strings.TrimPrefix(f.srv.URL, "http://"),
		"INSPECTOR_WORKER_CHILD_TOKEN="+token)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make([]byte, 32)
	n, _ := out.Read(line)
	c.pid, err = strconv.Atoi(strings.TrimSpace(string(line[:n])))
	if err != nil {
		f.t.Fatalf("child printed %q, not its pid (stderr: %s)", line[:n], c.stderr)
	}
	return c
}

// waitFor polls the registry (woken by OnChange) until cond holds; a hang
// detector, not a timing assertion.
func (f *fixture) waitFor(what string, cond func([]*Child) bool) {
	f.t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond(f.reg.Children()) {
		select {
		case <-f.changes:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			f.t.Fatalf("%s: not within 10 s; children: %v", what, pids(f.reg.Children()))
		}
	}
}

func pids(cs []*Child) []int {
	out := []int{}
	for _, c := range cs {
		out = append(out, c.PID)
	}
	return out
}

func has(pid int) func([]*Child) bool {
	return func(cs []*Child) bool {
		for _, c := range cs {
			if c.PID == pid {
				return true
			}
		}
		return false
	}
}

// A child node process with the preload and the child variables registers
// with its pid, argv and a live inspector (its worker thread does not); when
// it exits it is forgotten.
func TestChildRegistersAndIsForgottenOnExit(t *testing.T) {
	f := newFixture(t, 0)
	c := f.start(f.token.Reveal())
	f.waitFor("the child registered", has(c.pid))
	got := f.reg.Children()
	if len(got) != 1 {
		t.Fatalf("followed %v, want only the child %d (its worker thread is no process)", pids(got), c.pid)
	}
	if argv := got[0].Argv; len(argv) != 2 || argv[1] != f.script {
		t.Errorf("argv = %q, want [node %s]", argv, f.script)
	}
	if !strings.Contains(got[0].Title(), "(pid "+strconv.Itoa(c.pid)+")") {
		t.Errorf("title %q does not name the pid", got[0].Title())
	}
	sess, err := got[0].Host.OpenSession(context.Background())
	if err != nil {
		t.Fatalf("a window session to the child's inspector: %v", err)
	}
	sess.CloseNow()
	exited := time.Now()
	c.stdin.Close()
	f.waitFor("the exited child forgotten", func(cs []*Child) bool { return len(cs) == 0 })
	t.Logf("forgotten %v after the child was told to exit", time.Since(exited).Round(time.Millisecond))
	proctest.AssertGone(t, c.pid)
}

// A wrong token is refused, the child runs on unobserved and says why.
func TestChildWithWrongTokenIsRefused(t *testing.T) {
	f := newFixture(t, 0)
	c := f.start("not-the-token")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(c.stderr.String(), "bad child token") {
		if time.Now().After(deadline) {
			t.Fatalf("no refusal on the child's stderr: %q", c.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := f.reg.Children(); len(got) != 0 {
		t.Fatalf("followed %v with a wrong token", pids(got))
	}
}

// Past the limit a child is refused with a message naming the limit; once a
// followed child exits, its slot is free again.
func TestChildLimit(t *testing.T) {
	f := newFixture(t, 1)
	first := f.start(f.token.Reveal())
	f.waitFor("the first child registered", has(first.pid))
	second := f.start(f.token.Reveal())
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(second.stderr.String(), "already following 1 child processes (the limit)") {
		if time.Now().After(deadline) {
			t.Fatalf("no limit refusal on the second child's stderr: %q", second.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("second child's stderr: %s", bytes.TrimSpace([]byte(second.stderr.String())))
	if got := pids(f.reg.Children()); len(got) != 1 || got[0] != first.pid {
		t.Fatalf("followed %v, want only %d", got, first.pid)
	}
	first.stdin.Close()
	f.waitFor("the first child forgotten", func(cs []*Child) bool { return len(cs) == 0 })
	third := f.start(f.token.Reveal())
	f.waitFor("a child registered in the freed slot", has(third.pid))
}

// A registration after Close is refused: the run is ending.
func TestRegisterAfterClose(t *testing.T) {
	r := NewRegistry(Options{})
	r.Close()
	if err := r.Register(context.Background(), Registration{PID: 1, URL: "ws://127.0.0.1:1/x"}); err == nil {
		t.Fatal("registered after Close")
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The wait file exists exactly while some window wants children to wait,
// whatever order windows come and go in, and Close removes it.
func TestSetWaitersKeepsWaitFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "wait")
	r := NewRegistry(Options{WaitFile: file, Logf: t.Logf})
	exists := func() bool { _, err := os.Stat(file); return err == nil }
	for i, step := range []struct {
		delta int
		want  bool
	}{{1, true}, {1, true}, {-1, true}, {-1, false}, {-1, false}, {1, true}} {
		r.SetWaiters(step.delta)
		if exists() != step.want {
			t.Fatalf("step %d (%+d): the wait file exists %v, want %v", i, step.delta, exists(), step.want)
		}
	}
	var wg sync.WaitGroup
	for range 50 { // windows that each ask, then close
		wg.Add(1)
		go func() { defer wg.Done(); r.SetWaiters(1); r.SetWaiters(-1) }()
	}
	wg.Wait()
	if !exists() {
		t.Fatalf("after concurrent windows came and went the wait file is gone; one window still waits")
	}
	r.Close()
	if exists() {
		t.Fatalf("Close left the wait file")
	}
}
