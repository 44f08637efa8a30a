package hostnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

const (
	defaultReadyTimeout = 15 * time.Second
	// outputDrainGrace is how long Done waits, after node exited, for its
	// stdout/stderr pipes to reach EOF while nothing is read from them
	// (output.go). A descendant that inherited them and left node's group
	// could otherwise hold Done (and the worker's shutdown) open forever;
	// after the grace the pipes are closed and the rest of its output is
	// lost. Data still flowing is never cut.
	outputDrainGrace = 2 * time.Second
)

// The flags Start inserts right after the executable. Port 0 lets the kernel
// pick a free port; Node prints the resulting URL on stderr.
const (
	inspectFlag    = "--inspect=127.0.0.1:0"
	inspectBrkFlag = "--inspect-brk=127.0.0.1:0"
	// inspectWaitFlag (Node >= 20.15) holds the script until a session sends
	// Runtime.runIfWaitingForDebugger, without breaking on its first line.
	inspectWaitFlag = "--inspect-wait=127.0.0.1:0"
)

// Options configures Start. Zero values are documented defaults.
type Options struct {
	Argv         []string      // node executable then its flags, script and args, e.g. {"node","--trace-warnings","app.js","x"}; required, len>=1 (Argv[0] resolved with exec.LookPath)
	Brk          bool          // insert --inspect-brk=127.0.0.1:0 instead of --inspect=127.0.0.1:0 (inserted right after Argv[0])
	Wait         bool          // insert --inspect-wait=127.0.0.1:0 (ignored with Brk): the script starts only when a session sends Runtime.runIfWaitingForDebugger
	NoInspector  bool          // insert no inspect flag (Brk and Wait ignored) and return once node was spawned; InspectorURL is "" (e.g. node --test, whose parent never opens one)
	ExtraFlags   []string      // further node flags inserted after the inspect flag (e.g. --enable-source-maps for trace, --require preload later)
	Dir          string        // working directory; "" = current
	Env          []string      // nil = os.Environ()
	Stdin        io.Reader     // nil = /dev/null; an *os.File is passed as is, anything else is copied in by a goroutine that ends when Stdin does
	Stdout       io.Writer     // child's stdout copied here; nil = discard
	Stderr       io.Writer     // EVERY stderr line of the child, including Node's inspector banner lines, copied here unchanged; nil = discard
	ExtraFiles   []*os.File    // passed to the child as fd 3, 4, ... (host channel later)
	ReadyTimeout time.Duration // how long to wait for the inspector URL; 0 = 15s

	// RemoveIfOrphaned lists paths (files, or directories removed with
	// everything in them) that the orphan reaper deletes if the process that
	// called Start dies before node was reaped (SIGKILL, a crash), e.g. a
	// preload file node needs for as long as it runs. On every other path the
	// caller removes them itself. Relative paths are resolved at Start.
	RemoveIfOrphaned []string
}

// Process is a node child started by Start.
//
// Goroutines: waitLoop (waits for the exit, kills the group, reaps node and
// the orphan reaper, drains the output, closes Done); one outputCopier loop
// each for stdout (unless it is a file) and stderr (which goes through a
// stderrScanner); stdinLoop when Options.Stdin is not an *os.File.
//
// Besides node, Start runs one more process, the orphan reaper (reaper.go):
// it kills node's group and removes Options.RemoveIfOrphaned if this process
// dies without reaping node. It is reaped before Done is closed.
type Process struct {
	cmd    *exec.Cmd     // Static after Start; cmd.Wait is called by waitLoop only.
	reaper *orphanReaper // Static after Start; owned by waitLoop.
	// copiers copy node's stdout (unless it is a file) and stderr; static
	// after Start, drained by waitLoop.
	copiers []*outputCopier
	argv    []string       // Static after construction.
	url     string         // Static after Start returned it.
	stderr  *stderrScanner // Static after construction; see its field comments.
	done    chan struct{}  // closed by waitLoop

	exitCode atomic.Int64 // -1 until waitLoop stores the final code

	// Lock order: see docs/locks.md.
	mu     sync.Mutex
	exited bool // Guarded by mu: the child exited; its group may no longer be signalled.
	killed bool // Guarded by mu: Kill sent SIGKILL while the child was alive.
}

// Start spawns node with its inspector on 127.0.0.1 (port chosen by the
// kernel) and returns once the FIRST "Debugger listening on ws://…" line was
// read from its stderr. ctx bounds only that wait: once Start returned, the
// process runs until it exits or Kill is called. With Options.NoInspector it
// returns as soon as node was spawned.
//
// Errors are *StartError values matching ErrNodeNotFound, ErrSpawn,
// ErrInspectorFailed, ErrExitedEarly, ErrReadyTimeout or ErrStartCanceled.
// On any error no child process remains.
func Start(ctx context.Context, opts Options) (*Process, error) {
	p, err := spawn(ctx, opts)
	if err != nil {
		return nil, err
	}
	if opts.NoInspector {
		return p, nil
	}
	if err := p.awaitURL(ctx, opts.ReadyTimeout); err != nil {
		return nil, err
	}
	return p, nil
}

