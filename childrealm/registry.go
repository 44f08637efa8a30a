// Package childrealm follows the Node child processes the host starts
// (fork, cluster, spawn of node): each one's preload opens its own inspector
// on a random loopback port and registers it with the worker on POST /child,
// authenticated with the run's child token. The Registry attaches a watcher
// session to each (hostnode.AttachHost: the same watcher as the host's, so
// a child whose script finished is not left waiting for its sessions) and
// forgets the child when that session ends. docs/agent-note.md "Child
// processes" has the decisions.
package childrealm

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/hostnode"
)

// DefaultLimit is how many child realms one run follows at once. A child
// costs the worker a watcher session (one goroutine, one socket) and each
// window a Node session to it; 32 covers a cluster per core on large
// machines and the usual test-runner fan-out, and keeps a fork bomb from
// turning into thousands of inspector sessions. Past it a child is refused
// with LimitError and runs unobserved (its preload prints the refusal).
const DefaultLimit = 32

// attachTimeout bounds attaching to a registered child's inspector.
const attachTimeout = 5 * time.Second

// ExitBinding is the Runtime binding the watcher adds to each child; the
// preload calls it at the child's 'exit' with the exit code
// (client/js/preload.in.cjs registerChild), so the windows learn how the
// child ended. The worker is not the child's parent and cannot wait for it.
const ExitBinding = "__inspectorWorkerChildExit"

// endReportWait bounds how long EndReason waits for the watcher to see the
// child's end after a window's own session to it closed: the exit report
// arrives on the watcher, whose socket Node closes in the same instant.
const endReportWait = 2 * time.Second

// Child is one followed child process.
type Child struct {
	PID  int
	Argv []string
	Host *hostnode.Host // its watcher; Done closes when the child is gone or finished

	mu       sync.Mutex // Leaf: see docs/locks.md.
	holds    int        // Guarded by mu: who keeps a waiting child from running (its registration, windows).
	released bool       // Guarded by mu: the child was told to run (or never waited).
}

// Hold keeps a child that waits at its start (it registered while some
// window asked for that, Registration.Waiting) from running until release
// is called; the child runs once every hold is released. ok is false when
// the child is not waiting (it never did, or was released): it runs
// already. release may be called more than once.
func (c *Child) Hold() (release func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return func() {}, false
	}
	c.holds++
	var once sync.Once
	return func() { once.Do(c.unhold) }, true
}

func (c *Child) unhold() {
	c.mu.Lock()
	c.holds--
	run := c.holds == 0 && !c.released
	if run {
		c.released = true
	}
	c.mu.Unlock()
	if run {
		c.Host.Release() // Runtime.runIfWaitingForDebugger on the watcher, repeated
	}
}

// Key is the child's pid, as text: unique among the run's children.
func (c *Child) Key() string { return strconv.Itoa(c.PID) }

// OpenSession opens a new inspector session to the child for one window.
func (c *Child) OpenSession(ctx context.Context) (*websocket.Conn, error) {
	return c.Host.OpenSession(ctx)
}

// Done is closed when the child is gone or its script finished.
func (c *Child) Done() <-chan struct{} { return c.Host.Done() }

// EndReason says how the child ended, for its windows ("exited with code
// 0"), and whether that was a clean exit; it waits up to endReportWait for
// the watcher to see the end.
func (c *Child) EndReason() (how string, clean bool) {
	select {
	case <-c.Host.Done():
	case <-time.After(endReportWait):
		return "closed its inspector", false
	}
	how = endReason(c.Host)
	return how, c.Host.ExitReport() == "0"
}

func endReason(h *hostnode.Host) string {
	if code := h.ExitReport(); code != "" {
		return "exited with code " + code
	}
	select {
	case <-h.ScriptFinished():
		return "finished its script"
	default:
	}
	return "ended without saying how (killed by a signal, or it closed its inspector)"
}

// Title is how a window names the child: its command line and pid.
func (c *Child) Title() string {
	return strings.Join(c.Argv, " ") + " (pid " + strconv.Itoa(c.PID) + ")"
}

// Options configures a Registry.
type Options struct {
	// Limit is the most children followed at once; 0 means DefaultLimit.
	Limit int
	// Logf, when set, says which child came and went and why.
	Logf func(format string, args ...any)
	// OnChange, when set, is called (never under the registry's lock) after
	// a child was added or removed.
	OnChange func()
	// OnAdd, when set, is called (never under the registry's lock) with
	// each child before its registration is answered; a waiting child
	// runs only after it returned, so every window that is to hold it
	// (Child.Hold) takes its hold in OnAdd.
	OnAdd func(*Child)
	// WaitFile, when set, exists while some window wants children to wait
	// at their start (SetWaiters): a child's preload looks for it before
	// its first line of code, synchronously. With no window no child waits.
	WaitFile string
	// WatchStderr, when set, is called with a child's inspector URL before
	// the worker opens any session to it, and the function it returns once
	// the child ended: the children share the host's stderr, where Node
	// prints "Debugger attached." for each session (hostnode.BannerFilter
	// WatchAttaches drops exactly those lines).
	WatchStderr func(url string) (stop func())
}

// Registry is the run's followed children, by pid.
type Registry struct {
	opts Options // Static after construction.

	mu       sync.Mutex     // Leaf: see docs/locks.md.
	byPID    map[int]*Child // Guarded by mu.
	reserved int            // Guarded by mu: registrations attaching now (they count against the limit).
	closed   bool           // Guarded by mu: Close ran; nothing more is attached.
	changed  chan struct{}  // Guarded by mu: closed (and replaced) at the next change.
	waiters  int            // Guarded by mu: windows that want children to wait at start (Options.WaitFile).
}

