package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// threadsScript starts a worker thread that starts one of its own; each
// prints its first line. With ONSIGNAL it waits for the file "go" first.
const threadsScript = `
const fs = require('fs');
const { Worker, isMainThread, workerData } = require('worker_threads');
const depth = isMainThread ? 0 : workerData;
if (isMainThread) console.log('pid ' + process.pid);
function start() {
  new Worker(__filename, { workerData: depth + 1 })
    .on('exit', (c) => console.log('thread ' + (depth + 1) + ' exited ' + c));
}
if (depth > 0) console.log('thread ' + depth + ' first line');
if (depth === 1) start();
if (depth === 0) {
  if (process.env.WAIT_FOR_GO) {
    const t = setInterval(() => { if (fs.existsSync('go')) { clearInterval(t); start(); } }, 20);
  } else start();
}
`

// Worker threads run under run as under plain node: they inherit the
// --inspect-wait the worker starts the host with, so without the watcher's
// release each would wait for a debugger forever (nothing printed, the host
// never exits). Nested threads too, with and without a DevTools window.
func TestRunStartsWorkerThreads(t *testing.T) {
	t.Run("no window", func(t *testing.T) {
		dir, script := writeScript(t, threadsScript)
		w := startCmd(t, dir, "run", "--port", "0", "--", "node", script)
		pid := w.nodePID()
		w.waitFor(w.stdout, `thread 1 first line`)
		w.waitFor(w.stdout, `thread 2 first line`)
		w.waitFor(w.stdout, `thread 1 exited 0`)
		if got := w.wait(); got != 0 {
			t.Fatalf("exit code %d, want 0", got)
		}
		proctest.AssertGone(t, pid)
	})
	t.Run("window", func(t *testing.T) {
		dir, script := writeScript(t, threadsScript)
		w := startCmdEnv(t, dir, []string{"WAIT_FOR_GO=1"}, "run", "--port", "0", "--", "node", script)
		pid := w.nodePID()
		c := cdptest.Dial(t, "A", pageURL(t, w.addr()), nil)
		c.MustCall("Runtime.enable", nil)
		c.MustCall("Debugger.enable", nil)
		if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		w.waitFor(w.stdout, `thread 1 first line`)
		w.waitFor(w.stdout, `thread 2 first line`)
		w.waitFor(w.stdout, `thread 1 exited 0`)
		c.ExpectClosed()
		if got := w.wait(); got != 0 {
			t.Fatalf("exit code %d, want 0", got)
		}
		proctest.AssertGone(t, pid)
	})
}
