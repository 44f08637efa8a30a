package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/inspector-worker/inspector-worker/hostnode"
)

// nodeValueFlags are the node flags whose value may follow as the next
// word (`-r ts-node/register`); without this list that value would be taken
// for the script and a later --test missed. Flags written `--x=v` need no
// entry.
var nodeValueFlags = map[string]bool{
	"-r": true, "--require": true, "--import": true, "--loader": true, "--experimental-loader": true,
	"-C": true, "--conditions": true, "--input-type": true, "--title": true,
	"--test-reporter": true, "--test-reporter-destination": true, "--test-name-pattern": true,
	"--test-skip-pattern": true, "--test-concurrency": true, "--test-timeout": true, "--test-shard": true,
}

// isNodeTestRunner reports whether argv (node, then its flags, then the
// script) runs Node's test runner: `--test` among the flags before the first
// file or `--`.
func isNodeTestRunner(argv []string) bool {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--test":
			return true
		case a == "--" || !strings.HasPrefix(a, "-"):
			return false
		case nodeValueFlags[a]:
			i++
		}
	}
	return false
}

// testRunnerNote is the one line `run -- node --test` prints: the parent
// `node --test` opens no inspector even when asked (it hands the flag to
// its test processes, which would then each wait for a debugger nobody
// attaches), and the worker cannot yet follow those child processes.
const testRunnerNote = "inspector-worker: node --test runs each test file in a child process, " +
	"which the worker cannot debug yet; running the tests without the inspector\n"

// runTestRunner runs `node --test …` as plain node would, without the
// inspector or the preload: same output, same exit code. What the worker
// still does: forward SIGINT/SIGTERM, kill the test processes' group when
// the runner exits, and exit with the runner's code.
func runTestRunner(r hostRun, stderr io.Writer) int {
	sigs := make(chan os.Signal, maxForwardedSignals)
	notifySignals(sigs)
	defer stopSignals(sigs)
	fmt.Fprint(stderr, testRunnerNote)
	proc, err := hostnode.Start(context.Background(), hostnode.Options{
		Argv: r.argv, NoInspector: true, Dir: r.dir,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: stderr,
	})
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	defer proc.Kill()
	forwarded := 0
	for {
		select {
		case sig := <-sigs:
			forwarded++
			forwardSignal(proc, sig, forwarded, "the test runner", stderr)
		case <-outputGone(stderr):
			proc.Kill() // the user's pipeline ended (outputGuard)
			return outputGoneCode
		case <-proc.Done():
			return proc.ExitCode()
		}
	}
}
