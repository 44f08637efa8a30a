package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"

	"github.com/inspector-worker/inspector-worker/cdpserver"
	"github.com/inspector-worker/inspector-worker/client/js"
	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
)

// observation is the run's side of the internal observation protocol
// (docs/protocol.md): the host pipe the preload writes to as fd 3, and the
// client WebSocket pages connect to with the run's token.
type observation struct {
	preload  string // temp file holding client/js/preload.cjs, loaded with --require
	token    sourceproto.Token
	endpoint string
	child    *os.File // the host's end; ours is closed once the host started
	pipe     net.Conn // the worker's end; ServeHostPipe owns it once serve ran
	clients  *carrier.ClientHandler
	stopPipe context.CancelFunc
	pipeDone chan struct{}
	exit     *exitReport // nil for an embedding app's channel
	reg      *sourceproto.Registry
	children *childRun              // nil for an embedding app's channel
	filter   *hostnode.BannerFilter // the host's stderr, set by the caller before serve; nil: none
}

func newObservation(ln net.Listener, cf childFlags) (*observation, error) {
	token, err := sourceproto.NewToken()
	if err != nil {
		return nil, err
	}
	children, err := newChildRun(cf)
	if err != nil {
		return nil, err
	}
	preload, err := writePreload()
	if err != nil {
		return nil, err
	}
	if children != nil {
		children.waitFile = preload + childWaitSuffix
	}
	child, pipe, err := carrier.NewHostChannel()
	if err != nil {
		os.Remove(preload)
		return nil, err
	}
	exit, err := newExitReport()
	if err != nil {
		os.Remove(preload)
		child.Close()
		pipe.Close()
		return nil, err
	}
	return &observation{preload: preload, token: token, endpoint: ln.Addr().String(), child: child, pipe: pipe, exit: exit,
		children: children}, nil
}

// extraFiles are the files the host inherits: the host channel as fd 3
// (carrier.HostFD) and the exit report as fd 4 (exitReportFD).
func (o *observation) extraFiles() []*os.File { return []*os.File{o.child, o.exit.w} }

// writePreload puts the embedded preload where node can --require it. It must
// outlive the host: cluster.fork re-reads --require in every worker.
func writePreload() (string, error) {
	f, err := os.CreateTemp("", "inspector-worker-preload-*.cjs")
	if err != nil {
		return "", fmt.Errorf("cannot write the host preload: %w", err)
	}
	_, werr := f.Write(clientjs.PreloadCJS())
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("cannot write the host preload: %w", werr)
	}
	return f.Name(), nil
}

// tempFiles are the run's files in the temp directory, for the orphan
// reaper (the worker removes them itself on every other path).
func (o *observation) tempFiles() []string {
	return []string{o.preload, o.preload + childWaitSuffix}
}

// nodeFlags are the flags that load the preload into the host.
func (o *observation) nodeFlags() []string {
	return append([]string{"--require", o.preload}, o.children.hostFlags()...)
}

// hostEnv is what the preload reads: the pipe's fd, and the endpoint and
// token it hands to the pages it serves.
func (o *observation) hostEnv(noCapture bool) []string {
	env := os.Environ()
	if noCapture {
		env = append(env, captureEnv+"=0") // the last value of a name wins
	}
	if o.children != nil {
		env = o.children.env(env, o.preload, o.endpoint)
	}
	return append(env,
		carrier.HostFDEnv+"="+strconv.Itoa(carrier.HostFD),
		exitReportEnv+"="+strconv.Itoa(exitReportFD),
		"INSPECTOR_WORKER_TOKEN="+o.token.Reveal(),
		"INSPECTOR_WORKER_ENDPOINT="+o.endpoint)
}

// started drops the worker's copy of the host's end: while it is open, the
// host's exit would not show as EOF on the pipe.
func (o *observation) started() {
	o.child.Close()
	o.exit.started()
}

// hostChannelTokenEnv carries the page token an embedding app drew itself
// (client/js/embed.mjs) to `serve --host-channel-fd`.
const hostChannelTokenEnv = "INSPECTOR_WORKER_TOKEN"

// inheritedObservation is serve's side when an embedding app started the
// worker with the host channel on fd and its token in the environment.
func inheritedObservation(ln net.Listener, fd int) (*observation, error) {
	token, err := sourceproto.ParseToken(os.Getenv(hostChannelTokenEnv))
	if err != nil {
		return nil, fmt.Errorf("--host-channel-fd needs the page token in %s: %w", hostChannelTokenEnv, err)
	}
	f := os.NewFile(uintptr(fd), "host-channel")
	if f == nil {
		return nil, fmt.Errorf("--host-channel-fd %d is not an open file", fd)
	}
	defer f.Close() // FileConn dups it
	pipe, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("--host-channel-fd %d is not a socket: %w", fd, err)
	}
	return &observation{token: token, endpoint: ln.Addr().String(), pipe: pipe}, nil
}

// serve creates the run's source registry around srv's client consumer,
// mounts /client (at most maxClients connections), and runs the host pipe.
// Call it before srv serves.
func (o *observation) serve(srv *cdpserver.Server, stderr io.Writer, maxClients int) error {
	// The hub first: the journal asks it for a page's frame when the page's
	// source opens (cdpserver describeSource). FetchConsumer is nil with
	// --no-capture: fetch items are then ignored.
	reg := sourceproto.NewRegistry(srv.ClientConsumer(), srv.FetchConsumer())
	srv.SetSourceRegistry(reg)
	clients, err := carrier.NewClientHandler(carrier.ClientOptions{
		Registry: reg, Token: o.token, ClientJS: clientjs.ClientJS(), Logf: logTo(stderr), MaxConns: maxClients,
	})
	if err != nil {
		return err
	}
	o.clients = clients
	o.reg = reg
	srv.Handle("GET /client", clients)
	srv.Handle("GET /client.js", clients)
	if o.children != nil {
		o.children.filter = o.filter
		o.children.serve(srv, reg, stderr)
	}
	o.servePipe(stderr)
	return nil
}

// servePipe serves the current host pipe until it ends or stop.
func (o *observation) servePipe(stderr io.Writer) {
	reg := o.reg
	ctx, cancel := context.WithCancel(context.Background())
	o.stopPipe, o.pipeDone = cancel, make(chan struct{})
	go func() {
		defer close(o.pipeDone)
		// A reset is the host exiting with an ack unread: a normal end.
		if err := carrier.ServeHostPipe(ctx, o.pipe, reg, logTo(stderr)); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			fmt.Fprintf(stderr, "inspector-worker: host pipe: %v\n", err)
		}
	}()
}

// renew gives the next host of `run --watch` a host channel and an exit
// report of its own (the old host's pipe ends, and with it its source: the
// consumers close what it left open). The token, endpoint and preload stay.
func (o *observation) renew(stderr io.Writer) error {
	o.stopPipe()
	<-o.pipeDone
	child, pipe, err := carrier.NewHostChannel()
	if err != nil {
		return err
	}
	exit, err := newExitReport()
	if err != nil {
		child.Close()
		pipe.Close()
		return err
	}
	o.exit.close()
	o.child, o.pipe, o.exit = child, pipe, exit
	o.servePipe(stderr)
	return nil
}

// stop ends the host pipe and every client connection (close{shutdown}).
func (o *observation) stop() {
	if o.children != nil {
		o.children.stop()
	}
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
	if o.child != nil {
		o.child.Close()
	}
	if o.pipe != nil {
		o.pipe.Close()
	}
	if o.preload != "" {
		os.Remove(o.preload)
	}
	if o.exit != nil {
		o.exit.close()
	}
}