// NewRegistry returns an empty registry.
func NewRegistry(o Options) *Registry {
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	return &Registry{opts: o, byPID: make(map[int]*Child), changed: make(chan struct{})}
}

// LimitError refuses a child past the registry's limit.
type LimitError struct{ Limit int }

func (e *LimitError) Error() string {
	return fmt.Sprintf("already following %d child processes (the limit); this one runs unobserved", e.Limit)
}

// Registration is what a child's preload posts. It describes the process
// itself, not its relation to the host: any descendant registers the same
// way, flat.
type Registration struct {
	PID  int      `json:"pid"`
	PPID int      `json:"ppid"` // its parent's pid (0 when not said)
	Argv []string `json:"argv"`
	URL  string   `json:"url"` // the child's inspector, ws://127.0.0.1:PORT/UUID
	// Waiting says the child waits for Runtime.runIfWaitingForDebugger
	// before its first line (it saw Options.WaitFile).
	Waiting bool `json:"waiting"`
}

// Register attaches to the child's inspector and follows it until it ends.
// It fails past the limit (LimitError), for a pid already followed, and when
// the URL is not a loopback Node inspector.
func (r *Registry) Register(ctx context.Context, reg Registration) error {
	if reg.PID <= 0 {
		return fmt.Errorf("a child registration needs its pid")
	}
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return fmt.Errorf("the run is ending; no child is followed now")
	case r.byPID[reg.PID] != nil:
		r.mu.Unlock()
		return fmt.Errorf("child pid %d is already followed", reg.PID)
	case len(r.byPID)+r.reserved >= r.opts.Limit:
		r.mu.Unlock()
		return &LimitError{Limit: r.opts.Limit}
	}
	r.reserved++
	r.mu.Unlock()

	stopWatch := func() {}
	if r.opts.WatchStderr != nil {
		stopWatch = r.opts.WatchStderr(reg.URL)
	}
	actx, cancel := context.WithTimeout(ctx, attachTimeout)
	host, err := hostnode.AttachHost(actx, reg.URL, hostnode.HostOptions{ExitBinding: ExitBinding}) // network I/O: outside mu
	cancel()
	r.mu.Lock()
	r.reserved--
	if err == nil && (r.closed || r.byPID[reg.PID] != nil) {
		r.mu.Unlock()
		host.Finish("not followed")
		stopWatch()
		return fmt.Errorf("child pid %d is already followed, or the run is ending", reg.PID)
	}
	if err != nil {
		r.mu.Unlock()
		stopWatch()
		return fmt.Errorf("cannot attach to child pid %d's inspector: %w", reg.PID, err)
	}
	// A waiting child is held by its registration until OnAdd returned.
	c := &Child{PID: reg.PID, Argv: append([]string(nil), reg.Argv...), Host: host, holds: 1, released: !reg.Waiting}
	r.byPID[reg.PID] = c
	r.mu.Unlock()
	r.logf("following child %s", c.Title())
	r.notify()
	if r.opts.OnAdd != nil {
		r.opts.OnAdd(c)
	}
	if reg.Waiting {
		c.unhold()
	}
	go r.follow(c, stopWatch)
	return nil
}

// SetWaiters adds delta to the windows that want children to wait at their
// start, and makes Options.WaitFile exist exactly while there are any.
// Deltas, not counts: concurrent calls cannot leave a stale state behind.
func (r *Registry) SetWaiters(delta int) {
	r.mu.Lock()
	before := r.waiters
	r.waiters = max(0, r.waiters+delta)
	var err error
	switch { // the file ops under mu: their order must be the counts' order
	case r.opts.WaitFile == "" || r.closed || (before > 0) == (r.waiters > 0):
	case r.waiters > 0:
		err = os.WriteFile(r.opts.WaitFile, nil, 0o600)
	default:
		os.Remove(r.opts.WaitFile)
	}
	r.mu.Unlock()
	if err != nil {
		r.logf("children will not wait for the windows at their start: %v", err)
	}
}

// follow forgets c once its watcher session ended.
func (r *Registry) follow(c *Child, stopWatch func()) {
	<-c.Host.Done()
	// Late "Debugger attached." lines of windows' sessions may still come;
	// Node prints nothing for this child once its inspector closed.
	time.AfterFunc(endReportWait, stopWatch)
	r.mu.Lock()
	if r.byPID[c.PID] == c {
		delete(r.byPID, c.PID)
	}
	r.mu.Unlock()
	r.logf("child pid %d ended: %s", c.PID, endReason(c.Host))
	r.notify()
}

// Children lists the followed children by pid.
func (r *Registry) Children() []*Child {
	r.mu.Lock()
	out := make([]*Child, 0, len(r.byPID))
	for _, c := range r.byPID {
		out = append(out, c)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

// Close stops following: every watcher session is closed (the children run
// on, unobserved) and later registrations are refused.
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	if r.opts.WaitFile != "" {
		os.Remove(r.opts.WaitFile)
	}
	all := make([]*Child, 0, len(r.byPID))
	for _, c := range r.byPID {
		all = append(all, c)
	}
	r.mu.Unlock()
	for _, c := range all {
		c.Host.Finish("the run ended")
	}
}

func (r *Registry) logf(format string, args ...any) {
	if r.opts.Logf != nil {
		r.opts.Logf(format, args...)
	}
}

// Changed is closed at the next addition or removal: take it before
// Children, and no change is missed.
func (r *Registry) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

func (r *Registry) notify() {
	r.mu.Lock()
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	if r.opts.OnChange != nil {
		r.opts.OnChange()
	}
}
