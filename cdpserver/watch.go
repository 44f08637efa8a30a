package cdpserver

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/hostrealm"
)

// Watch mode (Options.Watch, `run --watch`): the host process is replaced
// while every DevTools window stays open. The run supervisor calls HostDown
// before it stops a host (or once one exited on its own) and HostUp once the
// next one is attached but not yet released. Each window then gets a new
// Node session with its own state replayed (hostrealm.WatchState), sees the old
// host's contexts destroyed and the new ones created, and keeps its
// breakpoint ids. See docs/agent-note.md, "Watch mode".

// replayWait bounds how long HostUp waits for Node to answer a window's
// replayed requests. Node answers them in milliseconds (the host is waiting
// for the debugger, its main thread idle); the bound is a hang detector.
const replayWait = 10 * time.Second

// rebinding is a new Node session handed to a window's hostLoop.
type rebinding struct {
	conn     *websocket.Conn
	batch    *hostnode.SessionIO // conn's write batch (relay)
	note     []byte              // a Log.entryAdded saying why the host changed, queued before its events
	answered chan struct{}       // closed once Node answered every replayed request (or never will)
}

// HostDown marks the host as gone: every window's Node session is closed
// (with a handshake, so Node exits cleanly afterwards), the requests it was
// waiting on are answered with an error naming reason, and requests from now
// on are refused with reason until HostUp. A window opening meanwhile is
// refused with 503 and reason. note, if not empty, is shown in every
// window's Console. Watch mode only.
func (s *Server) HostDown(reason, level, note string) {
	s.swapMu.Lock()
	defer s.swapMu.Unlock() // nothing below blocks: detachHost closes without waiting
	s.hostMu.Lock()
	s.hostDown = reason
	s.hostGen++
	s.hostMu.Unlock()
	s.hostScripts.Reset() // the next process reuses V8's script ids
	for _, sess := range s.openSessions() {
		sess.dropNext()
		sess.detachHost(nil, reason)
		if note != "" {
			sess.noteAfterReset(logEntry(level, note, time.Now()))
		}
	}
}

// noteAfterReset queues a Console line about the host that went away after
// the window's reset (hostLost): the reset clears the frontend's Console, so
// a line queued before it would vanish. A host that crashed is seen by the
// supervisor (its exit) and by hostLoop (its session's end) in either order.
func (sess *Session) noteAfterReset(msg []byte) {
	sess.hostMu.Lock()
	if !sess.resetDone {
		sess.lateNotes = append(sess.lateNotes, msg)
		sess.hostMu.Unlock()
		return
	}
	sess.hostMu.Unlock()
	sess.enqueue(msg)
}

// Note shows text in every window's Console as a Log.entryAdded of level
// ("info", "warning", "error").
func (s *Server) Note(level, text string) {
	for _, sess := range s.openSessions() {
		sess.enqueue(logEntry(level, text, time.Now()))
	}
}

// HostUp makes h the host: every open window gets a new Node session to it,
// with the window's recorded state replayed, and note (if not empty) in its
// Console before the new host's events. It returns once Node answered every
// replayed request (or replayWait passed), so the caller can then release a
// host started with --inspect-wait knowing the breakpoints are set. A window
// whose session cannot be opened stays without host and is told why.
func (s *Server) HostUp(ctx context.Context, h Host, note string) {
	s.swapMu.Lock()
	s.hostMu.Lock()
	s.host, s.hostDown = h, ""
	s.hostGen++
	gen := s.hostGen
	s.hostMu.Unlock()
	// Windows opening from now on dial h themselves (registerWindow).
	sessions := s.openSessions()
	s.swapMu.Unlock()
	var noteMsg []byte
	if note != "" {
		noteMsg = logEntry("info", note, time.Now())
	}
	// The dials and the wait for the replayed state run outside swapMu:
	// a window opening meanwhile is not held up by them.
	var wg sync.WaitGroup
	for _, sess := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := new(hostnode.SessionIO)
			conn, err := h.OpenSession(hostnode.WithSessionIO(ctx, batch))
			if err != nil {
				sess.enqueue(logEntry("error", "inspector-worker: cannot open a session to the restarted host: "+
					err.Error()+"; reopen DevTools", time.Now()))
				return
			}
			conn.SetReadLimit(maxHostMessageLimit)
			sess.rebind(gen, conn, batch, noteMsg)
		}()
	}
	wg.Wait()
}

