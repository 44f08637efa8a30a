package trace

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultMaxEvents    = 10_000
	DefaultMaxSessions  = 20
	DefaultReadyTimeout = 15 * time.Second
	// maxArgs and maxArgBytes bound a start request's argument list.
	maxArgs     = 256
	maxArgBytes = 64 << 10
	// versionTimeout bounds `node --version`.
	versionTimeout = 10 * time.Second
)

// Options configures an Engine. Zero values are the documented defaults.
type Options struct {
	Workspace    string        // root every target and cwd must resolve into; "" = current directory
	Node         string        // node executable, resolved once on PATH to an absolute path; "" = "node"
	MaxEvents    int           // events kept per session (oldest dropped beyond); 0 = 10,000
	MaxSessions  int           // sessions kept (the oldest finished one is evicted); 0 = 20
	ReadyTimeout time.Duration // wait for the inspector URL; 0 = 15 s
	// MaxFollowed bounds the children followed at once per session; 0 =
	// DefaultMaxFollowed. NoChildren turns following off: children run
	// free and are only listed, as before following existed.
	MaxFollowed int
	NoChildren  bool
	// FollowWait bounds a child's wait for the engine before its first
	// line; 0 = DefaultFollowWait.
	FollowWait time.Duration
}

// Engine runs traces. All methods are safe for concurrent use and return
// copies: nothing a caller receives aliases live session state.
//
// Goroutines: per session a readLoop and a controlLoop (control.go); per
// stream subscriber its HTTP handler (http.go). Shutdown ends them all.
type Engine struct {
	opts     Options            // Static after New, defaults filled in.
	root     string             // Static after New: real path of the workspace, "" if unusable.
	rootErr  error              // Static after New.
	nodePath string             // Static after New: absolute, "" if unusable.
	nodeErr  error              // Static after New.
	ctx      context.Context    // Static; canceled by Shutdown.
	cancel   context.CancelFunc // Static after New.
	hub      *hub               // Static after New.
	wg       sync.WaitGroup     // session goroutines; Add only through track

	preloadOnce sync.Once
	preload     string // written once by preloadOnce: the preload file, "" if it could not be written
	preloadErr  error  // written once by preloadOnce

	followOnce sync.Once
	followAddr string // written once by followOnce: the registration listener, "" without one
	followErr  error  // written once by followOnce

	versionOnce sync.Once
	version     string // written once by versionOnce
	versionErr  string // written once by versionOnce

	mu        sync.Mutex          // Lock order: see docs/locks.md.
	sessions  map[string]*session // Guarded by mu.
	order     []*session          // Guarded by mu: oldest first.
	closed    bool                // Guarded by mu.
	followSrv *http.Server        // Guarded by mu: the registration server, once started.
}

// New returns an engine. It never fails: an unusable workspace or node is
// reported by Status and refused by Start, so the worker can still serve.
func New(opts Options) *Engine {
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = DefaultMaxEvents
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = DefaultReadyTimeout
	}
	if opts.Node == "" {
		opts.Node = "node"
	}
	if opts.MaxFollowed <= 0 {
		opts.MaxFollowed = DefaultMaxFollowed
	}
	if opts.FollowWait <= 0 {
		opts.FollowWait = DefaultFollowWait
	}
	e := &Engine{opts: opts, hub: newHub(), sessions: map[string]*session{}}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.root, e.rootErr = resolveRoot(opts.Workspace)
	e.nodePath, e.nodeErr = resolveNode(opts.Node)
	return e
}

// resolveNode resolves the node executable ONCE, so every session runs the
// same binary and the path reported is the one used.
func resolveNode(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrNodeUnavailable, name, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrNodeUnavailable, name, err)
	}
	return abs, nil
}

// Workspace is the resolved workspace root ("" if it is unusable).
func (e *Engine) Workspace() string { return e.root }

