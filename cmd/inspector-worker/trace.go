package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/trace"
)

const traceUsage = `usage: inspector-worker trace [--json] [--out FILE] [--workspace DIR] [--node PATH] -- script.js [args]
       inspector-worker trace [flags] -- node [--test] script.js [args]

Runs script.js under Node's inspector, captures scripts, console calls,
exceptions, output and the exit, then prints the timeline and the evidence
chain of the failure (docs/trace.md). Exits with the script's exit code.
With "node --test", script.js is one node:test file; its failed tests are
captured too.
`

func cmdTrace(args []string, stderr io.Writer) int {
	return runTrace(args, os.Stdout, stderr)
}

// runTrace is cmdTrace with its report writer given, for tests.
func runTrace(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, traceUsage); fs.PrintDefaults() }
	asJSON := fs.Bool("json", false, "print the report as JSON (schemaVersion "+fmt.Sprint(trace.SchemaVersion)+", see docs/trace.md)")
	outFile := fs.String("out", "", "write the report to `FILE` instead of stdout")
	workspace := fs.String("workspace", "", "workspace root the script must lie in (default: the current directory)")
	node := fs.String("node", "node", "the Node.js executable, resolved once on PATH")
	noChildren := fs.Bool("no-children", false, "do not follow the script's Node child processes (they run free and are only listed)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	nodeSet := false
	fs.Visit(func(f *flag.Flag) { nodeSet = nodeSet || f.Name == "node" })
	cmdline, err := parseTraceCommand(fs.Args(), *node)
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker trace: %v\n\n%s", err, traceUsage)
		return 2
	}
	if cmdline.node != "" && !nodeSet {
		*node = cmdline.node // `trace -- /opt/node22/bin/node app.js` runs that node
	}
	eng := trace.New(trace.Options{Workspace: *workspace, Node: *node, NoChildren: *noChildren})
	defer eng.Shutdown(context.Background())
	if eng.Workspace() == "" {
		fmt.Fprintf(stderr, "inspector-worker trace: %v\n", eng.Status(context.Background()).WorkspaceError)
		return 1
	}
	rep, err := traceOnce(eng, cmdline, stderr)
	if err != nil && rep.Session.ID == "" {
		fmt.Fprintf(stderr, "inspector-worker trace: %v\n", err)
		return 1
	}
	if werr := writeTraceReport(rep, eng.Workspace(), *asJSON, *outFile, stdout); werr != nil {
		fmt.Fprintf(stderr, "inspector-worker trace: %v\n", werr)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker trace: %v\n", err)
	}
	return traceExitCode(rep.Session)
}

// traceOnce starts the script, waits for its end (Ctrl-C or SIGTERM stops
// it) and returns the report. A failed start still yields the report of the
// failed session when there is one.
func traceOnce(eng *trace.Engine, cmdline traceCommand, stderr io.Writer) (trace.Report, error) {
	script := cmdline.script
	// The script is relative to where the user typed the command; the
	// target runs there too when that is inside the workspace.
	target, err := filepath.Abs(script)
	if err != nil {
		return trace.Report{}, err
	}
	cwd := ""
	if wd, err := os.Getwd(); err == nil && insideDir(eng.Workspace(), wd) {
		cwd = wd
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx := context.Background()
	s, startErr := eng.Start(ctx, trace.StartRequest{Target: target, Args: cmdline.args, Cwd: cwd, Test: cmdline.test})
	if startErr == nil {
		fmt.Fprintf(stderr, "inspector-worker trace: %s runs as pid %d (session %s); Ctrl-C stops it\n",
			script, s.PID, s.ID)
		done := make(chan struct{})
		go func() {
			_, _ = eng.Wait(ctx, s.ID)
			close(done)
		}()
		select {
		case <-done:
		case sig := <-sigs:
			fmt.Fprintf(stderr, "inspector-worker trace: %v: stopping %s\n", sig, script)
			_, _ = eng.Stop(ctx, s.ID)
			<-done
		}
	}
	if s.ID == "" {
		return trace.Report{}, startErr
	}
	rep, err := eng.Report(ctx, s.ID)
	if err != nil {
		return trace.Report{}, err
	}
	return rep, startErr
}

// traceCommand is what follows `--`.
type traceCommand struct {
	node   string // the node named before the script ("" when none was)
	test   bool   // node --test
	script string
	args   []string
}

// parseTraceCommand accepts `script.js [args]` and `node [--test]
// script.js [args]`. The engine chooses every other node flag itself (the
// inspector's above all); others belong in NODE_OPTIONS.
func parseTraceCommand(argv []string, nodeFlag string) (traceCommand, error) {
	var c traceCommand
	if len(argv) > 0 && (argv[0] == nodeFlag || filepath.Base(argv[0]) == "node") {
		c.node, argv = argv[0], argv[1:]
		for len(argv) > 0 && strings.HasPrefix(argv[0], "-") {
			if argv[0] != "--test" {
				return c, fmt.Errorf("node flag %q is not supported here (only --test); put other flags in NODE_OPTIONS", argv[0])
			}
			c.test, argv = true, argv[1:]
		}
	}
	if len(argv) == 0 {
		return c, errors.New("give the script after --")
	}
	if c.test && len(argv) > 1 {
		return c, errors.New("node --test: give exactly one test file (the trace follows one process)")
	}
	c.script, c.args = argv[0], argv[1:]
	return c, nil
}

// insideDir reports whether dir (symlinks resolved) lies in root.
func insideDir(root, dir string) bool {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil || root == "" {
		return false
	}
	rel, err := filepath.Rel(root, real)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func writeTraceReport(rep trace.Report, root string, asJSON bool, outFile string, stdout io.Writer) error {
	w := stdout
	if outFile != "" {
		f, err := os.Create(outFile)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	var err error
	if asJSON {
		err = json.MarshalWrite(w, rep, jsontext.WithIndent("  "))
		if err == nil {
			_, err = io.WriteString(w, "\n")
		}
	} else {
		err = trace.WriteText(w, rep, root)
	}
	if f, ok := w.(*os.File); ok && outFile != "" {
		err = errors.Join(err, f.Sync())
	}
	return err
}

// traceExitCode is the target's exit code (128+signal when it was killed),
// or 1 when it never ran.
func traceExitCode(s trace.Session) int {
	if s.Status == trace.StatusFailed {
		// Even when the program named as node exited 0 (say --node
		// /bin/true): the script never ran, and the docs promise 1.
		return 1
	}
	if s.ExitCode != nil {
		return *s.ExitCode
	}
	return 1
}
