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

	"github.com/inspector-worker/inspector-worker/cdpserver"
	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/realm"
	"github.com/inspector-worker/inspector-worker/trace"
)

func cmdRun(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ep endpointFlags
	ep.register(fs)
	brk := fs.Bool("brk", false, "start the host paused on its first line (--inspect-brk)")
	traceNode := fs.String("node", "", "the Node.js executable for /api/trace sessions (default: the host's own, the command's first word)")
	if err := parseFlags(fs, args, &ep); err != nil {
		return 2
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintf(stderr, "inspector-worker run: give the host command after --, e.g.\n"+
			"  inspector-worker run -- node app.js\n")
		return 2
	}
	return runHost(hostRun{ep: ep, argv: argv, brk: *brk, traceNode: *traceNode}, stderr)
}

// hostRun is one `run` (or `demo`) of a host under the worker.
type hostRun struct {
	ep   endpointFlags
	argv []string
	brk  bool
	dir  string
	// traceNode runs the /api/trace sessions; "" = the host's node, so a
	// trace runs the same binary as the program it sits beside.
	traceNode string
}

// maxForwardedSignals is how many SIGINT/SIGTERM are forwarded before the
// worker stops asking and kills the host (a host may ignore SIGINT).
const maxForwardedSignals = 3

// runHost starts the host, serves DevTools until the host exits, and returns
// the host's exit code (128+signal when it was killed).
func runHost(r hostRun, stderr io.Writer) int {
	ln, fellBack, err := r.ep.listen()
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	// Signals are caught before node starts so that none is lost in between.
	sigs := make(chan os.Signal, maxForwardedSignals)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)

	ctx := context.Background()
	filter := newBannerFilter(stderr)
	defer filter.Close()
	obs, err := newObservation(ln)
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	defer obs.close()
	opts := hostnode.Options{
		Argv:       r.argv,
		Brk:        r.brk,
		Wait:       !r.brk,
		Dir:        r.dir,
		Env:        obs.hostEnv(),
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     filter,
		ExtraFiles: []*os.File{obs.child},
		ExtraFlags: obs.nodeFlags(),
	}
	proc, err := hostnode.Start(ctx, opts)
	var se *hostnode.StartError
	if errors.As(err, &se) && strings.Contains(se.Line, "--inspect-wait") {
		// Node older than 20.15 has no --inspect-wait: plain --inspect, with
		// the small race that a very short script can end before the attach.
		opts.Wait = false
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
	host, err := realm.AttachHost(ctx, proc.InspectorURL(), realm.HostOptions{
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
	srv := cdpserver.New(host, ln, cdpserver.Options{
		Logf: logTo(stderr), Mount: trace.Routes(traceEngine), HideScripts: []string{obs.preload},
	})
	if err := obs.serve(srv, stderr); err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	serveErr := serveEndpoint(srv, ln, fellBack, stderr)
	go func() {
		// Backup for the watcher session: Node's own line on stderr.
		select {
		case <-proc.WaitingForDisconnect():
			host.Finish("the host script finished")
		case <-proc.Done():
		}
	}()
	forwarded := 0
	for {
		select {
		case sig := <-sigs:
			forwarded++
			if forwarded >= maxForwardedSignals {
				fmt.Fprintf(stderr, "inspector-worker: %s received %d times; killing the host\n", sig, forwarded)
				proc.Kill()
				continue
			}
			_ = proc.Signal(sig)
		case err := <-serveErr:
			fmt.Fprintf(stderr, "inspector-worker: the DevTools endpoint failed: %v; stopping the host\n", err)
			proc.Kill()
			serveErr = nil
		case <-proc.Done():
			filter.Close()
			host.Finish(exitReason())
			obs.stop()
			shutdown(srv, exitReason())
			return proc.ExitCode()
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