// Start validates req, starts a session and returns once node runs with the
// engine attached. On ErrStart the session is kept (status "failed") and the
// returned summary names it. ctx bounds only the start.
func (e *Engine) Start(ctx context.Context, req StartRequest) (Session, error) {
	if err := validateStart(req); err != nil {
		return Session{}, err
	}
	if e.rootErr != nil {
		return Session{}, e.rootErr
	}
	target, err := containedPath(e.root, req.Target, "target", false)
	if err != nil {
		return Session{}, err
	}
	cwd := e.root
	if req.Cwd != "" {
		if cwd, err = containedPath(e.root, req.Cwd, "cwd", true); err != nil {
			return Session{}, err
		}
	}
	if e.nodeErr != nil {
		return Session{}, e.nodeErr
	}
	e.preloadOnce.Do(func() { e.preload, e.preloadErr = writePreload() })
	if e.preloadErr != nil {
		return Session{}, fmt.Errorf("%w: %w", ErrStart, e.preloadErr)
	}
	if !e.opts.NoChildren {
		// Without a listener the children are only listed; the trace
		// itself still runs.
		e.followOnce.Do(func() { e.followAddr, e.followErr = e.startFollow() })
	}
	s := newSession(e, newID(), target, cwd, e.nodePath, e.preload, req.Test, req.Args, e.followAddr)
	if err := e.register(s); err != nil {
		s.cancel()
		return Session{}, err
	}
	err = s.launch(ctx)
	return s.summary(), err
}

func validateStart(req StartRequest) error {
	if strings.TrimSpace(req.Target) == "" {
		return fmt.Errorf("%w: target is required (a script path inside the workspace)", ErrBadRequest)
	}
	if len(req.Args) > maxArgs {
		return fmt.Errorf("%w: %d args (at most %d)", ErrBadRequest, len(req.Args), maxArgs)
	}
	total := len(req.Target) + len(req.Cwd)
	for _, a := range req.Args {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("%w: an argument contains a NUL byte", ErrBadRequest)
		}
		total += len(a)
	}
	if total > maxArgBytes {
		return fmt.Errorf("%w: target, cwd and args exceed %d bytes", ErrBadRequest, maxArgBytes)
	}
	return nil
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	return "tr-" + hex.EncodeToString(b[:])
}

// register adds s, evicting the oldest finished sessions beyond the cap.
func (e *Engine) register(s *session) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	for len(e.order) >= e.opts.MaxSessions {
		i := -1
		for j, old := range e.order {
			if old.finished() {
				i = j
				break
			}
		}
		if i < 0 {
			return fmt.Errorf("%w: all %d sessions are still running; stop one first", ErrTooManySessions, len(e.order))
		}
		delete(e.sessions, e.order[i].id)
		e.order = append(e.order[:i], e.order[i+1:]...)
	}
	e.sessions[s.id] = s
	e.order = append(e.order, s)
	return nil
}

// track counts n session goroutines unless the engine is shut down. Adding
// under mu, which Shutdown takes to set closed before it waits, keeps every
// wg.Add ahead of wg.Wait.
func (e *Engine) track(n int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	e.wg.Add(n)
	return true
}

func (e *Engine) lookup(id string) (*session, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: id is required", ErrBadRequest)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.sessions[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return s, nil
}

func (e *Engine) list() []*session {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*session(nil), e.order...)
}

// Stop ends a session (killing its process group) and waits, bounded by
// ctx, until it is finished. Stopping a finished session changes nothing.
func (e *Engine) Stop(ctx context.Context, id string) (Session, error) {
	s, err := e.lookup(id)
	if err != nil {
		return Session{}, err
	}
	s.stop("stopped by the user")
	select {
	case <-s.done:
	case <-ctx.Done():
	}
	return s.summary(), nil
}

// Wait blocks until the session finished or ctx is done.
func (e *Engine) Wait(ctx context.Context, id string) (Session, error) {
	s, err := e.lookup(id)
	if err != nil {
		return Session{}, err
	}
	select {
	case <-s.done:
		return s.summary(), nil
	case <-ctx.Done():
		return s.summary(), ctx.Err()
	}
}

// Get returns a session with its stored events.
func (e *Engine) Get(id string) (SessionDetail, error) {
	s, err := e.lookup(id)
	if err != nil {
		return SessionDetail{}, err
	}
	return s.detail(), nil
}

// Evidence builds the evidence chain from a snapshot of the session.
func (e *Engine) Evidence(id string) (EvidenceReport, error) {
	s, err := e.lookup(id)
	if err != nil {
		return EvidenceReport{}, err
	}
	d := s.detail()
	return EvidenceReport{
		SchemaVersion: SchemaVersion, SessionID: id, Status: d.Session.Status,
		Evidence: buildEvidence(d), Caveat: Caveat,
	}, nil
}

