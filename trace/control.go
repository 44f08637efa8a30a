package trace

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/hostnode"
)

// SessionEnv is set in the target's environment to its session id, so a
// program (or its tests) can tell that it runs under a trace.
const SessionEnv = "INSPECTOR_WORKER_TRACE_SESSION"

const (
	// attachTimeout bounds the three attach commands. Node answers them at
	// once; only a wedged target takes longer.
	attachTimeout = 15 * time.Second
	// writeTimeout bounds one command written to the inspector.
	writeTimeout = 5 * time.Second
	// drainIdle bounds the wait for the probe's answer once the main
	// context was destroyed (every event sent before that answer has then
	// been read): the wait gives up only after this long
	// WITHOUT any message, so a backlog of a console flood is never cut.
	drainIdle = 3 * time.Second
	// releaseRetryFirst and releaseRetryMax space the re-sends of
	// Runtime.runIfWaitingForDebugger (see supervise).
	releaseRetryFirst = 50 * time.Millisecond
	releaseRetryMax   = 500 * time.Millisecond
	// readGrace bounds how long finish waits for the inspector socket to
	// deliver what Node sent before it exited.
	readGrace = 2 * time.Second
	// discardEvery: after this many console events the control loop asks
	// Node to drop its own console store (Runtime.discardConsoleEntries),
	// which otherwise keeps every logged object alive in the target.
	discardEvery = 1000
	// responseQueue bounds answers waiting for the control loop. At most a
	// handful of commands are ever in flight; overflow drops the answer,
	// which only a command nobody waits for can produce.
	responseQueue = 64
)

// Command ids the control loop uses. The rest count up from cmdNext.
const (
	cmdRuntimeEnable int64 = iota + 1
	cmdDebuggerEnable
	cmdRunIfWaiting
	cmdNodeWorkerEnable // hostnode.ThreadsEnable; answer not awaited
	cmdThreadForward    // every message hostnode.Threads forwards to a thread; answers ignored
	cmdNext
)

// launch spawns node, dials its inspector, starts the loops and returns
// once the attach succeeded (or failed; the session is then finished).
// ctx bounds only the start: the session itself lives on s.ctx.
func (s *session) launch(ctx context.Context) error {
	startCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)() // a stop or shutdown aborts the start too

	proc, err := hostnode.Start(startCtx, hostnode.Options{
		Argv:         append([]string{s.node, s.target}, s.args...),
		Brk:          true,
		ExtraFlags:   nodeFlags(s.preload, s.test),
		Dir:          s.cwd,
		Env:          targetEnv(s.id, s.followAddr, s.followToken, s.eng.opts.FollowWait),
		Stdin:        nil, // closed (/dev/null): a trace is not interactive
		Stdout:       s.stdout,
		Stderr:       s.stderr,
		ReadyTimeout: s.eng.opts.ReadyTimeout,
	})
	if err != nil {
		exit := -1
		var se *hostnode.StartError
		if errors.As(err, &se) && se.ExitCode >= 0 && se.PID != 0 {
			exit = se.ExitCode
		}
		s.finishOutput()
		s.finish(exit, err)
		return fmt.Errorf("%w: %w", ErrStart, err)
	}
	s.setProcess(proc)
	conn, err := hostnode.Dial(startCtx, proc.InspectorURL())
	if err != nil {
		proc.Kill()
		s.finishOutput()
		s.finish(-1, err)
		return fmt.Errorf("%w: %w", ErrStart, err)
	}
	c := &control{s: s, conn: conn, proc: proc, m: newMapper(s.eng.root, s.preload),
		responses: make(chan cdpResponse, responseQueue),
		pauses:    make(chan struct{}, 1), discards: make(chan struct{}, 1), ended: make(chan struct{}, 1),
		readDone: make(chan struct{}), nextID: cmdNext}
	c.threads = hostnode.NewThreads(func(msg string) error {
		ctx, cancel := context.WithTimeout(s.ctx, writeTimeout)
		defer cancel()
		return conn.Write(ctx, websocket.MessageText, []byte(msg))
	}, cmdThreadForward, c.readDone)
	if !s.eng.track(2) { // the engine shut down while node was starting
		proc.Kill()
		_ = conn.CloseNow()
		s.finishOutput()
		s.finish(proc.ExitCode(), ErrClosed)
		return fmt.Errorf("%w: %w", ErrStart, ErrClosed)
	}
	attached := make(chan error, 1)
	go c.readLoop()
	go c.controlLoop(startCtx, attached)
	if err := <-attached; err != nil {
		return fmt.Errorf("%w: %w", ErrStart, err)
	}
	return nil
}

