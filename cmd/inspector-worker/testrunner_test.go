package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

func TestRunNodeTestArgs(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"node", "--test", "a.test.js"}, true},
		{[]string{"node", "--test"}, true},
		{[]string{"node", "-r", "ts-node/register", "--test", "a.ts"}, true},
		{[]string{"node", "--test-reporter", "spec", "--test"}, true},
		{[]string{"node", "app.js", "--test"}, false}, // the script's own argument
		{[]string{"node", "--", "--test"}, false},
		{[]string{"node", "--trace-warnings", "app.js"}, false},
	} {
		if got := isNodeTestRunner(c.argv); got != c.want {
			t.Errorf("isNodeTestRunner(%q) = %v, want %v", c.argv, got, c.want)
		}
	}
}

// `run -- node --test file` behaves like `node --test file`: the runner's
// TAP output on stdout, its exit code, one note line, no temp file.
func TestRunNodeTest(t *testing.T) {
	for _, c := range []struct {
		name, body, summary string
		code                int
	}{
		{"pass", "require('node:test')('ok', () => {});\n", "# pass 1", 0},
		{"fail", "require('node:test')('bad', () => { require('node:assert').strictEqual(1, 2); });\n", "# fail 1", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "x.test.js"), []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			w := startCmdEnv(t, dir, []string{"TMPDIR=" + tmp}, "run", "--port", "0", "--", "node", "--test", "x.test.js")
			if code := w.wait(); code != c.code {
				t.Fatalf("exit code %d, want %d (the runner's)", code, c.code)
			}
			if !strings.Contains(w.stdout.String(), c.summary) {
				t.Errorf("stdout lacks %q:\n%s", c.summary, w.stdout)
			}
			if !strings.Contains(w.stderr.String(), strings.TrimSpace(testRunnerNote)) {
				t.Errorf("stderr lacks the note line:\n%s", w.stderr)
			}
			if strings.Contains(w.stderr.String(), "Debugger listening") {
				t.Errorf("a test process opened an inspector:\n%s", w.stderr)
			}
			checkNoTempFiles(t, tmp)
		})
	}
}

// pipeHost prints its pid on stdout, then a line on stdout and on stderr
// every millisecond, forever: only a broken pipe ends it.
const pipeHost = `console.log('pid ' + process.pid);
let i = 0;
setInterval(() => { console.log('out ' + i); console.error('err ' + i++); }, 1);
`

// `run … | head -1`, on stdout and on stderr (2>&1 >/dev/null | grep -m1),
// and the latter under --watch:
// the worker is never killed by SIGPIPE, exits 1 as plain node does on
// EPIPE, and leaves no process and no temp file.
func TestRunPipe(t *testing.T) {
	for _, c := range []struct {
		stream string
		flags  []string
	}{{"stdout", nil}, {"stderr", nil}, {"stderr", []string{"--watch"}}} {
		stream := c.stream
		t.Run(strings.Join(append([]string{stream}, c.flags...), ""), func(t *testing.T) {
			proctest.Node(t)
			dir, script := writeScript(t, pipeHost)
			tmp := t.TempDir()
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			other := &syncBuffer{}
			args := append(append([]string{"run", "--port", "0"}, c.flags...), "--", "node", script)
			cmd := exec.Command(workerBin, args...)
			cmd.Dir, cmd.Env = dir, append(os.Environ(), "TMPDIR="+tmp)
			if stream == "stdout" {
				cmd.Stdout, cmd.Stderr = pw, other
			} else {
				cmd.Stdout, cmd.Stderr = other, pw
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pw.Close()
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			t.Cleanup(func() {
				select {
				case <-done:
				default:
					_ = cmd.Process.Kill()
					<-done
				}
			})
			// Like `grep -m1`: the reader leaves after the host's first line
			// (on stderr the worker's own lines come first), so that the host
			// certainly ran and printed its pid.
			br := bufio.NewReader(pr)
			var first string
			for !strings.HasPrefix(first, "pid ") && !strings.HasPrefix(first, "err ") {
				if first, err = br.ReadString('\n'); err != nil {
					t.Fatalf("reading up to the host's first line: %v", err)
				}
			}
			pr.Close()
			closed := time.Now()
			select {
			case <-done:
			case <-time.After(cdptest.Timeout):
				t.Fatalf("the worker still runs %v after its %s reader left", cdptest.Timeout, stream)
			}
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if ws.Signaled() {
				t.Fatalf("the worker was killed by %v (first line %q)", ws.Signal(), first)
			}
			if code := ws.ExitStatus(); code != 1 {
				t.Errorf("exit code %d, want 1 (node's on EPIPE)", code)
			}
			t.Logf("worker exited %v after the reader closed", time.Since(closed))
			text := first + other.String()
			m := regexp.MustCompile(`pid (\d+)`).FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("no host pid in %q", text)
			}
			pid, _ := strconv.Atoi(m[1])
			proctest.AssertGoneWithin(t, closed, treeGoneWithin, pid)
			proctest.AssertGone(t, cmd.Process.Pid)
			checkNoTempFiles(t, tmp)
		})
	}
}
