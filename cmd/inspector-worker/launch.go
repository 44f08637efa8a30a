package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/inspector-worker/inspector-worker/cdpserver"
	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
	"github.com/inspector-worker/inspector-worker/trace"
)

// passOnScripts are the scripts of package managers and launchers: a Node
// process running one (its script's real path ends with an entry, or holds
// an entry that ends with "/") never becomes the host; it only passes the
// worker's variables on to the processes it starts. Package managers run
// no user code; the launchers (next dev, nodemon, tsx, ts-node-dev) run
// the app in a child process, which is what the user wants to see. The
// same list is PASS_ON in client/js/preload.in.cjs (TestPassOnListsAgree).
var passOnScripts = []string{
	"/npm/bin/npm-cli.js", "/npm/bin/npx-cli.js",
	"/pnpm/bin/pnpm.cjs", "/pnpm/bin/pnpx.cjs", "/pnpm/dist/pnpm.cjs",
	"/yarn/bin/yarn.js", "/yarn/bin/yarn.cjs", "/yarn/lib/cli.js", "/.yarn/releases/",
	"/corepack/dist/",
	"/next/dist/bin/next", "/nodemon/bin/nodemon.js", "/tsx/dist/cli.mjs", "/tsx/dist/cli.cjs",
	"/ts-node-dev/lib/bin.js",
}

// isPassOnScript reports whether the script at path is in passOnScripts,
// after resolving symbolic links (.bin shims and /usr/bin/npm are links).
func isPassOnScript(path string) bool {
	if path == "" {
		return false
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	path = filepath.ToSlash(path)
	for _, s := range passOnScripts {
		if strings.HasSuffix(s, "/") && strings.Contains(path, s) || strings.HasSuffix(path, s) {
			return true
		}
	}
	return false
}

// isNodeExecutable reports whether argv[0] names node itself.
func isNodeExecutable(arg0 string) bool {
	switch strings.TrimSuffix(filepath.Base(arg0), ".exe") {
	case "node", "nodejs":
		return true
	}
	return false
}

// startsAsIs reports whether `run` starts argv as is (the preload through
// NODE_OPTIONS, no flag in argv) rather than inserting the inspect flags:
// anything but node (npm, npx, a shell, a .bin shim), and node running a
// package manager or launcher script.
func startsAsIs(argv []string) bool {
	return !isNodeExecutable(argv[0]) || isPassOnScript(scriptOf(argv))
}

// noNodeNotice is how long a command may run before the worker says that
// no Node.js process has claimed the host yet (e.g. a build step first);
// it keeps waiting.
const noNodeNotice = 15 * time.Second

// hostPipeWait bounds the wait for the host's host channel after its
// inspector was attached: the preload connects right after the release.
// Without it the window still debugs the host; observe() and fetch capture
// are then off.
const hostPipeWait = 5 * time.Second

// asIsEnv is the command's environment: the host's, without the fds the
// preload would read (nothing is passed as fd 3 or 4: package managers do
// not pass them on), with the claim socket and the preload in NODE_OPTIONS.
func (r hostRun) asIsEnv(obs *observation, claims *hostnode.ClaimServer) []string {
	env := r.hostEnv(obs)
	if obs.children.token.IsZero() { // --no-children: NODE_OPTIONS is set here alone
		env = withNodeOptions(env, obs.preload)
	}
	return append(env, carrier.HostFDEnv+"=", exitReportEnv+"=", hostnode.ClaimSocketEnv+"="+claims.Path())
}

// runAsIs runs a command that is not `node …` (see startsAsIs): it starts
// it unchanged, waits for the first Node process that claims the host
// (hostnode.ClaimServer), attaches to it as to a `node --inspect` host and
// serves DevTools until the command exits, with the command's exit code.
func runAsIs(r hostRun, stderr io.Writer) int {
	ln, fellBack, err := r.ep.listen()
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	sigs := make(chan os.Signal, maxForwardedSignals)
	notifySignals(sigs)
	defer stopSignals(sigs)
	filter := hostnode.NewBannerFilter(stderr)
	defer filter.Close()
	obs, err := newObservation(ln, r.children)
	if err == nil {
		defer obs.close()
	}
	var claims *hostnode.ClaimServer
	if err == nil {
		claims, err = hostnode.NewClaimServer()
	}
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	defer claims.Close()
	obs.filter = filter
	proc, err := hostnode.Start(context.Background(), hostnode.Options{
		Argv: r.argv, NoInspector: true, Dir: r.dir, Env: r.asIsEnv(obs, claims),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: filter,
		RemoveIfOrphaned: append(append(obs.tempFiles(), claims.Dir()), r.temp...),
	})
	obs.started()
	var se *hostnode.StartError
	if errors.As(err, &se) && errors.Is(err, hostnode.ErrNodeNotFound) {
		ln.Close()
		fmt.Fprintf(stderr, "inspector-worker: cannot start %s: %v\n", r.argv[0], se.Err)
		return 127 // as a shell says it
	}
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	defer proc.Kill()
	claim, code, ok := awaitClaim(proc, claims, sigs, r.argv, stderr)
	if !ok {
		ln.Close()
		return code
	}
	stopAttach := filter.WatchAttaches(claim.URL) // its "Debugger attached." would reach the terminal
	defer stopAttach()
	host, err := hostnode.AttachHost(context.Background(), claim.URL, hostnode.HostOptions{Release: true})
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "inspector-worker: cannot attach to the host (pid %d): %v; stopping the command\n", claim.PID, err)
		proc.Kill()
		return 1
	}
	fmt.Fprintf(stderr, "inspector-worker: the host is pid %d (%s): the command's first Node.js process "+
		"that is not a package manager or launcher\n", claim.PID, strings.Join(claim.Argv, " "))
	obs.pipe = awaitHostPipe(claims, proc)
	if r.traceNode == "" {
		r.traceNode = nodeOf(claim.Argv)
	}
	traceEngine := trace.New(trace.Options{Node: r.traceNode})
	defer traceEngine.Shutdown(context.Background())
	srv := cdpserver.New(host, ln, r.ep.serverOptions(cdpserver.Options{
		Logf: logTo(stderr), Mount: trace.Routes(traceEngine), HideScripts: []string{obs.preload},
	}))
	if err := obs.serve(srv, stderr, r.ep.maxClients); err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	serveErr := serveEndpoint(srv, ln, fellBack, stderr)
	return superviseHost(proc, host, srv, obs, sigs, serveErr, filter, stderr, true)
}

