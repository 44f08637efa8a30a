package trace

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/inspector-worker/inspector-worker/hostnode"
)

// The follow variables the engine puts into the traced program's
// environment. The preload removes the address, the token and the wait
// from process.env before the program runs, and gives them to each child
// through the child's environment only (preload.cjs).
const (
	followEnv      = "INSPECTOR_WORKER_TRACE_FOLLOW"         // host:port of the registration listener
	followTokenEnv = "INSPECTOR_WORKER_TRACE_FOLLOW_TOKEN"   // the session's follow token
	followWaitEnv  = "INSPECTOR_WORKER_TRACE_FOLLOW_WAIT_MS" // how long a child waits for the engine
)

const (
	// DefaultMaxFollowed bounds the children followed AT ONCE per session.
	// Each costs an inspector socket, two goroutines and a share of the
	// session's event ring; 16 covers cluster on a 16-core machine and the
	// usual fork pools, whose workers are mostly alike. Past it a child is
	// listed (followed: false, with a note) and runs free; a slot frees
	// when a followed child ends.
	DefaultMaxFollowed = 16
	// DefaultFollowWait bounds how long a child waits, before its first
	// line, for the engine to attach. The engine answers in milliseconds;
	// only a wedged engine takes longer, and a gone one refuses at once.
	DefaultFollowWait = 10 * time.Second
	// followAttachTimeout bounds the engine's side of one registration:
	// dial the child's inspector and have Runtime.enable and
	// Debugger.enable answered.
	followAttachTimeout = 10 * time.Second
	// maxFollowBody bounds a registration (pid, url and up to 64 argv
	// entries the preload sends, each already capped by the OS).
	maxFollowBody = 64 << 10
	// followReadHeaderTimeout bounds a registration's headers: a local
	// process that connects and sends nothing must not hold a goroutine.
	followReadHeaderTimeout = 5 * time.Second
)

// followRequest is the body of a child's POST /follow.
type followRequest struct {
	Session string   `json:"session"`
	PID     int      `json:"pid"`
	PPID    int      `json:"ppid"`
	URL     string   `json:"url"`
	Argv    []string `json:"argv"`
	Stderr  string   `json:"stderr"` // the child's fd 2 as device:inode, "" unknown

	sharesStderr bool // the child's fd 2 is the program's stderr pipe
}

// newFollowToken draws a session's follow token: 32 random bytes, compared
// in constant time, never logged, never part of a report.
func newFollowToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// startFollow opens the engine's registration listener (once, on the first
// Start): loopback only, a kernel-chosen port. It is the engine's own, not
// the worker's endpoint, because `inspector-worker trace` has no endpoint.
func (e *Engine) startFollow() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("trace: cannot listen for child registrations: %w", err)
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(e.handleFollow),
		ReadHeaderTimeout: followReadHeaderTimeout,
		MaxHeaderBytes:    8 << 10,
		// A local process writing garbage must not reach the worker's
		// own stderr (the trace command's report goes there).
		ErrorLog: log.New(io.Discard, "", 0),
	}
	e.mu.Lock()
	closed := e.closed
	if !closed {
		e.followSrv = srv
		e.wg.Add(1)
	}
	e.mu.Unlock()
	if closed {
		ln.Close()
		return "", ErrClosed
	}
	go func() {
		defer e.wg.Done()
		_ = srv.Serve(ln) // ends with Shutdown's srv.Shutdown
	}()
	return ln.Addr().String(), nil
}

// handleFollow is a child's registration: the session's token, then the
// child's inspector URL, which the engine attaches to before it answers.
// Answers: 204 followed; 401 unknown session or wrong token (one answer for
// both); 400 bad request; 409 the session is not running; 429 the cap of
// followed children; 502 the child's inspector could not be attached.
func (e *Engine) handleFollow(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/follow" {
		http.Error(w, "trace: POST /follow only", http.StatusNotFound)
		return
	}
	var req followRequest
	body := http.MaxBytesReader(w, r.Body, maxFollowBody)
	if err := json.UnmarshalRead(body, &req, json.RejectUnknownMembers(true)); err != nil {
		http.Error(w, "trace: bad registration", http.StatusBadRequest)
		return
	}
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s, err := e.lookup(req.Session)
	if err != nil || !s.tokenMatches(token) {
		http.Error(w, "trace: not a child of a traced program (wrong session or token)", http.StatusUnauthorized)
		return
	}
	if _, _, _, err := hostnode.ParseInspectorAddr(req.URL); err != nil || req.PID <= 0 || !strings.HasPrefix(req.URL, "ws://") {
		http.Error(w, "trace: bad registration: pid and a ws:// loopback inspector URL are required", http.StatusBadRequest)
		return
	}
	status, msg := s.follow(r.Context(), req)
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	http.Error(w, msg, status)
}

