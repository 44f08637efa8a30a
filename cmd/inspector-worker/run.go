package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/inspector-worker/inspector-worker/cdpserver"
	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/realm"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
	"github.com/inspector-worker/inspector-worker/trace"
)

func cmdRun(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ep endpointFlags
	ep.register(fs)
	brk := fs.Bool("brk", false, "start the host paused on its first line (--inspect-brk)")
	if err := parseFlags(fs, args, &ep); err != nil {
		return 2
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintf(stderr, "inspector-worker run: give the host command after --, e.g.\n"+
			"  inspector-worker run -- node app.js\n")
		return 2
	}
	return runHost(hostRun{ep: ep, argv: argv, brk: *brk}, stderr)
}

// hostRun is one `run` (or `demo`) of a host under the worker.
type hostRun struct {
	ep   endpointFlags
	argv []string
	brk  bool
	dir  string
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
	traceEngine := trace.New(trace.Options{}) // workspace: the current directory
	defer traceEngine.Shutdown(ctx)
	srv := cdpserver.New(host, ln, cdpserver.Options{Logf: logTo(stderr), Mount: trace.Routes(traceEngine)})
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

// observation is the run's side of the internal observation protocol
// (docs/protocol.md): the host pipe the preload writes to as fd 3, and the
// client WebSocket pages connect to with the run's token.
type observation struct {
	token    sourceproto.Token
	endpoint string
	child    *os.File // the host's end; ours is closed once the host started
	pipe     net.Conn // the worker's end; ServeHostPipe owns it once serve ran
	clients  *carrier.ClientHandler
	stopPipe context.CancelFunc
	pipeDone chan struct{}
}

func newObservation(ln net.Listener) (*observation, error) {
	token, err := sourceproto.NewToken()
	if err != nil {
		return nil, err
	}
	child, pipe, err := carrier.NewHostChannel()
	if err != nil {
		return nil, err
	}
	return &observation{token: token, endpoint: ln.Addr().String(), child: child, pipe: pipe}, nil
}

// hostEnv is what the preload reads: the pipe's fd, and the endpoint and
// token it hands to the pages it serves.
func (o *observation) hostEnv() []string {
	return append(os.Environ(),
		carrier.HostFDEnv+"="+strconv.Itoa(carrier.HostFD),
		"INSPECTOR_WORKER_TOKEN="+o.token.Reveal(),
		"INSPECTOR_WORKER_ENDPOINT="+o.endpoint)
}

// started drops the worker's copy of the host's end: while it is open, the
// host's exit would not show as EOF on the pipe.
func (o *observation) started() { o.child.Close() }

// serve creates the run's source registry around srv's client consumer,
// mounts /client, and runs the host pipe. Call it before srv serves.
func (o *observation) serve(srv *cdpserver.Server, stderr io.Writer) error {
	reg := sourceproto.NewRegistry(srv.ClientConsumer())
	srv.SetSourceRegistry(reg)
	clients, err := carrier.NewClientHandler(carrier.ClientOptions{Registry: reg, Token: o.token, Logf: logTo(stderr)})
	if err != nil {
		return err
	}
	o.clients = clients
	srv.Handle("GET /client", clients)
	ctx, cancel := context.WithCancel(context.Background())
	o.stopPipe, o.pipeDone = cancel, make(chan struct{})
	go func() {
		defer close(o.pipeDone)
		if err := carrier.ServeHostPipe(ctx, o.pipe, reg, logTo(stderr)); err != nil {
			fmt.Fprintf(stderr, "inspector-worker: host pipe: %v\n", err)
		}
	}()
	return nil
}

// stop ends the host pipe and every client connection (close{shutdown}).
func (o *observation) stop() {
	if o.stopPipe != nil {
		o.stopPipe()
		<-o.pipeDone
	}
	if o.clients != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		_ = o.clients.Shutdown(ctx)
	}
}

// close releases what serve did not take over (early returns).
func (o *observation) close() {
	o.child.Close()
	o.pipe.Close()
}