func nodeArgv(exe string, opts Options) []string {
	flag := inspectFlag
	switch {
	case opts.Brk:
		flag = inspectBrkFlag
	case opts.Wait:
		flag = inspectWaitFlag
	}
	argv := make([]string, 0, len(opts.Argv)+1+len(opts.ExtraFlags))
	argv = append(argv, exe)
	if !opts.NoInspector {
		argv = append(argv, flag)
	}
	argv = append(argv, opts.ExtraFlags...)
	return append(argv, opts.Argv[1:]...)
}

func spawn(ctx context.Context, opts Options) (*Process, error) {
	if len(opts.Argv) == 0 {
		return nil, &StartError{Kind: ErrNodeNotFound, ExitCode: -1, Err: errors.New("Options.Argv is empty")}
	}
	exe, err := exec.LookPath(opts.Argv[0])
	if err != nil {
		return nil, &StartError{Kind: ErrNodeNotFound, Argv: nodeArgv(opts.Argv[0], opts), ExitCode: -1, Err: err}
	}
	argv := nodeArgv(exe, opts)
	if err := ctx.Err(); err != nil {
		return nil, &StartError{Kind: ErrStartCanceled, Argv: argv, ExitCode: -1, Err: err}
	}
	sc := newStderrScanner(opts.Stderr, exe)
	cmd := &exec.Cmd{
		Path: exe, Args: argv, Dir: opts.Dir, Env: opts.Env,
		Stdout: opts.Stdout, ExtraFiles: opts.ExtraFiles,
		SysProcAttr: sysProcAttr(),
	}
	copiers, childEnds, err := setOutputs(cmd, opts.Stdout, sc)
	if err != nil {
		return nil, &StartError{Kind: ErrSpawn, Argv: argv, ExitCode: -1, Err: err}
	}
	stdinCopy, err := setStdin(cmd, opts.Stdin)
	if err == nil {
		err = cmd.Start()
	}
	if stdinCopy != nil {
		stdinCopy(err == nil)
	}
	for i, c := range copiers {
		if err != nil {
			c.abandon(childEnds[i])
			continue
		}
		childEnds[i].Close() // the child holds its own copy
		c.start()
	}
	if err != nil {
		if opts.Dir != "" { // exec reports a bad Dir as if the executable were missing
			err = fmt.Errorf("in directory %q: %w", opts.Dir, err)
		}
		return nil, &StartError{Kind: ErrSpawn, Argv: argv, ExitCode: -1, Err: err}
	}
	reaper, err := startReaper(cmd.Process.Pid, opts.RemoveIfOrphaned)
	if err != nil {
		killGroup(cmd.Process.Pid) // node is alive and unreaped: its group id is still its own
		_ = cmd.Wait()
		for _, c := range copiers {
			c.drain()
		}
		return nil, &StartError{Kind: ErrSpawn, Argv: argv, PID: cmd.Process.Pid, ExitCode: -1, Err: err}
	}
	p := &Process{cmd: cmd, reaper: reaper, copiers: copiers, argv: argv, stderr: sc, done: make(chan struct{})}
	p.exitCode.Store(-1)
	go p.waitLoop()
	return p, nil
}

// setOutputs gives the child our own pipes for stdout (unless it goes to a
// file, which the child then writes directly) and stderr, copied by
// outputCopiers, instead of exec.Cmd's copiers whose WaitDelay cuts a slow
// consumer off (see outputCopier). It returns the copiers and the child's
// ends, in the same order.
func setOutputs(cmd *exec.Cmd, stdout io.Writer, stderr io.Writer) ([]*outputCopier, []*os.File, error) {
	var copiers []*outputCopier
	var ends []*os.File
	add := func(w io.Writer) (*os.File, error) {
		end, c, err := newOutputCopier(w)
		if err != nil {
			for i, c := range copiers {
				c.abandon(ends[i])
			}
			return nil, err
		}
		copiers, ends = append(copiers, c), append(ends, end)
		return end, nil
	}
	if _, isFile := stdout.(*os.File); stdout != nil && !isFile {
		end, err := add(stdout)
		if err != nil {
			return nil, nil, err
		}
		cmd.Stdout = end
	}
	end, err := add(stderr)
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = end
	return copiers, ends, nil
}

