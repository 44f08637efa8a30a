package hostnode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// helperEnv switches the test binary into a helper process (see TestOrphan).
const (
	helperEnv       = "HOSTNODE_TEST_HELPER"
	helperScriptEnv = "HOSTNODE_TEST_SCRIPT"
	helperRemoveEnv = "HOSTNODE_TEST_REMOVE" // Options.RemoveIfOrphaned, filepath.SplitList'd
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "orphan" {
		orphanHelper()
		return
	}
	// Orphaned grandchildren must be reaped by someone for kill(pid, 0) to
	// report ESRCH; PID 1 in a container often does not. Becoming a child
	// subreaper lets proctest.AssertGone reap them itself.
	os.Exit(proctest.Main(m, proctest.MainOptions{Package: "hostnode", Subreaper: true}))
}

// orphanHelper starts node through Start, reports its pid and the orphan
// reaper's, and waits to be SIGKILLed by TestOrphan or TestTreeDies. Node
// writes to the helper's stdout too.
func orphanHelper() {
	p, err := Start(context.Background(), Options{
		Argv: []string{"node", os.Getenv(helperScriptEnv)}, Stdout: os.Stdout,
		RemoveIfOrphaned: filepath.SplitList(os.Getenv(helperRemoveEnv)),
	})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	fmt.Printf("PID %d\nREAPER %d\n", p.PID(), p.reaper.pid())
	<-p.Done()
	os.Exit(3)
}

// testCtx is a watchdog, not a timing assertion: a hung test fails with a
// goroutine dump instead of hanging the suite.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	return proctest.Watchdog(t, 90*time.Second)
}

func writeFile(t *testing.T, name, body string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeScript writes a script for node: the test needs node (proctest.Node).
func writeScript(t *testing.T, js string) string {
	t.Helper()
	proctest.Node(t)
	return writeFile(t, "app.js", js, 0o644)
}

// startNode starts node on script and registers a cleanup that kills it and
// checks that its pid and the orphan reaper's are gone.
func startNode(t *testing.T, ctx context.Context, opts Options) *Process {
	t.Helper()
	p, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		p.Kill()
		proctest.AssertGone(t, p.PID())
		proctest.AssertGone(t, p.reaper.pid())
	})
	return p
}

func assertAlive(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("process %d should be running: %v", pid, err)
	}
}

// lineSink collects everything written and lets a test wait for a line.
type lineSink struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	grown chan struct{} // closed and replaced on every Write
}

func newLineSink() *lineSink { return &lineSink{grown: make(chan struct{})} }

func (s *lineSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	close(s.grown)
	s.grown = make(chan struct{})
	return len(p), nil
}

func (s *lineSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitLine returns the first complete line starting with prefix.
func (s *lineSink) waitLine(t *testing.T, ctx context.Context, prefix string) string {
	t.Helper()
	line, ok := s.findLine(ctx, prefix)
	if !ok {
		t.Fatalf("no line starting with %q; got:\n%s", prefix, s.String())
	}
	return line
}

// findLine returns the first complete line starting with prefix, or false
// once ctx is done.
func (s *lineSink) findLine(ctx context.Context, prefix string) (string, bool) {
	for {
		s.mu.Lock()
		text, grown := s.buf.String(), s.grown
		s.mu.Unlock()
		for line := range strings.Lines(text) {
			if strings.HasPrefix(line, prefix) && strings.HasSuffix(line, "\n") {
				return strings.TrimSpace(line), true
			}
		}
		select {
		case <-grown:
		case <-ctx.Done():
			return "", false
		}
	}
}

// cdpSession is a minimal CDP client for tests.
type cdpSession struct {
	c      *websocket.Conn
	nextID int
}

func dialSession(t *testing.T, ctx context.Context, url string) *cdpSession {
	t.Helper()
	c, err := Dial(ctx, url)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return &cdpSession{c: c}
}

// call sends one request and returns its result, skipping events.
func (s *cdpSession) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	s.nextID++
	id := s.nextID
	req, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if err := s.c.Write(ctx, websocket.MessageText, req); err != nil {
		return nil, fmt.Errorf("write %s: %w", method, err)
	}
	for {
		_, msg, err := s.c.Read(ctx)
		if err != nil {
			return nil, fmt.Errorf("read %s answer: %w", method, err)
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(msg, &resp); err != nil {
			return nil, err
		}
		if resp.ID != id {
			continue
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, resp.Error)
		}
		return resp.Result, nil
	}
}

// evaluate runs expr and returns its value (returnByValue).
func (s *cdpSession) evaluate(ctx context.Context, expr string) (any, error) {
	res, err := s.call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	if err != nil {
		return nil, err
	}
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	return r.Result.Value, nil
}
