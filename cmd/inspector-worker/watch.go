package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/inspector-worker/inspector-worker/cdpserver"
	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/trace"
)

// stopGrace is how long a host being restarted gets after SIGTERM before
// its group is SIGKILLed: enough for an app's own shutdown handlers (close
// a server, flush a log), short enough that a save is not kept waiting.
const stopGrace = 3 * time.Second

// pathList is a repeatable flag.
type pathList []string

func (p *pathList) String() string     { return strings.Join(*p, ",") }
func (p *pathList) Set(v string) error { *p = append(*p, v); return nil }

// nodeFlagsWithValue are node flags whose value is the next argument, so
// the script is not mistaken for it.
var nodeFlagsWithValue = map[string]bool{
	"-r": true, "--require": true, "--import": true, "--loader": true, "--experimental-loader": true,
	"--env-file": true, "--input-type": true, "--conditions": true, "-C": true, "--title": true,
}

// scriptOf finds the script in a host command (node [flags] script [args]):
// "" for node -e/-p or a REPL.
func scriptOf(argv []string) string {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-e" || a == "--eval" || a == "-p" || a == "--print":
			return ""
		case a == "--":
			if i+1 < len(argv) {
				return argv[i+1]
			}
			return ""
		case nodeFlagsWithValue[a]:
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// defaultWatchPaths is the script's directory (the working directory when
// there is no script).
func defaultWatchPaths(r hostRun) []string {
	dir := r.dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if s := scriptOf(r.argv); s != "" {
		if !filepath.IsAbs(s) {
			s = filepath.Join(dir, s)
		}
		return []string{filepath.Dir(s)}
	}
	return []string{dir}
}

// watchRun is one `run --watch`: a host restarted on every change.
type watchRun struct {
	r      hostRun
	stderr io.Writer
	opts   hostnode.Options
	filter *hostnode.BannerFilter // opts.Stderr; each node's stderr is a stream of its own
	obs    *observation
	srv    *cdpserver.Server

	proc     *hostnode.Process // nil while no host runs
	host     *hostnode.Host    // the last attached host
	lastCode int               // the last host's exit code: the worker's on Ctrl-C
	restarts int
}

// startHost starts and attaches a host without releasing it: the windows'
// state is replayed first (cdpserver.Server.HostUp).
func (w *watchRun) startHost(ctx context.Context) (*hostnode.Process, *hostnode.Host, error) {
	// Each node's stderr is a stream of its own for the banner filter; the
	// previous node is gone (Stop, or a failed start) before the next starts.
	w.filter.Close()
	proc, err := hostnode.Start(ctx, w.opts)
	var se *hostnode.StartError
	if errors.As(err, &se) && strings.Contains(se.Line, "--inspect-wait") {
		w.opts.Wait = false // Node < 20.15: see runHost
		w.filter.Close()
		proc, err = hostnode.Start(ctx, w.opts)
	}
	w.obs.started()
	if err != nil {
		return nil, nil, err
	}
	host, err := hostnode.AttachHost(ctx, proc.InspectorURL(), hostnode.HostOptions{
		Exited: proc.Done(), ExitReason: func() string { return fmt.Sprintf("the host exited with code %d", proc.ExitCode()) },
	})
	if err != nil {
		proc.Kill()
		return nil, nil, err
	}
	return proc, host, nil
}

// runWatch is runHost for --watch.
func runWatch(r hostRun, stderr io.Writer) int {
	paths, exts := r.watchPaths, []string(nil)
	if len(paths) == 0 {
		paths, exts = defaultWatchPaths(r), defaultWatchExts
	}
	fw, err := newFileWatcher(paths, exts, func(err error) { fmt.Fprintf(stderr, "inspector-worker: watching files: %v\n", err) })
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	defer fw.Close()
	ln, fellBack, err := r.ep.listen()
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	sigs := make(chan os.Signal, maxForwardedSignals)
	notifySignals(sigs)
	defer stopSignals(sigs)
	ctx := context.Background()
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
	w := &watchRun{r: r, stderr: stderr, filter: filter, obs: obs, lastCode: 0}
	w.opts = hostnode.Options{
		Argv: r.argv, Brk: r.brk, Wait: !r.brk, Dir: r.dir, Env: r.hostEnv(obs),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: filter,
		ExtraFiles: obs.extraFiles(), ExtraFlags: obs.nodeFlags(),
		RemoveIfOrphaned: append(obs.tempFiles(), r.temp...),
	}
	proc, host, err := w.startHost(ctx)
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		var se *hostnode.StartError
		if errors.As(err, &se) && se.ExitCode > 0 {
			return se.ExitCode
		}
		return 1
	}
	w.proc, w.host = proc, host
	defer func() {
		if w.proc != nil {
			w.proc.Kill()
		}
	}()
	if r.traceNode == "" {
		r.traceNode = proc.NodeArgs()[0]
	}
	traceEngine := trace.New(trace.Options{Node: r.traceNode})
	defer traceEngine.Shutdown(ctx)
	w.srv = cdpserver.New(host, ln, r.ep.serverOptions(cdpserver.Options{
		Logf: logTo(stderr), Mount: trace.Routes(traceEngine), HideScripts: []string{obs.preload}, Watch: true,
	}))
	if err := obs.serve(w.srv, stderr, r.ep.maxClients); err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	stopNative, err := r.ep.native.start(w.srv, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker: %v\n", err)
		return 1
	}
	defer stopNative()
	serveErr := serveEndpoint(w.srv, ln, fellBack, stderr)
	host.Release()
	fmt.Fprintf(stderr, "inspector-worker: watching %s; the host restarts when a file there changes\n", strings.Join(paths, ", "))
	return w.supervise(ctx, fw, sigs, serveErr)
}

