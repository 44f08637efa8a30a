package trace

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/inspector-worker/inspector-worker/hostnode"
)

// stderrTailChars bounds the stderr kept for the exit-failure evidence.
const stderrTailChars = 4000

// eventRing keeps the newest max events. When it is full the OLDEST event
// is dropped and counted: a failure trace is about how the run ended, so the
// exception, the exit and the events right before them must survive a flood
// that happened earlier. Seq numbers keep counting, so a reader sees exactly
// which prefix is gone (Session.DroppedEvents, the first stored Seq).
type eventRing struct {
	buf     []Event
	start   int // index of the oldest event once the ring is full
	max     int
	seq     int64
	dropped int64
}

func (r *eventRing) add(ev Event) Event {
	r.seq++
	ev.Seq = r.seq
	if len(r.buf) < r.max {
		r.buf = append(r.buf, ev)
		return ev
	}
	r.buf[r.start] = ev
	r.start = (r.start + 1) % r.max
	r.dropped++
	return ev
}

// snapshot returns deep copies, oldest first.
func (r *eventRing) snapshot() []Event {
	out := make([]Event, 0, len(r.buf))
	for i := range r.buf {
		out = append(out, r.buf[(r.start+i)%len(r.buf)].clone())
	}
	return out
}

// clone copies everything an Event points to, so no caller ever shares
// memory with the live session.
func (e Event) clone() Event {
	e.Location = clonePtr(e.Location)
	e.Generated = clonePtr(e.Generated)
	e.ExitCode = clonePtr(e.ExitCode)
	e.Values = slices.Clone(e.Values)
	e.CallStack = slices.Clone(e.CallStack)
	for i := range e.CallStack {
		e.CallStack[i].Generated = clonePtr(e.CallStack[i].Generated)
	}
	return e
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// session is one traced run.
//
// Goroutines (control.go): controlLoop, the only writer to the inspector
// socket, which owns the lifecycle after the spawn; readLoop, which decodes
// inspector messages; and, inside hostnode, one copier each for stdout and
// stderr that call the outputWriters.
type session struct {
	id      string   // Static after construction.
	eng     *Engine  // Static after construction.
	target  string   // Static after construction: resolved real path.
	args    []string // Static after construction.
	cwd     string   // Static after construction: resolved real path.
	node    string   // Static after construction.
	preload string   // Static after construction: the engine's preload file.
	test    bool     // Static after construction: run as a node:test file.
	// followAddr and followToken are what the session's children register
	// with (follow.go); "" when the engine does not listen for them.
	followAddr  string             // Static after construction.
	followToken string             // Static after construction: secret, never logged or reported.
	startedAt   time.Time          // Static after construction.
	ctx         context.Context    // Static; canceled by stop, by the engine's shutdown and at the end.
	cancel      context.CancelFunc // Static after construction.
	done        chan struct{}      // closed by finish, once
	stdout      *outputWriter      // Static after construction.
	stderr      *outputWriter      // Static after construction.

	mu              sync.Mutex        // Lock order: see docs/locks.md.
	status          string            // Guarded by mu; changed only by setStatusLocked.
	stopReason      string            // Guarded by mu; set by stop, makes the final status "stopped".
	errText         string            // Guarded by mu; why the start or attach failed.
	proc            *hostnode.Process // Guarded by mu; set once after the spawn.
	pid             int               // Guarded by mu.
	nodeArgs        []string          // Guarded by mu.
	exitCode        *int              // Guarded by mu.
	endedAt         time.Time         // Guarded by mu.
	ring            eventRing         // Guarded by mu.
	exceptions      int               // Guarded by mu.
	stderrTail      []byte            // Guarded by mu; up to 2*stderrTailChars, trimmed on read.
	children        []Child           // Guarded by mu; at most maxChildren.
	childrenDropped int               // Guarded by mu.
	testFailures    int               // Guarded by mu: failed node:test tests reported.
	following       int               // Guarded by mu: children attached or attaching (<= Options.MaxFollowed).
	followers       []*follower       // Guarded by mu: the children's running sessions.
	followersClosed bool              // Guarded by mu: closeFollowers ran; a late follower stops at once.
	stderrID        string            // Guarded by mu: the program's fd 2 as the preload reported it (device:inode).
}

func newSession(eng *Engine, id, target, cwd, node, preload string, test bool, args []string, followAddr string) *session {
	ctx, cancel := context.WithCancel(eng.ctx)
	s := &session{
		id: id, eng: eng, target: target, args: slices.Clone(args), cwd: cwd, node: node, preload: preload, test: test,
		followAddr: followAddr, followToken: newFollowToken(),
		startedAt: time.Now(), ctx: ctx, cancel: cancel, done: make(chan struct{}),
		status:   StatusStarting,
		ring:     eventRing{max: eng.opts.MaxEvents},
		nodeArgs: append([]string{node, "--inspect-brk=127.0.0.1:0"}, append(nodeFlags(preload, test), append([]string{target}, args...)...)...),
	}
	s.stdout = &outputWriter{s: s, stream: "stdout"}
	s.stderr = &outputWriter{s: s, stream: "stderr"}
	return s
}

// nodeFlags are the flags after the inspect flag: source-mapped stack text,
// and the preload (preload.go) unless there is none (unit tests). A test
// file also gets the preload as a second node:test reporter; Node's TAP
// reporter is named explicitly because naming any reporter replaces the
// default one (TAP, as the target's stdout is a pipe).
func nodeFlags(preload string, test bool) []string {
	flags := []string{"--enable-source-maps"}
	if preload != "" {
		flags = append(flags, "--require", preload)
		if test {
			flags = append(flags, "--test-reporter=tap", "--test-reporter-destination=stdout",
				"--test-reporter="+preload, "--test-reporter-destination=stdout")
		}
	}
	return flags
}

// setStatusLocked is the one place a status changes. Terminal statuses are
// final, and a session the user stopped ends as "stopped" whatever the exit
// looked like (the exit event may well arrive after the stop).
func (s *session) setStatusLocked(to string) {
	if s.finishedLocked() {
		return
	}
	if s.stopReason != "" && (to == StatusExited || to == StatusFailed) {
		to = StatusStopped
	}
	s.status = to
}

func (s *session) finishedLocked() bool {
	return s.status == StatusExited || s.status == StatusFailed || s.status == StatusStopped
}

func (s *session) finished() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// add stores one event and publishes it. The stream is fed under the same
// lock so that subscribers see events in Seq order; publishing never blocks.
func (s *session) add(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLocked(ev)
}

func (s *session) addLocked(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	ev = s.ring.add(ev)
	switch ev.Kind {
	case KindException:
		s.exceptions++
	case KindTest:
		s.testFailures++
	}
	s.eng.hub.publish(s.id, ev)
}

// addOutput stores one line of the target's output.
func (s *session) addOutput(stream, line string, cut bool) {
	text, capped := capText(line, maxLineChars)
	s.mu.Lock()
	defer s.mu.Unlock()
	if stream == "stderr" && !isInternalStackLine(text) { // the tail explains failures: user frames only
		s.stderrTail = append(append(s.stderrTail, text...), '\n')
		if len(s.stderrTail) > 2*stderrTailChars {
			s.stderrTail = append(s.stderrTail[:0], s.stderrTail[len(s.stderrTail)-stderrTailChars:]...)
		}
	}
	s.addLocked(Event{Kind: KindOutput, Subtype: stream, Detail: text, Truncated: cut || capped})
}

func (s *session) tailLocked() string {
	t := s.stderrTail
	if len(t) > stderrTailChars {
		t = t[len(t)-stderrTailChars:]
	}
	for len(t) > 0 && !utf8.RuneStart(t[0]) {
		t = t[1:]
	}
	return string(t)
}

// setProcess records the spawned child.
func (s *session) setProcess(p *hostnode.Process) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.proc = p
	s.pid = p.PID()
	s.nodeArgs = p.NodeArgs()
}

