package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/inspector-worker/inspector-worker/cdpserver"
	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/trace"
)

func cmdRun(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ep endpointFlags
	ep.register(fs)
	var cf childFlags
	cf.register(fs)
	brk := fs.Bool("brk", false, "start the host paused on its first line (--inspect-brk)")
	traceNode := fs.String("node", "", "the Node.js executable for /api/trace sessions (default: the host's own, the command's first word)")
	watch := fs.Bool("watch", false, "restart the host when a watched file changes; DevTools windows stay open")
	inject := fs.Bool("inject", true, "add the client's <script> tag to the host's text/html responses, so pages join with no code (--inject=false: only pages wired with bootstrapSnippet() or inspector-worker wiring)")
	var watchPaths pathList
	fs.Var(&watchPaths, "watch-path", "with --watch: a file or directory to watch instead of the script's directory (repeatable)")
	if err := parseFlags(fs, args, &ep); err != nil {
		return 2
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintf(stderr, "inspector-worker run: give the host command after --, e.g.\n"+
			"  inspector-worker run -- node app.js\n")
		return 2
	}
	if *watch && isNodeTestRunner(argv) {
		fmt.Fprintf(stderr, "inspector-worker run: --watch with node --test: use Node's own, run -- node --test --watch\n")
		return 2
	}
	if (*watch || *brk) && startsAsIs(argv) {
		fmt.Fprintf(stderr, "inspector-worker run: --watch and --brk need `run -- node …`; %s is started as is "+
			"(use its own watch mode, e.g. nodemon or vite, or run -- node SCRIPT)\n", argv[0])
		return 2
	}
	if len(watchPaths) > 0 && !*watch {
		fmt.Fprintf(stderr, "inspector-worker run: --watch-path needs --watch\n")
		return 2
	}
	r := hostRun{ep: ep, argv: argv, brk: *brk, traceNode: *traceNode, watchPaths: watchPaths, noInject: !*inject, children: cf}
	if *watch {
		return runWatch(r, stderr)
	}
	return runHost(r, stderr)
}

// hostRun is one `run` (or `demo`) of a host under the worker.
type hostRun struct {
	ep   endpointFlags
	argv []string
	brk  bool
	dir  string
	// temp are paths the caller removes when runHost returns; if the worker
	// is killed instead, hostnode's orphan reaper removes them.
	temp []string
	// traceNode runs the /api/trace sessions; "" = the host's node, so a
	// trace runs the same binary as the program it sits beside.
	traceNode string
	// watchPaths replace the watched script directory (run --watch).
	watchPaths []string
	// noInject turns off the preload's script tag in HTML responses
	// (run --inject=false); the zero value injects, so demo does too.
	noInject bool
	// children: run --no-children, --max-children (cmd/inspector-worker/children.go).
	children childFlags
}

// injectEnv switches the preload's injection (client/js/inject.mjs).
const injectEnv = "INSPECTOR_WORKER_INJECT"

// hostEnv is the host's environment: the observation's, and --inject.
func (r hostRun) hostEnv(obs *observation) []string {
	v := "1"
	if r.noInject {
		v = "0"
	}
	return append(obs.hostEnv(r.ep.noCapture), injectEnv+"="+v) // the last value of a name wins
}

// maxForwardedSignals is how many SIGINT/SIGTERM are forwarded before the
// worker stops asking and kills the host (a host may ignore SIGINT).
const maxForwardedSignals = 3

// forwardSignal passes sig, the forwarded-th received, to the process, or
// kills it once maxForwardedSignals were asked for; what names it for the
// user ("the host", "the test runner").
func forwardSignal(proc *hostnode.Process, sig os.Signal, forwarded int, what string, stderr io.Writer) {
	if forwarded >= maxForwardedSignals {
		fmt.Fprintf(stderr, "inspector-worker: %s received %d times; killing %s\n", sig, forwarded, what)
		proc.Kill()
		return
	}
	_ = proc.Signal(sig)
}