// supervise is superviseHost for --watch: a host that ends leaves the worker
// waiting for a change; a change restarts the host; a signal is forwarded and
// the worker exits with the host's code (at once when no host runs).
func (w *watchRun) supervise(ctx context.Context, fw *fileWatcher, sigs <-chan os.Signal, serveErr <-chan error) int {
	var (
		quiet, maxWait <-chan time.Time
		quietT         *time.Timer
		stuck          <-chan time.Time
		endedStuck     bool
		stopping       bool
		forwarded      int
		finishedHost   *hostnode.Host // the host whose script-finished was handled
	)
	for {
		var procDone, finished <-chan struct{}
		if w.proc != nil {
			procDone = w.proc.Done()
			if w.host != finishedHost {
				finished = w.host.ScriptFinished()
			}
		}
		select {
		case sig := <-sigs:
			forwarded++
			if w.proc == nil {
				w.end(fmt.Sprintf("inspector-worker stopped (%s)", sig))
				return w.lastCode
			}
			stopping = true
			forwardSignal(w.proc, sig, forwarded, "the host", w.stderr)
		case <-outputGone(w.stderr):
			if w.proc != nil {
				w.proc.Kill() // the user's pipeline ended (outputGuard)
			}
			w.end("the reader of the worker's output is gone")
			return outputGoneCode
		case err := <-serveErr:
			fmt.Fprintf(w.stderr, "inspector-worker: the DevTools endpoint failed: %v; stopping the host\n", err)
			if w.proc != nil {
				w.proc.Kill()
			}
			w.end("the DevTools endpoint failed")
			return 1
		case <-fw.Changed():
			if quietT == nil {
				quietT = time.NewTimer(watchQuiet)
				maxWait = time.After(watchMaxWait)
			} else {
				quietT.Reset(watchQuiet)
			}
			quiet = quietT.C
		case <-quiet:
			quiet, maxWait, quietT = nil, nil, nil
			if !stopping {
				w.restart(ctx, fw)
				stuck, endedStuck = nil, false // armed for the host just replaced
			}
		case <-maxWait:
			quietT.Stop()
			quiet, maxWait, quietT = nil, nil, nil
			if !stopping {
				fmt.Fprintf(w.stderr, "inspector-worker: files kept changing for %v; restarting the host now (it restarts again once they settle)\n", watchMaxWait)
				w.restart(ctx, fw)
				stuck, endedStuck = nil, false // armed for the host just replaced
			}
		case <-finished:
			finishedHost = w.host
			// Node waits for its sessions to disconnect: let it exit.
			w.srv.HostDown("the host script finished", "", "")
			stuck = time.After(stuckHostGrace)
		case <-stuck:
			stuck, endedStuck = nil, true
			if w.proc != nil {
				fmt.Fprintf(w.stderr, "inspector-worker: the host did not exit within %v after its script finished; ending it\n", stuckHostGrace)
				w.proc.Kill()
			}
		case <-procDone:
			stuck = nil
			code := w.proc.ExitCode()
			if asked, ok := w.obs.exit.reported(); ok && endedStuck {
				code = asked
			}
			endedStuck = false
			w.lastCode = code
			w.filter.Close() // this node's stderr ended (Done): flush it
			tail := w.filter.Tail()
			w.proc = nil
			w.host.Finish(fmt.Sprintf("the host exited with code %d", code))
			if stopping {
				w.end(fmt.Sprintf("the host exited with code %d", code))
				return code
			}
			w.hostExited(code, tail)
		}
	}
}

