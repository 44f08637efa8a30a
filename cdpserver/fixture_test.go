package cdpserver

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// worker is a real worker in front of a real node host, for one test.
type worker struct {
	t      testing.TB
	srv    *Server
	proc   *hostnode.Process
	host   *hostnode.Host
	script string // absolute path of the host script
}

// hostScript is the default fixture: it stays alive and offers globals the
// tests call through Runtime.evaluate.
const hostScript = `
globalThis.emit = (n, prefix = 'msg') => { for (let i = 0; i < n; i++) console.log(prefix + ' ' + i); return n; };
globalThis.emitBig = (n, size) => { const s = 'x'.repeat(size); for (let i = 0; i < n; i++) console.log('big ' + i, s); return n; };
function traced(x) {
  return x * 2;
}
globalThis.traced = traced;
globalThis.pauseSoon = () => { setTimeout(function paused() { debugger; console.log('after pause'); }, 0); return 'armed'; };
console.log('early message');
setInterval(() => {}, 1 << 30);
process.stdout.write('host ready\n');
`

// readySignal closes ready when the host prints "host ready": Node runs
// inspector requests on interrupts, even in the middle of the script's first
// console.log, so tests wait until the fixture has finished starting.
type readySignal struct {
	mu    sync.Mutex
	buf   []byte
	ready chan struct{}
}

func (r *readySignal) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buf == nil && r.ready == nil {
		return len(p), nil
	}
	r.buf = append(r.buf, p...)
	if r.ready != nil && strings.Contains(string(r.buf), "host ready\n") {
		close(r.ready)
		r.ready, r.buf = nil, nil
	}
	return len(p), nil
}

// startWorker writes script to a temp dir, starts it under node with the
// inspector, and serves a worker for it on 127.0.0.1:0. Everything is torn
// down, and the node process checked gone, at test end.
func startWorker(t testing.TB, script string, opts Options) *worker {
	t.Helper()
	return startWorkerHost(t, script, opts, nil)
}

// startWorkerHost is startWorker with the server's Host wrapped by wrap
// (nil: the real host as is).
func startWorkerHost(t testing.TB, script string, opts Options, wrap func(Host) Host) *worker {
	t.Helper()
	proctest.Node(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "host.js")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ready := make(chan struct{})
	stdout := &readySignal{ready: ready}
	proc, err := hostnode.Start(ctx, hostnode.Options{Argv: []string{"node", path}, Dir: dir, Stdout: stdout})
	if err != nil {
		t.Fatalf("start node: %v", err)
	}
	t.Cleanup(func() { proc.Kill(); proctest.AssertGone(t, proc.PID()) })
	host, err := hostnode.AttachHost(ctx, proc.InspectorURL(), hostnode.HostOptions{
		Exited: proc.Done(), ExitReason: func() string { return "the host exited" },
	})
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	ln, _, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	var h Host = host
	if wrap != nil {
		h = wrap(host)
	}
	srv := New(h, ln, opts)
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx, "test over")
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	if strings.Contains(script, "host ready") {
		select {
		case <-ready:
		case <-proc.Done():
			t.Fatalf("host exited before it was ready: %s", proc.StderrTail())
		case <-time.After(cdptest.Timeout):
			t.Fatalf("host did not print 'host ready' within %v", cdptest.Timeout)
		}
	}
	return &worker{t: t, srv: srv, proc: proc, host: host, script: path}
}

func (w *worker) dial(name string) *cdptest.Client {
	return cdptest.Dial(w.t, name, w.srv.PageWebSocketURL(), nil)
}

// dialDirect opens a session straight to Node, as a baseline.
func (w *worker) dialDirect(name string) *cdptest.Client {
	return cdptest.Dial(w.t, name, w.proc.InspectorURL(), &cdptest.DialOptions{Host: hostOf(w.proc.InspectorURL())})
}

func hostOf(wsURL string) string {
	h, _, _ := strings.Cut(strings.TrimPrefix(wsURL, "ws://"), "/")
	return h
}

func (w *worker) get(path string, host string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+w.srv.Addr()+path, nil)
	if err != nil {
		return nil, err
	}
	if host != "" {
		req.Host = host
	}
	return http.DefaultClient.Do(req)
}

// closeWindows is a watchdog's onFire for tests whose windows wait with
// Expect…: closing them makes those waits fail at once instead of after
// cdptest.Timeout.
func closeWindows(windows ...*cdptest.Client) func() {
	return func() {
		for _, w := range windows {
			w.Conn().CloseNow()
		}
	}
}