// runHost starts the host, serves DevTools until the host exits, and returns
// the host's exit code (128+signal when it was killed).
func runHost(r hostRun, stderr io.Writer) int {
	if isNodeTestRunner(r.argv) {
		return runTestRunner(r, stderr)
	}
	if startsAsIs(r.argv) {
		return runAsIs(r, stderr)
	}
	ln, fellBack, err := r.ep.listen()
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	// Signals are caught before node starts so that none is lost in between.
	sigs := make(chan os.Signal, maxForwardedSignals)
	notifySignals(sigs)
	defer stopSignals(sigs)

	ctx := context.Background()
	// Node's inspector banner names its private port, which a user must not
	// connect to (the worker is the endpoint): it is filtered out, by
	// position (hostnode.Banner).
	filter := hostnode.NewBannerFilter(stderr)
	defer filter.Close()
	obs, err := newObservation(ln, r.children)
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	obs.filter = filter // the children inherit the host's stderr
	defer obs.close()
	opts := hostnode.Options{
		Argv:       r.argv,
		Brk:        r.brk,
		Wait:       !r.brk,
		Dir:        r.dir,
		Env:        r.hostEnv(obs),
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     filter,
		ExtraFiles: obs.extraFiles(),
		ExtraFlags: obs.nodeFlags(),
		// A SIGKILLed worker removes nothing itself: without this every
		// such run would leave a preload file in the temp directory.
		RemoveIfOrphaned: append(obs.tempFiles(), r.temp...),
	}
	proc, err := hostnode.Start(ctx, opts)
	var se *hostnode.StartError
	if errors.As(err, &se) && strings.Contains(se.Line, "--inspect-wait") {
		// Node older than 20.15 has no --inspect-wait: plain --inspect, with
		// the small race that a very short script can end before the attach.
		opts.Wait = false
		filter.Close() // the failed node's stream ended; the next one's starts
		proc, err = hostnode.Start(ctx, opts)
	}
	obs.started()
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		if errors.As(err, &se) && se.ExitCode > 0 {
			return se.ExitCode
		}
		return 1
	}
	defer proc.Kill()
	exitReason := func() string { return fmt.Sprintf("the host exited with code %d", proc.ExitCode()) }
	host, err := hostnode.AttachHost(ctx, proc.InspectorURL(), hostnode.HostOptions{
		Exited: proc.Done(), ExitReason: exitReason, Release: opts.Wait,
	})
	if err != nil {
		ln.Close()
		select {
		case <-proc.Done():
			// The host ended before the worker could attach (only possible
			// without --inspect-wait): its exit code is still the answer.
			return proc.ExitCode()
		default:
		}
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	if r.traceNode == "" {
		r.traceNode = proc.NodeArgs()[0] // resolved by hostnode: the binary that runs the host
	}
	traceEngine := trace.New(trace.Options{Node: r.traceNode}) // workspace: the current directory
	defer traceEngine.Shutdown(ctx)
	srv := cdpserver.New(host, ln, r.ep.serverOptions(cdpserver.Options{
		Logf: logTo(stderr), Mount: trace.Routes(traceEngine), HideScripts: []string{obs.preload},
	}))
	if err := obs.serve(srv, stderr, r.ep.maxClients); err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	stopNative, err := r.ep.native.start(srv, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	defer stopNative()
	serveErr := serveEndpoint(srv, ln, fellBack, stderr)
	return superviseHost(proc, host, srv, obs, sigs, serveErr, filter, stderr)
}

// stuckHostGrace is how long a host may take to exit after Node said its
// script finished (every session is closed at that moment). A healthy Node
// exits within milliseconds; one stuck in the inspector teardown after a
// process.exit() inside a DevTools evaluation (a Node bug: 3 of 20 runs)
// spins forever, so it is ended after this.
const stuckHostGrace = time.Second

// superviseHost forwards signals, ends a host stuck after its script
// finished, and on the host's exit closes everything and returns the exit
// code.
func superviseHost(proc *hostnode.Process, host *hostnode.Host, srv *cdpserver.Server, obs *observation,
	sigs <-chan os.Signal, serveErr <-chan error, filter io.Closer, stderr io.Writer) int {
	finished := host.ScriptFinished()
	var stuck <-chan time.Time
	endedStuck, endedGone := false, false
	forwarded := 0
	for {
		select {
		case sig := <-sigs:
			forwarded++
			forwardSignal(proc, sig, forwarded, "the host", stderr)
		case err := <-serveErr:
			fmt.Fprintf(stderr, "inspector-worker: the DevTools endpoint failed: %v; stopping the host\n", err)
			proc.Kill()
			serveErr = nil
		case <-finished:
			finished = nil
			stuck = time.After(stuckHostGrace)
		case <-stuck:
			stuck = nil
			endedStuck = true
			fmt.Fprintf(stderr, "inspector-worker: the host did not exit within %v after its script finished "+
				"(Node hangs like this after some process.exit() calls); ending it\n", stuckHostGrace)
			proc.Kill()
		case <-outputGone(stderr):
			proc.Kill() // the user's pipeline ended (outputGuard)
			endedGone = true
		case <-proc.Done():
			filter.Close()
			code := proc.ExitCode()
			if endedStuck {
				if asked, ok := obs.exit.reported(); ok {
					code = asked
				} else {
					fmt.Fprintf(stderr, "inspector-worker: the host did not report its exit code; exiting with %d\n", code)
				}
			}
			if endedGone {
				code = outputGoneCode
			}
			reason := fmt.Sprintf("the host exited with code %d", code)
			host.Finish(reason)
			obs.stop()
			shutdown(srv, reason)
			return code
		}
	}
}

func logTo(w io.Writer) func(string, ...any) {
	if os.Getenv("INSPECTOR_WORKER_DEBUG") == "" {
		return nil
	}
	return func(format string, args ...any) {
		fmt.Fprintf(w, "inspector-worker: "+format+"\n", args...)
	}
}

// notifySignals delivers the signals `run` forwards to the host.
func notifySignals(c chan<- os.Signal) { signal.Notify(c, syscall.SIGINT, syscall.SIGTERM) }

func stopSignals(c chan<- os.Signal) { signal.Stop(c) }