// targetEnv is the worker's environment plus the session id and, when
// the engine listens for children (addr != ""), the follow variables.
func targetEnv(id, addr, token string, wait time.Duration) []string {
	env := make([]string, 0, len(os.Environ())+4)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case SessionEnv, followEnv, followTokenEnv, followWaitEnv:
		default:
			env = append(env, kv)
		}
	}
	env = append(env, SessionEnv+"="+id)
	if addr != "" {
		env = append(env, followEnv+"="+addr, followTokenEnv+"="+token,
			followWaitEnv+"="+strconv.FormatInt(wait.Milliseconds(), 10))
	}
	return env
}

// control is one attached session's connection to Node's inspector.
type control struct {
	s    *session          // Static after construction.
	conn *websocket.Conn   // Static after construction; written by controlLoop, and by threads (coder/websocket serialises writers).
	proc *hostnode.Process // Static after construction.
	m    *mapper           // Owned by readLoop.
	// threads releases the target's worker threads, which inherit
	// --inspect-brk and would wait forever. Static after construction;
	// Event called by readLoop only.
	threads *hostnode.Threads

	responses chan cdpResponse // readLoop → controlLoop
	pauses    chan struct{}    // readLoop → controlLoop, coalesced: resume
	ended     chan struct{}    // readLoop → controlLoop, once: the main context is gone
	discards  chan struct{}    // readLoop → controlLoop, coalesced: discard console entries
	readDone  chan struct{}    // closed when readLoop ended
	consoles  int              // Owned by readLoop.
	reads     atomic.Int64     // messages read so far (written by readLoop, read by drain)
	nextID    int64            // Owned by controlLoop.
}