// followOff says why the engine follows no children.
func (e *Engine) followOff() string {
	if e.opts.NoChildren {
		return "following children is off (--no-children)"
	}
	if e.followErr != nil {
		return e.followErr.Error()
	}
	return "the engine does not listen for children"
}

// tokenMatches compares in constant time; an empty token never matches.
func (s *session) tokenMatches(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.followToken)) == 1
}

// follow records a registered child and attaches to it within the cap.
func (s *session) follow(ctx context.Context, req followRequest) (int, string) {
	s.mu.Lock()
	c := s.childLocked(req.PID, req.PPID, req.Argv)
	switch {
	case s.status != StatusRunning:
		if c != nil && !c.Followed {
			c.Note = "not followed: it registered after the trace had ended"
		}
		s.mu.Unlock()
		return http.StatusConflict, "trace: the session is not running"
	case c == nil: // past the listing cap: not even listed, so not followed
		s.mu.Unlock()
		return http.StatusTooManyRequests, "trace: too many children"
	case s.following >= s.eng.opts.MaxFollowed:
		c.Note = "not followed: " + strconv.Itoa(s.eng.opts.MaxFollowed) + " children were followed at once (the cap); it ran free"
		s.mu.Unlock()
		return http.StatusTooManyRequests, "trace: the cap of followed children is reached"
	}
	s.following++
	c.Note = "not followed: it registered, but the attach did not complete"
	sharesStderr := req.Stderr != "" && req.Stderr == s.stderrID
	s.mu.Unlock()
	undo := func() {}
	if sharesStderr {
		req.sharesStderr = true
		// Node prints "Debugger attached." on the child's stderr, which is
		// the program's pipe: that one line is Node's, not output.
		undo = s.stderr.expectAttached()
	}
	if err := s.attachFollower(ctx, req, undo); err != nil {
		return http.StatusBadGateway, "trace: cannot attach to the child's inspector"
	}
	return http.StatusNoContent, ""
}

// attachFollower dials the child's inspector, enables the two domains and
// starts the child's loops. It returns once the child may run. undoAttached
// withdraws the expected "Debugger attached." when the dial failed (Node
// printed nothing).
func (s *session) attachFollower(ctx context.Context, req followRequest, undoAttached func()) error {
	ctx, cancel := context.WithTimeout(ctx, followAttachTimeout)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	conn, err := hostnode.Dial(ctx, req.URL)
	if err != nil {
		undoAttached()
		s.releaseFollow(req.PID, err)
		return err
	}
	f := newFollower(s, req.PID, conn)
	f.sharesStderr = req.sharesStderr
	if !s.eng.track(2) {
		_ = conn.CloseNow()
		s.releaseFollow(req.PID, ErrClosed)
		return ErrClosed
	}
	s.mu.Lock()
	late := s.followersClosed // the session ended while this child registered
	if !late {
		s.followers = append(s.followers, f)
	}
	s.mu.Unlock()
	attached := make(chan error, 1)
	go f.readLoop()
	go f.controlLoop(ctx, attached)
	if late {
		f.stop()
	}
	return <-attached
}

// closeFollowers ends every child's session at the session's end: each
// gets readGrace to deliver what its child sent (the child is usually dead
// by now: it was in the program's process group), then its socket closes.
// finish runs after this, so the final snapshot holds every child event.
func (s *session) closeFollowers() {
	s.mu.Lock()
	followers := s.followers
	s.followers, s.followersClosed = nil, true
	s.mu.Unlock()
	grace, cancel := context.WithTimeout(context.Background(), readGrace)
	defer cancel()
	for _, f := range followers {
		select {
		case <-f.done:
		case <-grace.Done():
		}
		f.stop()
		<-f.done
	}
}

// errFollowRefused is returned by a follower's attach when the child's
// inspector refused a command.
var errFollowRefused = errors.New("the child's inspector refused a command")
