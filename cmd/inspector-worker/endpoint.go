package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/inspector-worker/inspector-worker/cdpserver"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
)

const version = cdpserver.Version

// defaultPort is where chrome://inspect looks for targets.
const defaultPort = 9229

// shutdownGrace bounds how long the worker waits for DevTools windows to take
// their close frames on exit.
const shutdownGrace = 3 * time.Second

// endpointFlags are the flags every serving subcommand shares.
type endpointFlags struct {
	port        int
	host        string
	maxWindows  int
	maxClients  int
	idleTimeout time.Duration
	pageTimeout time.Duration
	// noCapture and redact are the fetch capture's switches (--no-capture,
	// --redact-header); serve's embedded mode takes them too.
	noCapture bool
	redact    []string
	set       map[string]bool // flags given explicitly
	native    nativeFlags     // --browser-cdp, --browser, --browser-match (native.go)
}

func (e *endpointFlags) register(fs *flag.FlagSet) {
	e.native.register(fs)
	fs.IntVar(&e.port, "port", defaultPort, "DevTools endpoint port (0 = any free port)")
	fs.StringVar(&e.host, "host", "127.0.0.1", "loopback address to listen on")
	fs.IntVar(&e.maxWindows, "max-windows", cdpserver.DefaultMaxWindows,
		"DevTools windows open at once (each costs a Node inspector session)")
	fs.IntVar(&e.maxClients, "max-clients", carrier.DefaultMaxClients, "browser page connections open at once (ws /client)")
	fs.DurationVar(&e.idleTimeout, "idle-timeout", cdpserver.DefaultIdleTimeout,
		"close HTTP keep-alive connections idle this long")
	fs.DurationVar(&e.pageTimeout, "page-timeout", cdpserver.DefaultClientRuntimeTimeout,
		"how long a DevTools window waits for a page to answer an evaluation or an object expansion")
	fs.BoolVar(&e.noCapture, "no-capture", false,
		"do not capture fetch traffic: the host's capture is not installed ("+captureEnv+"=0) and fetch observations are ignored")
	fs.Func("redact-header", "replace this header's value in the Network log (repeatable, any case), e.g. --redact-header authorization",
		func(v string) error {
			if strings.TrimSpace(v) == "" || strings.ContainsAny(v, " \t:") {
				return fmt.Errorf("%q is not a header name", v)
			}
			e.redact = append(e.redact, v)
			return nil
		})
}

// captureEnv switches the host preload's fetch capture (client/js): "0"
// leaves fetch unwrapped.
const captureEnv = "INSPECTOR_WORKER_CAPTURE"

// check refuses limits that would refuse everything.
func (e *endpointFlags) check() error {
	switch {
	case e.maxWindows < 1:
		return fmt.Errorf("--max-windows %d: give at least 1", e.maxWindows)
	case e.maxClients < 1:
		return fmt.Errorf("--max-clients %d: give at least 1", e.maxClients)
	case e.idleTimeout <= 0:
		return fmt.Errorf("--idle-timeout %v: give a positive duration, e.g. 30s", e.idleTimeout)
	case e.pageTimeout <= 0:
		return fmt.Errorf("--page-timeout %v: give a positive duration, e.g. 10s", e.pageTimeout)
	}
	return nil
}

// serverOptions fills in the limits the flags set.
func (e *endpointFlags) serverOptions(o cdpserver.Options) cdpserver.Options {
	o.MaxWindows, o.IdleTimeout, o.ClientRuntimeTimeout = e.maxWindows, e.idleTimeout, e.pageTimeout
	o.NoCapture, o.RedactHeaders = e.noCapture, e.redact
	return o
}

// parseFlags parses args and records which flags were given.
func parseFlags(fs *flag.FlagSet, args []string, e *endpointFlags) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := e.check(); err != nil {
		fmt.Fprintf(fs.Output(), "inspector-worker %s: %v\n", fs.Name(), err)
		return err
	}
	e.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { e.set[f.Name] = true })
	return nil
}

// listen opens the endpoint. The default port falls back to a free one when
// taken; a port the user asked for does not.
func (e *endpointFlags) listen() (net.Listener, bool, error) {
	if e.port < 0 || e.port > 65535 {
		return nil, false, fmt.Errorf("--port %d is not a port number", e.port)
	}
	return cdpserver.Listen(net.JoinHostPort(e.host, strconv.Itoa(e.port)), !e.set["port"])
}

// serveEndpoint starts srv on ln and prints what the user needs to connect.
func serveEndpoint(srv *cdpserver.Server, ln net.Listener, fellBack bool, stderr io.Writer) <-chan error {
	errc := make(chan error, 1)
	go func() {
		err := srv.Serve()
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		errc <- err
	}()
	addr := ln.Addr().String()
	if fellBack {
		fmt.Fprintf(stderr, "inspector-worker: port %d is in use, so the endpoint uses %s instead; "+
			"chrome://inspect finds it once you add %s under \"Discover network targets\"\n", defaultPort, addr, addr)
	}
	fmt.Fprintf(stderr, "inspector-worker: listening on http://%s\n", addr)
	fmt.Fprintf(stderr, "inspector-worker: open in Chrome: %s\n", srv.FrontendURL())
	if !fellBack && addr == net.JoinHostPort("127.0.0.1", strconv.Itoa(defaultPort)) {
		fmt.Fprintf(stderr, "inspector-worker: or open chrome://inspect and click \"inspect\" under Remote Target\n")
	}
	return errc
}

func shutdown(srv *cdpserver.Server, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	_ = srv.Shutdown(ctx, reason)
}