// hostExited tells the terminal and every window that the host ended on its
// own and the worker waits for a change.
func (w *watchRun) hostExited(code int, stderrTail string) {
	reason := fmt.Sprintf("the host exited with code %d; save a watched file to restart it", code)
	fmt.Fprintf(w.stderr, "inspector-worker: %s (Ctrl-C quits)\n", reason)
	level, note := "info", "inspector-worker: "+reason
	if code != 0 {
		level = "error"
		if tail := strings.TrimSpace(stderrTail); tail != "" {
			note += "\n" + tail
		}
	}
	w.srv.HostDown(reason, level, note)
}

// restart stops the running host, if any, and starts the next one; the
// windows get their state replayed before it runs.
func (w *watchRun) restart(ctx context.Context, fw *fileWatcher) {
	changed, n := fw.take()
	what := "a watched file"
	if changed != "" {
		what = changed
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, changed); err == nil && !strings.HasPrefix(rel, "..") {
				what = rel
			}
		}
	}
	if n > 1 {
		what += fmt.Sprintf(" (and %d more changes)", n-1)
	}
	prev := "was not running"
	if w.proc != nil {
		w.srv.HostDown("the host is restarting: "+what+" changed", "", "")
		w.proc.Stop(stopGrace)
		w.lastCode = w.proc.ExitCode()
		w.host.Finish("restarting")
		prev = fmt.Sprintf("exited with code %d", w.lastCode)
		w.proc = nil
	}
	w.restarts++
	fmt.Fprintf(w.stderr, "inspector-worker: %s changed; restarting the host (the previous one %s)\n", what, prev)
	if err := w.obs.renew(w.stderr); err != nil {
		w.failed(err)
		return
	}
	w.opts.ExtraFiles = w.obs.extraFiles()
	proc, host, err := w.startHost(ctx)
	if err != nil {
		w.failed(err)
		return
	}
	w.proc, w.host = proc, host
	w.srv.HostUp(ctx, host, fmt.Sprintf("inspector-worker: %s changed; restarted the host (the previous one %s)", what, prev))
	host.Release()
}

// failed reports a host that could not start; the worker waits for the
// next change.
func (w *watchRun) failed(err error) {
	reason := fmt.Sprintf("the host could not start: %v", err)
	fmt.Fprintf(w.stderr, "inspector-worker: %s; save a watched file to try again\n", reason)
	w.srv.HostDown(reason, "error", "inspector-worker: "+reason)
}

// end closes every window and the host channel.
func (w *watchRun) end(reason string) {
	w.obs.stop()
	shutdown(w.srv, reason)
}
