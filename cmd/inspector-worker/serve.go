package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/inspector-worker/inspector-worker/cdpserver"
	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/trace"
)

// discoverTimeout bounds the attach to an existing Node inspector.
const discoverTimeout = 10 * time.Second

func cmdServe(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ep endpointFlags
	ep.register(fs)
	addr := fs.String("host-inspector", "", "the Node inspector to attach to: ws://127.0.0.1:P/UUID or 127.0.0.1:P")
	channelFD := fs.Int("host-channel-fd", 0, "an inherited socket carrying the host's observations (set by client/js/embed.mjs; needs INSPECTOR_WORKER_TOKEN)")
	if err := parseFlags(fs, args, &ep); err != nil {
		return 2
	}
	if *addr == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "inspector-worker serve: give --host-inspector, e.g.\n"+
			"  node --inspect=127.0.0.1:9230 app.js &\n  inspector-worker serve --host-inspector 127.0.0.1:9230\n")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), discoverTimeout)
	defer cancel()
	wsURL, hostport, needsDiscover, err := hostnode.ParseInspectorAddr(*addr)
	if err == nil && needsDiscover {
		wsURL, err = hostnode.Discover(ctx, hostport)
	}
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	ln, fellBack, err := ep.listen()
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	host, err := hostnode.AttachHost(ctx, wsURL, hostnode.HostOptions{})
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	traceEngine := trace.New(trace.Options{}) // workspace: the current directory
	defer traceEngine.Shutdown(context.Background())
	srv := cdpserver.New(host, ln, ep.serverOptions(cdpserver.Options{Logf: logTo(stderr), Mount: trace.Routes(traceEngine)}))
	if *channelFD > 0 {
		obs, err := inheritedObservation(ln, *channelFD)
		if err == nil {
			err = obs.serve(srv, stderr, ep.maxClients)
		}
		if err != nil {
			host.Finish("inspector-worker could not start")
			ln.Close()
			fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
			return 1
		}
		defer obs.stop()
	}
	stopNative, err := ep.native.start(srv, stderr)
	if err != nil {
		host.Finish("inspector-worker could not start")
		ln.Close()
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	defer stopNative()
	serveErr := serveEndpoint(srv, ln, fellBack, stderr)
	select {
	case sig := <-sigs:
		// The host is the user's own process: detach, never signal it.
		host.Finish(fmt.Sprintf("inspector-worker stopped (%s); the host keeps running", sig))
		shutdown(srv, host.Reason())
		return 0
	case err := <-serveErr:
		host.Finish("inspector-worker's endpoint failed")
		fmt.Fprintf(stderr, "inspector-worker: the DevTools endpoint failed: %v\n", err)
		return 1
	case <-host.Done():
		fmt.Fprintf(stderr, "inspector-worker: %s; stopping\n", host.Reason())
		shutdown(srv, host.Reason())
		return 0
	}
}
