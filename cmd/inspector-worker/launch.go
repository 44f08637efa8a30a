package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
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
// the app in a child process, which is what the user wants to see.
// "/corepack/v1/" is corepack's cache of the pnpm and yarn it downloads. The
// same list is PASS_ON in client/js/preload.in.cjs (TestPassOnListsAgree).
var passOnScripts = []string{
	"/npm/bin/npm-cli.js", "/npm/bin/npx-cli.js",
	"/pnpm/bin/pnpm.cjs", "/pnpm/bin/pnpx.cjs", "/pnpm/dist/pnpm.cjs",
	"/yarn/bin/yarn.js", "/yarn/bin/yarn.cjs", "/yarn/lib/cli.js", "/.yarn/releases/",
	"/corepack/dist/", "/corepack/v1/",
	"/next/dist/bin/next", "/nodemon/bin/nodemon.js", "/tsx/dist/cli.mjs", "/tsx/dist/cli.cjs",
	"/ts-node-dev/lib/bin.js",
}

// passOnNames name passOnScripts for the terminal.
var passOnNames = []string{"npm", "npx", "pnpm", "yarn", "corepack", "next", "nodemon", "tsx", "ts-node-dev"}

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

// isNodeExecutable reports whether argv[0] names node itself: by its name
// ("node", "nodejs"), also through symbolic links, or as the file `node` on
// $PATH is (a copy or link under another name).
func isNodeExecutable(arg0 string) bool {
	isNodeName := func(p string) bool {
		switch strings.TrimSuffix(filepath.Base(p), ".exe") {
		case "node", "nodejs":
			return true
		}
		return false
	}
	if isNodeName(arg0) {
		return true
	}
	p, err := exec.LookPath(arg0)
	if err != nil {
		return false
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	if isNodeName(p) {
		return true
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return false
	}
	if real, err := filepath.EvalSymlinks(node); err == nil {
		node = real
	}
	a, errA := os.Stat(p)
	b, errB := os.Stat(node)
	return errA == nil && errB == nil && os.SameFile(a, b)
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

// asIsRun is one `run` of a command started as is (startsAsIs). Its host
// is the process that claimed it (hostnode.ClaimServer); when that one ends
// while the command runs on (a launcher restarting the app, a script's
// next step), the next claim is the host, and the windows stay open as
// under --watch (cdpserver's HostDown, HostUp).
type asIsRun struct {
	stderr io.Writer
	proc   *hostnode.Process // the command
	claims *hostnode.ClaimServer
	filter *hostnode.BannerFilter
	obs    *observation
	srv    *cdpserver.Server

	host       *hostnode.Host // the current host; nil while none
	hostPID    int
	stopAttach func() // ends filter.WatchAttaches for the current host
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
	a := &asIsRun{stderr: stderr, filter: hostnode.NewBannerFilter(stderr)}
	defer a.filter.Close()
	a.obs, err = newObservation(ln, r.children)
	if err == nil {
		defer a.obs.close()
		a.claims, err = hostnode.NewClaimServer()
	}
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	defer a.claims.Close()
	a.obs.filter = a.filter
	a.proc, err = hostnode.Start(context.Background(), hostnode.Options{
		Argv: r.argv, NoInspector: true, Dir: r.dir, Env: r.asIsEnv(a.obs, a.claims),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: a.filter,
		RemoveIfOrphaned: append(append(a.obs.tempFiles(), a.claims.Dir()), r.temp...),
	})
	a.obs.started()
	if err != nil {
		ln.Close()
		return startFailed(r.argv, err, stderr)
	}
	defer a.proc.Kill()
	defer func() {
		if a.stopAttach != nil {
			a.stopAttach()
		}
	}()
	claim, code, ok := awaitClaim(a.proc, a.claims, sigs, r.argv, stderr)
	if !ok {
		ln.Close()
		return code
	}
	if !a.attach(claim, "the command's first Node.js process that is not a package manager or launcher ("+
		strings.Join(passOnNames, ", ")+")") {
		ln.Close()
		a.proc.Kill()
		return 1
	}
	if r.traceNode == "" {
		r.traceNode = nodeOf(claim.Argv)
	}
	traceEngine := trace.New(trace.Options{Node: r.traceNode})
	defer traceEngine.Shutdown(context.Background())
	// The host channel comes once the host runs (supervise swaps it in).
	a.obs.pipe = closedConn()
	a.srv = cdpserver.New(a.host, ln, r.ep.serverOptions(cdpserver.Options{
		Logf: logTo(stderr), Mount: trace.Routes(traceEngine), HideScripts: []string{a.obs.preload}, Watch: true,
	}))
	if err := a.obs.serve(a.srv, stderr, r.ep.maxClients); err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	stopNative, err := r.ep.native.start(a.srv, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	defer stopNative()
	serveErr := serveEndpoint(a.srv, ln, fellBack, stderr)
	a.host.Release()
	return a.supervise(sigs, serveErr)
}

// startFailed explains a command that could not start.
func startFailed(argv []string, err error, stderr io.Writer) int {
	var se *hostnode.StartError
	if errors.As(err, &se) && errors.Is(err, hostnode.ErrNodeNotFound) {
		fmt.Fprintf(stderr, "inspector-worker: cannot start %s: %v\n", argv[0], se.Err)
		return 127 // as a shell says it
	}
	fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
	return 1
}

// attach makes the claimant the host, without letting it run yet; why says
// why it is the one (for the terminal).
func (a *asIsRun) attach(c hostnode.Claim, why string) bool {
	stop := a.filter.WatchAttaches(c.URL) // its "Debugger attached." would reach the terminal
	host, err := hostnode.AttachHost(context.Background(), c.URL, hostnode.HostOptions{})
	if err != nil {
		stop()
		fmt.Fprintf(a.stderr, "inspector-worker: cannot attach to the host (pid %d): %v\n", c.PID, err)
		return false
	}
	a.host, a.hostPID, a.stopAttach = host, c.PID, stop
	fmt.Fprintf(a.stderr, "inspector-worker: the host is pid %d (%s): %s\n", c.PID, strings.Join(c.Argv, " "), why)
	return true
}

// supervise forwards signals to the command's group, passes the host role
// on when the host ends, and on the command's exit closes everything and
// returns its exit code.
func (a *asIsRun) supervise(sigs <-chan os.Signal, serveErr <-chan error) int {
	forwarded := 0
	endedGone := false
	var claims <-chan hostnode.Claim
	for {
		var hostDone, finished <-chan struct{}
		if a.host != nil {
			hostDone, finished = a.host.Done(), a.host.ScriptFinished()
		}
		select {
		case sig := <-sigs:
			forwarded++
			forwardAsIs(a.proc, sig, forwarded, a.stderr)
		case err := <-serveErr:
			fmt.Fprintf(a.stderr, "inspector-worker: the DevTools endpoint failed: %v; stopping the command\n", err)
			a.proc.Kill()
			serveErr = nil
		case <-outputGone(a.stderr):
			a.proc.Kill() // the user's pipeline ended (outputGuard)
			endedGone = true
		case conn := <-a.claims.Pipe():
			a.obs.swapPipe(conn, a.stderr)
		case <-finished:
			// Node waits for its sessions to disconnect: let it exit.
			a.hostEnded("the host script finished")
			claims = a.claims.Claims()
		case <-hostDone:
			a.hostEnded(a.host.Reason())
			claims = a.claims.Claims()
		case c := <-claims:
			if a.attach(c, "the command's next Node.js process after the previous host ended") {
				claims = nil
				a.srv.HostUp(context.Background(), a.host, fmt.Sprintf("inspector-worker: the host is now pid %d (%s)",
					c.PID, strings.Join(c.Argv, " ")))
				a.host.Release()
			} else {
				a.claims.Reopen()
			}
		case <-a.proc.Done():
			a.filter.Close()
			code := a.proc.ExitCode()
			if endedGone {
				code = outputGoneCode
			}
			reason := fmt.Sprintf("the command exited with code %d", code)
			if a.host != nil {
				a.host.Finish(reason)
			}
			a.obs.stop()
			shutdown(a.srv, reason)
			return code
		}
	}
}

// hostEnded tells the windows that the host is gone and frees the host role
// for the command's next Node process.
func (a *asIsRun) hostEnded(why string) {
	a.host.Finish(why)
	a.stopAttach()
	a.host, a.stopAttach = nil, nil
	note := fmt.Sprintf("the host (pid %d) ended: %s; the command's next Node.js process becomes the host", a.hostPID, why)
	a.srv.HostDown(note, "info", "inspector-worker: "+note)
	a.claims.Reopen()
	a.obs.swapPipe(closedConn(), a.stderr)
}

// closedConn is a host channel that has ended: a host that did not connect
// its own has no observations.
func closedConn() net.Conn {
	a, b := net.Pipe()
	b.Close()
	return a
}

// swapPipe ends the current host channel and serves conn instead.
func (o *observation) swapPipe(conn net.Conn, stderr io.Writer) {
	o.stopPipe()
	<-o.pipeDone
	o.pipe = conn
	o.servePipe(stderr)
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