// readLoop decodes every inspector message. It stores events directly and
// hands answers and pauses to controlLoop without ever blocking on it.
func (c *control) readLoop() {
	defer c.s.eng.wg.Done()
	defer close(c.readDone)
	for {
		_, msg, err := c.conn.Read(context.Background()) // ends when controlLoop closes the socket
		if err != nil {
			return
		}
		c.reads.Add(1)
		ev, resp, n := decodeMessage(c.m, msg)
		switch {
		case resp != nil:
			select {
			case c.responses <- *resp:
			default:
			}
		case n == noticePaused:
			signal(c.pauses)
		case n == noticeMainGone:
			signal(c.ended)
		case n == noticeThread:
			var tev hostnode.NodeWorkerEvent
			if stdjson.Unmarshal(msg, &tev) == nil {
				c.threads.Event(&tev)
			}
		}
		switch {
		case ev != nil && ev.child != nil:
			c.s.childReport(0, *ev.child)
		case ev != nil:
			c.s.add(*ev)
		}
		if n == noticeConsole {
			if c.consoles++; c.consoles%discardEvery == 0 {
				signal(c.discards)
			}
		}
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// controlLoop owns the session from the attach to the end: it is the only
// writer to the socket and the only goroutine that finishes the session.
func (c *control) controlLoop(attachCtx context.Context, attached chan<- error) {
	defer c.s.eng.wg.Done()
	if err := c.attach(attachCtx); err != nil {
		c.proc.Kill()
		c.closeSocket()
		c.s.finishOutput()
		c.s.finish(c.proc.ExitCode(), fmt.Errorf("attach to node's inspector: %w", err))
		attached <- err
		return
	}
	c.s.mu.Lock()
	c.s.setStatusLocked(StatusRunning)
	c.s.mu.Unlock()
	attached <- nil
	c.supervise()
	c.s.closeFollowers()
	c.closeSocket()
	c.s.finishOutput()
	c.s.finish(c.proc.ExitCode(), nil)
}

// attach enables the two domains and only then releases the target, so no
// script, console call or exception can happen before the engine listens.
func (c *control) attach(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, attachTimeout)
	defer cancel()
	steps := []struct {
		id     int64
		method string
	}{{cmdRuntimeEnable, "Runtime.enable"}, {cmdDebuggerEnable, "Debugger.enable"}, {cmdRunIfWaiting, "Runtime.runIfWaitingForDebugger"}}
	// NodeWorker first, so a thread the script starts at once is released.
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(hostnode.ThreadsEnable(cmdNodeWorkerEnable))); err != nil {
		return fmt.Errorf("send NodeWorker.enable: %w", err)
	}
	for _, st := range steps {
		if err := c.send(ctx, st.id, st.method); err != nil {
			return err
		}
	}
	pending := len(steps)
	for pending > 0 {
		select {
		case r := <-c.responses:
			if r.id > cmdRunIfWaiting {
				continue
			}
			if r.err != "" {
				return fmt.Errorf("command %d failed: %s", r.id, r.err)
			}
			pending--
		case <-c.readDone:
			return errors.New("the inspector closed the connection during the attach")
		case <-c.proc.Done():
			return fmt.Errorf("node exited during the attach (exit code %d)", c.proc.ExitCode())
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// supervise runs until the process is gone.
//
// Node 20 sometimes ignores the first Runtime.runIfWaitingForDebugger when it
// arrives right after the inspector URL was printed: every command is
// answered, yet the script never starts (measured with a bare ws client too:
// 1 to 3 runs in 40 with six traces in parallel). With --inspect-brk the
// script's start always ends in a "Break on start" pause, so until the first
// Debugger.paused the command is re-sent with a growing delay; when the
// target is already running it is a no-op.
//
// The end of the script is learned from the protocol: Node destroys the
// main context (Runtime.executionContextDestroyed) and then waits for the
// engine to disconnect. Node also prints "Waiting for the debugger to
// disconnect..." on stderr, but the target can print that text too, so the
// engine never reacts to stderr after the start.
func (c *control) supervise() {
	ended := c.ended
	readDone := c.readDone
	retry := releaseRetryFirst
	release := time.NewTimer(retry)
	defer release.Stop()
	releaseC := release.C
	for {
		select {
		case <-c.proc.Done():
			return
		case <-c.s.ctx.Done():
			c.proc.Kill() // returns after Done; the next round returns
		case <-ended:
			ended, releaseC = nil, nil
			c.drain()
			c.closeSocket() // Node exits once no session is attached
		case <-releaseC:
			c.command("Runtime.runIfWaitingForDebugger")
			retry = min(2*retry, releaseRetryMax)
			release.Reset(retry)
		case <-c.pauses:
			// The first pause is --inspect-brk's; a `debugger` statement
			// would pause again: a trace never leaves the target stopped.
			releaseC = nil
			c.command("Debugger.resume")
		case <-c.discards:
			c.command("Runtime.discardConsoleEntries")
		case <-c.responses:
		case <-readDone:
			readDone, releaseC = nil, nil // the session ended; the process may still run
		}
	}
}

// drain makes sure every event Node sent before it finished was read:
// answers come in order after earlier events on the same session, so once
// the probe's answer is in, nothing is left in flight.
func (c *control) drain() {
	id := c.command("Runtime.getIsolateId")
	timer := time.NewTimer(drainIdle)
	defer timer.Stop()
	seen := c.reads.Load()
	for {
		select {
		case r := <-c.responses:
			if r.id == id {
				return
			}
		case <-c.readDone:
			return
		case <-c.proc.Done():
			return
		case <-c.s.ctx.Done():
			return
		case <-timer.C:
			now := c.reads.Load()
			if now == seen {
				return // nothing arrived for drainIdle: give up on the probe
			}
			seen = now
			timer.Reset(drainIdle)
		}
	}
}

// command sends method with a fresh id; a failed write is ignored (the
// read side notices a broken socket).
func (c *control) command(method string) int64 {
	id := c.nextID
	c.nextID++
	ctx, cancel := context.WithTimeout(c.s.ctx, writeTimeout)
	defer cancel()
	_ = c.send(ctx, id, method)
	return id
}

func (c *control) send(ctx context.Context, id int64, method string) error {
	msg := `{"id":` + strconv.FormatInt(id, 10) + `,"method":"` + method + `","params":{}}`
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		return fmt.Errorf("send %s: %w", method, err)
	}
	return nil
}

// closeSocket lets readLoop finish what Node already sent (bounded), then
// closes the socket and waits for readLoop to end.
func (c *control) closeSocket() {
	select {
	case <-c.readDone:
	case <-c.proc.Done():
		timer := time.NewTimer(readGrace)
		select {
		case <-c.readDone:
		case <-timer.C:
		}
		timer.Stop()
	default:
	}
	_ = c.conn.CloseNow()
	<-c.readDone
}

// finishOutput emits the partial last lines; call it once the child's
// output copiers ended (after Done) or when there was no child.
func (s *session) finishOutput() {
	s.stdout.flush()
	s.stderr.flush()
}