// openSessions is a snapshot of the open windows, oldest first.
func (s *Server) openSessions() []*Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Session, 0, len(s.sessions))
	for sess := range s.sessions {
		if sess.scope == nil { // a page target's session has no Node session to swap
			out = append(out, sess)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// keepWindow reports whether a window outlives its Node session: in watch
// mode, unless the window itself is ending.
func (sess *Session) keepWindow() bool {
	if sess.watch == nil || sess.dtClosed.Load() || sess.retiring.Load() {
		return false
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return !sess.hostClosed
}

// detachHost takes the window's Node session away (only if it is still conn,
// or any session when conn is nil), answers the requests waiting on it with
// an error naming reason, and closes it.
func (sess *Session) detachHost(conn *websocket.Conn, reason string) {
	sess.hostMu.Lock()
	cur := sess.host
	if cur == nil || (conn != nil && cur != conn) {
		if cur == nil {
			sess.downWhy = reason
		}
		sess.hostMu.Unlock()
		return
	}
	sio := sess.hostIO
	sess.host, sess.hostIO, sess.downWhy = nil, nil, reason
	sess.settling.Add(1) // pending empties before its answers are queued
	sess.mu.Lock()
	pending := sess.pending
	if !sess.hostClosed {
		sess.pending = map[int64]string{}
	} else {
		pending = nil
	}
	sess.mu.Unlock()
	sess.hostMu.Unlock()
	sess.answerUnanswered(pending, reason)
	sess.closeThreads(reason, true)
	sess.settling.Add(-1)
	sess.poke()
	if conn != nil {
		hostnode.CloseSession(cur) // hostLost: hostLoop has read all it will
		return
	}
	// Closed once hostLoop has read what Node sent before it went down
	// (awaitHostDrained), in a goroutine: HostDown holds swapMu.
	go func() {
		sess.awaitHostDrained(sio)
		hostnode.CloseSession(cur)
	}()
}

// hostLost runs in hostLoop when conn ended and the window stays: it detaches
// conn (when the host died before HostDown said so) and tells the window
// that the host's contexts are gone.
func (sess *Session) hostLost(conn *websocket.Conn, reason string) {
	sess.detachHost(conn, reason)
	msgs, unanswered := sess.watch.HostGone()
	for _, h := range unanswered {
		h(nil) // a replay Node never answered: its waiter stops waiting
	}
	sess.srv.clients.HostRestarted(sess.page, msgs)
	sess.hostMu.Lock()
	sess.resetDone = true
	notes := sess.lateNotes
	sess.lateNotes = nil
	sess.hostMu.Unlock()
	for _, m := range notes {
		sess.enqueue(m)
	}
}

// awaitRebind waits in hostLoop for the next host's session; nil when the
// window ended first.
func (sess *Session) awaitRebind() *rebinding {
	for {
		sess.hostMu.Lock()
		next := sess.next
		sess.next = nil
		sess.hostMu.Unlock()
		if next != nil {
			return next
		}
		select {
		case <-sess.rebound:
		case <-sess.sendDone:
			return nil
		case <-sess.dtGone:
			return nil
		}
	}
}

// dropNext closes a session to a host that HostUp handed the window and
// hostLoop has not taken yet: HostDown says that host is gone (HostUp
// rebinds outside swapMu, so a swap can come between).
func (sess *Session) dropNext() {
	sess.hostMu.Lock()
	next := sess.next
	sess.next = nil
	sess.hostMu.Unlock()
	if next != nil {
		hostnode.CloseSession(next.conn)
	}
}

// hostLoopDone marks hostLoop as gone: a rebind after it closes its session.
func (sess *Session) hostLoopDone() {
	sess.hostMu.Lock()
	sess.loopDone = true
	next := sess.next
	sess.next = nil
	sess.hostMu.Unlock()
	if next != nil {
		hostnode.CloseSession(next.conn)
	}
	if sess.watch != nil {
		_, unanswered := sess.watch.HostGone()
		for _, h := range unanswered {
			h(nil)
		}
	}
}

// rebind hands the window conn, a session to the new host, and waits until
// Node answered the window's replayed state (replayInto) or replayWait
// passed or the window ended.
func (sess *Session) rebind(gen uint64, conn *websocket.Conn, batch *hostnode.SessionIO, note []byte) {
	rb := &rebinding{conn: conn, batch: batch, note: note, answered: make(chan struct{})}
	srv := sess.srv
	srv.swapMu.Lock() // a swap since conn was dialled makes conn a session to a host that is gone
	_, now, _ := srv.currentHostGen()
	sess.hostMu.Lock()
	if sess.loopDone || now != gen {
		sess.hostMu.Unlock()
		srv.swapMu.Unlock()
		hostnode.CloseSession(conn)
		return
	}
	if sess.next != nil { // a host that came and went before hostLoop took it
		hostnode.CloseSession(sess.next.conn)
	}
	sess.next = rb
	sess.hostMu.Unlock()
	srv.swapMu.Unlock()
	select {
	case sess.rebound <- struct{}{}:
	default:
	}
	t := time.NewTimer(replayWait)
	defer t.Stop()
	select {
	case <-rb.answered:
	case <-sess.dtGone:
	case <-sess.sendDone:
	case <-t.C:
		sess.srv.logf("DevTools connection %d: the new host did not answer the replayed state within %v", sess.id, replayWait)
	}
}

// replayInto runs in hostLoop, after the old session's end was handled (so
// no handler of this replay can be dropped as the old host's): it writes
// the window's recorded state to rb.conn and only then publishes rb.conn for
// the window's own requests, so Node sees the replay first. hostLoop is the
// only writer until then; answers are read by hostLoop afterwards.
func (sess *Session) replayInto(rb *rebinding) {
	threads := sess.threadReplayOnRebind() // first: see threadReplayOnRebind
	reqs := sess.watch.Replay()
	left := len(reqs)
	var mu sync.Mutex
	if left == 0 {
		close(rb.answered)
	}
	msgs := make([][]byte, len(reqs))
	for i, r := range reqs {
		var once sync.Once
		msgs[i] = sess.watch.Register(r, func(answer []byte) {
			once.Do(func() {
				if r.OnAnswer != nil && answer != nil {
					for _, ev := range r.OnAnswer(answer) {
						sess.enqueue(ev)
					}
				}
				mu.Lock()
				left--
				if left == 0 {
					close(rb.answered)
				}
				mu.Unlock()
			})
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), replayWait)
	defer cancel()
	for _, m := range append(threads, msgs...) {
		if rb.conn.Write(ctx, websocket.MessageText, m) != nil {
			break // the session is broken: hostLoop's read ends too
		}
	}
	sess.hostMu.Lock()
	sess.host, sess.hostIO, sess.downWhy, sess.resetDone = rb.conn, rb.batch, "", false
	sess.hostMu.Unlock()
}

// hostProtocol is the current host's /json/protocol document.
func (s *Server) hostProtocol(r *http.Request) ([]byte, error) {
	h, down := s.currentHost()
	if h == nil {
		return nil, errors.New("the Node host is not running: " + down)
	}
	return h.Protocol(r.Context())
}

// newWatchState is a window's record for --watch (hostrealm.WatchState), or
// nil without Options.Watch.
func newWatchState(watch bool) *hostrealm.WatchState {
	if !watch {
		return nil
	}
	return hostrealm.NewWatchState(watchTable)
}
