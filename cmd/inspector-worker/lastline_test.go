package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// lastLinesN is how many lines the app logs right before it exits: enough
// that the last ones are still in flight when the process ends.
const lastLinesN = 500

// lastLinesPad makes each line long, so Node writes the lot faster than a
// relay under load reads it.
const lastLinesPad = 4096

// lastLinesApp logs lastLinesN lines once a file named "go" appears (after
// the window has enabled Runtime) and then ends at once: by falling off
// the end of its last callback, or by process.exit() right after the
// last line (EXIT=1).
const lastLinesApp = `const fs = require('fs');
console.log('app pid ' + process.pid);
const timer = setInterval(() => {
  if (!fs.existsSync('go')) return;
  clearInterval(timer);
  const pad = ' ' + 'x'.repeat(%d);
  for (let i = 1; i <= %d; i++) console.log('line ' + i + ' of %d' + pad);
  if (process.env.EXIT === '1') process.exit(0);
}, 20);
`

// An app that logs and exits at once, with a window attached from its start:
// every line reaches the window, under run -- node and run -- npx tsx (a
// command started as is, whose host is the claimed app process).
func TestRunLastConsoleLinesReachTheWindow(t *testing.T) {
	proctest.Node(t)
	app := fmt.Sprintf(lastLinesApp, lastLinesPad, lastLinesN, lastLinesN)
	for _, tc := range []struct {
		name string
		argv []string
	}{
		{"node", []string{"node", "app.js"}},
		{"npx tsx", []string{"npx", "tsx", "app.ts"}},
	} {
		for _, exit := range []string{"0", "1"} {
			t.Run(tc.name+" EXIT="+exit, func(t *testing.T) {
				dir := appDir(t, map[string]string{"app.js": app, "app.ts": app}, "tsx")
				w := startCmdEnv(t, dir, []string{"NO_COLOR=1", "EXIT=" + exit, "npm_config_offline=true"}, append([]string{"run", "--port", "0", "--"}, tc.argv...)...)
				w.waitFor(w.stdout, `app pid (\d+)`)
				c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
				c.MustCall("Runtime.enable", nil)
				start := time.Now()
				touch(t, dir, "go")
				if got := w.wait(); got != 0 {
					t.Fatalf("exit code %d, want 0", got)
				}
				// The worker has exited: what the window got is all it gets;
				// the test client may still be reading it.
				var got []string
				for deadline := time.Now().Add(lastLinesWithin); ; time.Sleep(20 * time.Millisecond) {
					got = lineEvents(c)
					if len(got) >= lastLinesN || time.Now().After(deadline) {
						break
					}
				}
				for i := 1; i <= lastLinesN; i++ {
					if want := fmt.Sprintf("line %d of %d", i, lastLinesN); i > len(got) || got[i-1] != want {
						t.Fatalf("the window got %d of %d lines, the first missing is %q", len(got), lastLinesN, want)
					}
				}
				t.Logf("%d lines in the window %v after the go", len(got), time.Since(start).Round(time.Millisecond))
			})
		}
	}
}

// lastLinesWithin bounds the test client's reading of frames the worker
// sent before it exited (normally a few ms): a hang detector.
const lastLinesWithin = 5 * time.Second

// lineEvents is the text of the "line …" console events the window got.
func lineEvents(c *cdptest.Client) []string {
	var got []string
	for _, m := range c.Events("Runtime.consoleAPICalled") {
		if s := consoleText(m); strings.HasPrefix(s, "line ") {
			got = append(got, strings.TrimRight(s, " x"))
		}
	}
	return got
}