// setStdin connects r to the child. exec.Cmd would copy a non-file reader
// itself, but then Wait (and so Done) would hang for as long as r blocks in
// Read, e.g. forever on an idle network stream. Here the copy runs beside
// the process instead and Done ignores it. The returned func, if any, must be
// called after cmd.Start with whether it succeeded.
func setStdin(cmd *exec.Cmd, r io.Reader) (func(started bool), error) {
	if r == nil {
		return nil, nil // exec.Cmd opens /dev/null
	}
	if f, ok := r.(*os.File); ok {
		cmd.Stdin = f
		return nil, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin = pr
	return func(started bool) {
		pr.Close() // the child holds its own copy
		if !started {
			pw.Close()
			return
		}
		go stdinLoop(pw, r)
	}, nil
}

// stdinLoop ends when r ends or the child stops reading (EPIPE).
func stdinLoop(pw *os.File, r io.Reader) {
	_, _ = io.Copy(pw, r)
	pw.Close()
}

// waitLoop is the only caller of cmd.Wait. Once node exited, and BEFORE
// reaping it, it SIGKILLs node's whole process group: whatever the host
// started and left behind (children, grandchildren that ignore SIGTERM) dies
// with it, whether the host ended on its own, was killed, or stopped on a
// forwarded signal. Only processes that left the group (setsid, node's
// spawn({detached: true})) survive. As long as node is an unreaped zombie its
// pid, which is the group id, cannot be reused, so neither this kill nor a
// later Kill can hit a stranger (see waitExitedNoReap). The orphan reaper is
// released at the same point, for the same reason.
func (p *Process) waitLoop() {
	if waitExitedNoReap(p.cmd.Process.Pid) {
		p.mu.Lock()
		killGroup(p.cmd.Process.Pid)
		p.exited = true
		p.mu.Unlock()
		p.reaper.release()
	}
	// The error is the exit status, read from ProcessState below. Wait does
	// not wait for output: every pipe is ours (setOutputs).
	_ = p.cmd.Wait()
	for _, c := range p.copiers {
		c.drain()
	}
	p.mu.Lock()
	p.exited = true // without waitExitedNoReap (not Linux) only now
	p.mu.Unlock()
	p.reaper.wait()
	p.stderr.finish()
	p.exitCode.Store(int64(exitCodeOf(p.cmd.ProcessState)))
	close(p.done)
}

// awaitURL waits for the inspector URL, a failure line, the child's exit, the
// ready timeout or ctx, whichever comes first, and kills the child on error.
func (p *Process) awaitURL(ctx context.Context, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = defaultReadyTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.stderr.ready:
		p.url = p.stderr.url
		return nil
	case <-p.stderr.failed:
		p.Kill()
		return p.startError(ErrInspectorFailed, nil)
	case <-p.done:
		select {
		case <-p.stderr.ready: // a fast script printed the URL, then exited
			p.url = p.stderr.url
			return nil
		default:
		}
		if p.stderr.failLine != "" {
			return p.startError(ErrInspectorFailed, nil)
		}
		return p.startError(ErrExitedEarly, nil)
	case <-timer.C:
		p.Kill()
		return p.startError(ErrReadyTimeout, fmt.Errorf("none within %v", timeout))
	case <-ctx.Done():
		p.Kill()
		return p.startError(ErrStartCanceled, ctx.Err())
	}
}

// startError must be called after Done: it reads what waitLoop and the
// stderr copier wrote.
func (p *Process) startError(kind, cause error) *StartError {
	code := p.ExitCode()
	p.mu.Lock()
	if p.killed {
		code = -1 // our SIGKILL, not something the user should chase
	}
	p.mu.Unlock()
	return &StartError{
		Kind: kind, Argv: p.NodeArgs(), PID: p.PID(), Line: p.stderr.failLine,
		ExitCode: code, StderrTail: p.StderrTail(), Err: cause,
	}
}

// InspectorURL is ws://127.0.0.1:PORT/UUID as printed by node.
func (p *Process) InspectorURL() string { return p.url }

// PID is node's process id, which is also its process group id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// NodeArgs is the full argv executed; element 0 is the resolved executable.
func (p *Process) NodeArgs() []string { return append([]string(nil), p.argv...) }

// Done is closed when the child has exited, its process group was killed (on
// Linux), the orphan reaper was reaped, AND its stdout/stderr were fully
// copied to Options.Stdout/Stderr (or stayed idle for outputDrainGrace).
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitCode is valid after Done: the exit status, or 128+signal number when
// the child was killed by a signal. It is -1 before Done.
func (p *Process) ExitCode() int { return int(p.exitCode.Load()) }

// WaitingForDisconnect is closed when node printed "Waiting for the debugger
// to disconnect...": the script finished but an attached session keeps the
// process alive until every session closes.
func (p *Process) WaitingForDisconnect() <-chan struct{} { return p.stderr.waiting }

// Signal delivers sig to node only (not its group), e.g. a forwarded SIGINT.
// After the child exited it returns an error matching os.ErrProcessDone.
func (p *Process) Signal(sig os.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("hostnode: signal %v to node (pid %d): %w", sig, p.PID(), err)
	}
	return nil
}

// Kill SIGKILLs node's whole process group, unless node already exited (then
// waitLoop killed the group already), and waits for Done. Idempotent and safe
// to call concurrently.
func (p *Process) Kill() {
	p.mu.Lock()
	if !p.exited {
		killGroup(p.cmd.Process.Pid)
		p.killed = true
	}
	p.mu.Unlock()
	<-p.done
}

// StderrTail is the last <= 4000 bytes of stderr seen so far.
func (p *Process) StderrTail() string { return p.stderr.Tail() }