// awaitClaim waits for the host's claim, or for the command to exit
// without one (ok false, with its exit code). Signals meanwhile go to the
// command's group.
func awaitClaim(proc *hostnode.Process, claims *hostnode.ClaimServer, sigs <-chan os.Signal,
	argv []string, stderr io.Writer) (hostnode.Claim, int, bool) {
	notice := time.NewTimer(noNodeNotice)
	defer notice.Stop()
	forwarded := 0
	for {
		select {
		case c := <-claims.Claims():
			return c, 0, true
		case <-notice.C:
			fmt.Fprintf(stderr, "inspector-worker: %q has started no Node.js process in %v; still waiting "+
				"(the first one that is not a package manager becomes the host)\n", strings.Join(argv, " "), noNodeNotice)
		case sig := <-sigs:
			forwarded++
			forwardAsIs(proc, sig, forwarded, stderr)
		case <-proc.Done():
			code := proc.ExitCode()
			fmt.Fprintf(stderr, "inspector-worker: %q exited with code %d and started no Node.js process: "+
				"nothing to debug (run -- node app.js, npm run …, npx … start one)\n", strings.Join(argv, " "), code)
			return hostnode.Claim{}, code, false
		}
	}
}

// awaitHostPipe returns the host's host channel, or a closed connection
// when it does not come within hostPipeWait (the worker then serves no
// observation from the host).
func awaitHostPipe(claims *hostnode.ClaimServer, proc *hostnode.Process) net.Conn {
	t := time.NewTimer(hostPipeWait)
	defer t.Stop()
	select {
	case c := <-claims.Pipe():
		return c
	case <-t.C:
	case <-proc.Done():
	}
	a, b := net.Pipe()
	b.Close()
	return a
}

// forwardAsIs passes a signal to the command's whole process group, as a
// terminal's Ctrl-C does (a shell or npm may not pass it on), or kills the
// group once maxForwardedSignals were asked for.
func forwardAsIs(proc *hostnode.Process, sig os.Signal, forwarded int, stderr io.Writer) {
	if forwarded >= maxForwardedSignals {
		fmt.Fprintf(stderr, "inspector-worker: %s received %d times; killing the command\n", sig, forwarded)
		proc.Kill()
		return
	}
	_ = proc.SignalGroup(sig)
}

// nodeOf is the node executable that runs the host, for /api/trace.
func nodeOf(hostArgv []string) string {
	if len(hostArgv) > 0 && hostArgv[0] != "" {
		return hostArgv[0] // process.argv[0]: the absolute path of node
	}
	return "node"
}