// stop asks the session to end. The process group is SIGKILLed right here
// when there is one; otherwise the start in progress sees the canceled
// context and cleans up. Either way the control loop finishes the session.
func (s *session) stop(reason string) {
	s.mu.Lock()
	if s.stopReason == "" && !s.finishedLocked() {
		s.stopReason = reason
	}
	proc := s.proc
	s.mu.Unlock()
	s.cancel()
	if proc != nil {
		proc.Kill()
	}
}

// finish records the end. exitCode < 0 means there was no process to wait
// for; startErr is set when the target never ran.
func (s *session) finish(exitCode int, startErr error) {
	s.mu.Lock()
	s.endedAt = time.Now()
	switch {
	case startErr != nil:
		s.errText, _ = capText(startErr.Error(), stderrTailChars)
		s.setStatusLocked(StatusFailed)
	default:
		s.setStatusLocked(StatusExited)
	}
	if exitCode >= 0 {
		code := exitCode
		s.exitCode = &code
		s.addLocked(Event{Kind: KindExit, Detail: s.exitDetailLocked(code), ExitCode: &code})
	}
	s.mu.Unlock()
	s.cancel()
	close(s.done)
}

func (s *session) exitDetailLocked(code int) string {
	switch {
	case s.stopReason != "":
		return "stopped (" + s.stopReason + "); exit code " + strconv.Itoa(code)
	case code > 128:
		return "killed by signal " + strconv.Itoa(code-128) + " (exit code " + strconv.Itoa(code) + ")"
	}
	return "exited with code " + strconv.Itoa(code)
}

// summary copies the session's current state.
func (s *session) summary() Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.summaryLocked()
}

func (s *session) summaryLocked() Session {
	out := Session{
		ID: s.id, Status: s.status, Target: s.target, Args: slices.Clone(s.args), Cwd: s.cwd,
		Node: s.node, NodeArgs: slices.Clone(s.nodeArgs), PID: s.pid, StartedAt: s.startedAt,
		ExitCode: clonePtr(s.exitCode), Error: s.errText, StopReason: s.stopReason,
		Events: len(s.ring.buf), DroppedEvents: s.ring.dropped, Truncated: s.ring.dropped > 0,
		ExceptionCount: s.exceptions, ChildrenDropped: s.childrenDropped,
	}
	for _, c := range s.children {
		c.Command = slices.Clone(c.Command)
		c.ExitCode = clonePtr(c.ExitCode)
		out.Children = append(out.Children, c)
	}
	if out.Args == nil {
		out.Args = []string{}
	}
	if !s.endedAt.IsZero() {
		t := s.endedAt
		out.EndedAt = &t
	}
	out.HasFailure = s.exceptions > 0 || s.testFailures > 0 || s.status == StatusFailed ||
		(s.exitCode != nil && *s.exitCode != 0 && s.stopReason == "")
	return out
}

// detail copies the session and its events.
func (s *session) detail() SessionDetail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SessionDetail{
		SchemaVersion: SchemaVersion, Session: s.summaryLocked(),
		Events: s.ring.snapshot(), StderrTail: s.tailLocked(),
	}
}