// Report bundles a session, its events and its evidence from one snapshot.
func (e *Engine) Report(ctx context.Context, id string) (Report, error) {
	s, err := e.lookup(id)
	if err != nil {
		return Report{}, err
	}
	d := s.detail()
	return Report{
		SchemaVersion: SchemaVersion, Node: e.Status(ctx).Capabilities.Node,
		Session: d.Session, Events: d.Events, StderrTail: d.StderrTail,
		Evidence: buildEvidence(d), Caveat: Caveat,
	}, nil
}

// List returns every kept session, oldest first.
func (e *Engine) List() []Session {
	sessions := e.list()
	out := make([]Session, 0, len(sessions))
	for _, s := range sessions {
		out = append(out, s.summary())
	}
	return out
}

// Status reports the capabilities honestly, probing `node --version` once.
func (e *Engine) Status(ctx context.Context) Status {
	// The answer is cached, so one impatient caller must not make it
	// "unavailable" for everyone: the probe has its own bound.
	e.versionOnce.Do(func() { e.version, e.versionErr = probeVersion(context.WithoutCancel(ctx), e.nodePath, e.nodeErr) })
	st := Status{SchemaVersion: SchemaVersion, Workspace: e.root, Capabilities: Capabilities{
		Runtime:   "node",
		Available: e.nodeErr == nil && e.rootErr == nil && e.versionErr == "",
		Node:      NodeInfo{Path: e.nodePath, Version: e.version, Error: e.versionErr},
		SourceMapping: SourceMapping{Enabled: true, Flag: "--enable-source-maps",
			Note: "node rewrites Error.stack text; event positions are mapped by the engine from Source Map v3 files inside the workspace (inline or next to the script)"},
		Replay:     "timeline",
		ReplayNote: "replay steps through captured events in order; it is not time travel and cannot re-execute or inspect state between events",
		Limits: Limits{MaxEvents: e.opts.MaxEvents, MaxSessions: e.opts.MaxSessions, MaxValueChars: maxValueChars,
			MaxLineChars: maxLineChars, StderrTailChars: stderrTailChars, MaxFollowed: e.opts.MaxFollowed},
	}}
	if e.opts.NoChildren {
		st.Capabilities.Limits.MaxFollowed = 0
	}
	if e.rootErr != nil {
		st.WorkspaceError = e.rootErr.Error()
	}
	for _, s := range e.list() {
		st.Sessions++
		if !s.finished() {
			st.Active++
		}
	}
	return st
}

// probeVersion runs `node --version` with a bound on time and output.
func probeVersion(ctx context.Context, node string, nodeErr error) (version, problem string) {
	if nodeErr != nil {
		return "unavailable", nodeErr.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, node, "--version")
	cmd.Stdout = &limitedWriter{w: &out, n: 256}
	if err := cmd.Run(); err != nil {
		return "unavailable", fmt.Sprintf("%s --version: %v", node, err)
	}
	v := strings.TrimSpace(out.String())
	if !strings.HasPrefix(v, "v") {
		return "unavailable", fmt.Sprintf("%s --version printed %q", node, v)
	}
	return v, ""
}

type limitedWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Shutdown stops every session (SIGKILLing each process group and waiting
// for it to be reaped), closes every stream subscriber and waits for all
// goroutines, bounded by ctx. A session still starting is aborted by the
// canceled context.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	sessions := append([]*session(nil), e.order...)
	e.mu.Unlock()
	for _, s := range sessions {
		s.stop("the worker shut down")
	}
	e.cancel()
	e.hub.close()
	e.followOnce.Do(func() {}) // no start can open the listener any more
	e.mu.Lock()
	srv := e.followSrv
	e.mu.Unlock()
	if srv != nil {
		// Waits for the registrations in progress; each ends at once,
		// its session's context being canceled.
		if err := srv.Shutdown(ctx); err != nil {
			return fmt.Errorf("trace: shutdown: %w", err)
		}
	}
	done := make(chan struct{})
	go func() {
		e.wg.Wait()
		e.hub.wait()
		close(done)
	}()
	select {
	case <-done:
		e.removePreload()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("trace: shutdown: %w", ctx.Err())
	}
}

// removePreload deletes the preload file once no session can start (the
// engine is closed) and none runs. Children the targets left running lose
// it, which only matters to their own children.
func (e *Engine) removePreload() {
	e.preloadOnce.Do(func() {}) // no start can write it any more
	if e.preload != "" {
		os.Remove(e.preload)
	}
}
