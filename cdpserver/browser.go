package cdpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/sync/errgroup"

	"github.com/inspector-worker/inspector-worker/internal/cdpwire"
)

// The browser endpoint (docs/agent-note.md "Browser endpoint"):
// /json/version's webSocketDebuggerUrl, /devtools/browser/<id>. Browser
// automation clients (Puppeteer, Playwright, chromedp, chrome-devtools-mcp)
// expect a browser: a connection that answers the Browser and Target
// domains itself and carries flat sessions to its targets, routed by
// sessionId. Each flat session is a Session like a window's, on a
// flatSession transport: the same dispatch, Node session, bounded queue and
// exactly-once answers.
//
// A browser connection's goroutines (joined by serve): readLoop (the
// handler's goroutine) reads the socket, answers the Browser/Target
// methods and hands every other request to its session's inbound queue;
// sendLoop is the connection's one writer; targetLoop tells the client of
// target changes and auto-attaches new targets. Each flat session runs its
// Session's three loops; its sendLoop stamps its sessionId on each message
// and pushes it onto the connection's queue, which never blocks.
//
// Overflow policy. Outgoing: one bounded queue per connection (the window
// bounds, Options.MaxQueuedMessages/Bytes); a client that stops reading is
// closed with 1008 like a window, with all its sessions (they share the
// socket, so no session could be served without the others). A session's
// own queue only holds what its sendLoop has not yet moved, so a flood in
// one session delays the others by its place in the shared queue, never by
// a blocked goroutine. Incoming: each session has its own bounded queue
// (flatInboundMax); when it is full — its Node session is not taking
// requests, e.g. the host is paused and the client keeps sending — the
// request is answered at once with an error, so readLoop never waits for
// one session and the other sessions go on.

// flatInboundMax bounds the requests read for one flat session and not yet
// taken by its readLoop. A client awaits most answers before its next
// request; 1,024 is far above any burst a client sends on attach (Puppeteer
// sends ~15), and small enough that a stalled session costs little.
const flatInboundMax = 1024

// maxBrowserConns bounds browser connections open at once. A connection
// itself costs no Node session (its flat sessions do, counted against
// MaxWindows); the bound stops a runaway client from piling up goroutines.
const maxBrowserConns = 64

// errFlatDetached ends a flat session's readLoop: the client detached it,
// or its browser connection closed.
var errFlatDetached = errors.New("cdpserver: flat session detached")

// browserEndpoint is the server's browser target: its id, its open
// connections and the providers of attachable targets.
type browserEndpoint struct {
	srv       *Server // Static after construction.
	id        string  // Static after construction: the browser target's id (/devtools/browser/<id>).
	contextID string  // Static after construction: the one browser context's id.

	providers []targetProvider // Static after construction: the combined target's first.

	mu       sync.Mutex                // A leaf. Lock order: see docs/locks.md.
	conns    map[*browserConn]struct{} // Guarded by mu.
	closing  string                    // Guarded by mu: set once the server shuts down.
	nextConn int64                     // Guarded by mu.
}

func newBrowserEndpoint(s *Server) *browserEndpoint {
	b := &browserEndpoint{srv: s, id: newTargetID(), contextID: newTargetID(), conns: map[*browserConn]struct{}{}}
	b.providers = []targetProvider{combinedTarget{s}, pageTargets{s}}
	return b
}

// webSocketURL is the browser target's URL as a client at hostport reaches it.
func (b *browserEndpoint) webSocketURL(hostport string) string {
	return "ws://" + hostport + "/devtools/browser/" + b.id
}

// allTargets lists every provider's targets, the combined target first.
func (b *browserEndpoint) allTargets() []targetInfo {
	var out []targetInfo
	for _, p := range b.providers {
		out = append(out, p.targets()...)
	}
	return out
}

// providerOf returns the provider listing targetID and its info.
func (b *browserEndpoint) providerOf(targetID string) (targetProvider, targetInfo, bool) {
	for _, p := range b.providers {
		for _, t := range p.targets() {
			if string(t.TargetID) == targetID {
				return p, t, true
			}
		}
	}
	return nil, targetInfo{}, false
}

// closeAll closes every browser connection with reason and refuses new ones.
func (b *browserEndpoint) closeAll(reason string) {
	b.mu.Lock()
	if b.closing == "" {
		b.closing = reason
	}
	conns := make([]*browserConn, 0, len(b.conns))
	for c := range b.conns {
		conns = append(conns, c)
	}
	b.mu.Unlock()
	for _, c := range conns {
		c.out.close(&closeState{websocket.StatusGoingAway, reason})
	}
}

func (b *browserEndpoint) register(c *browserConn) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing != "" {
		return b.closing
	}
	if len(b.conns) >= maxBrowserConns {
		return fmt.Sprintf("%d browser connections are already open, the limit; close one", len(b.conns))
	}
	b.nextConn++
	c.id = b.nextConn
	b.conns[c] = struct{}{}
	return ""
}

func (b *browserEndpoint) unregister(c *browserConn) {
	b.mu.Lock()
	delete(b.conns, c)
	b.mu.Unlock()
}

// handleBrowser serves /devtools/browser/<id>.
func (s *Server) handleBrowser(w http.ResponseWriter, r *http.Request) {
	b := s.browser
	if id := r.PathValue("id"); id != b.id {
		http.Error(w, "no browser target with id "+quoteShort(id)+"; see /json/version", http.StatusNotFound)
		return
	}
	if reason := originProblem(r.Header.Get("Origin")); reason != "" {
		s.logf("refused browser connection: %s", reason)
		http.Error(w, reason, http.StatusForbidden)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // originProblem checked it, with a reason the user can read
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		return
	}
	ws.SetReadLimit(maxDevToolsMessage)
	c := &browserConn{
		b: b, ws: ws,
		out:      newSendQueue(s.opts.MaxQueuedMessages, s.opts.MaxQueuedBytes),
		done:     make(chan struct{}),
		sessions: map[string]*flatSession{},
		told:     map[string]targetInfo{},
	}
	if reason := b.register(c); reason != "" {
		ws.Close(websocket.StatusTryAgainLater, truncate(reason, maxCloseReason))
		return
	}
	defer b.unregister(c)
	s.logf("browser connection %d opened (%s)", c.id, r.RemoteAddr)
	c.serve()
	s.logf("browser connection %d closed", c.id)
}

// browserConn is one client of the browser endpoint.
type browserConn struct {
	b    *browserEndpoint // Static after construction.
	id   int64            // Static after registration.
	ws   *websocket.Conn  // Static after construction. Written by sendLoop only.
	out  *sendQueue       // Static after construction: everything the client is sent.
	done chan struct{}    // closed when readLoop ends: the client is gone

	watchdog *time.Timer // Set by send's first overflow (in overflow.Do); read by serve once every sender has stopped.
	overflow sync.Once

	// targetMu serialises the target reports and auto-attaches of readLoop
	// (setDiscoverTargets, setAutoAttach) and targetLoop, so the events a
	// request owes are queued before its answer, whoever computed them. It
	// is held across an auto-attach's Node dial (bounded by
	// attachDialTimeout) and taken only by this connection's two loops;
	// taken before mu. Lock order: see docs/locks.md.
	targetMu sync.Mutex

	mu         sync.Mutex              // Lock order: see docs/locks.md.
	sessions   map[string]*flatSession // Guarded by mu: by sessionId; "" is the session-less one.
	ended      bool                    // Guarded by mu: readLoop ended, no new sessions.
	discover   bool                    // Guarded by mu: Target.setDiscoverTargets is on.
	discoverF  targetFilter            // Guarded by mu.
	told       map[string]targetInfo   // Guarded by mu: targets the client was told of (discover).
	autoAttach bool                    // Guarded by mu: Target.setAutoAttach is on.
	autoF      targetFilter            // Guarded by mu.
	autoDone   map[string]bool         // Guarded by mu: targets auto-attached once (not again after a detach).

	running sync.WaitGroup // flat sessions whose Session still runs (added under mu in startFlat)
}

// serve runs the connection until the client goes, then ends its sessions
// and waits for them.
func (c *browserConn) serve() {
	var g errgroup.Group
	g.Go(func() error { c.sendLoop(); return nil })
	g.Go(func() error { c.targetLoop(); return nil })
	c.readLoop()
	close(c.done)
	c.mu.Lock()
	c.ended = true
	flats := make([]*flatSession, 0, len(c.sessions))
	for _, f := range c.sessions {
		flats = append(flats, f)
	}
	c.mu.Unlock()
	for _, f := range flats {
		f.detach()
	}
	c.running.Wait()
	c.out.close(&closeState{websocket.StatusNormalClosure, "browser connection closed"})
	g.Wait()
	if c.watchdog != nil {
		c.watchdog.Stop()
	}
}

// readLoop reads requests until the client goes. A request with a
// sessionId goes to that session; one without is the browser target's
// (browserMethods) or, for any other method, the combined target's, as a
// session-less client (VS Code's node attach through /json/version)
// expects.
func (c *browserConn) readLoop() {
	ctx := context.Background()
	var rd msgReader
	for {
		msg, err := rd.read(ctx, c.ws)
		if err != nil {
			return
		}
		c.handle(msg)
	}
}

// handle routes one request; each path answers it exactly once (here, or
// the session it was handed to).
func (c *browserConn) handle(msg []byte) {
	var req request
	defer func() {
		if p := recover(); p != nil {
			c.b.srv.logf("browser connection %d: panic while handling %q: %v\n%s", c.id, req.Method, p, debug.Stack())
			c.send(appendError(nil, req.ID, req.SessionID,
				&wireError{codeInternal, fmt.Sprintf("inspector-worker failed on '%s': %v", req.Method, p)}))
		}
	}()
	req, werr := parseRequest(msg)
	if werr != nil {
		c.send(appendError(nil, req.ID, req.SessionID, werr))
		return
	}
	if req.SessionID == "" {
		if h, ok := browserMethods[req.Method]; ok {
			c.answerBrowser(h, req)
			return
		}
	}
	c.mu.Lock()
	f, ok := c.sessions[req.SessionID]
	inner := ""
	if !ok && req.SessionID != "" {
		// A thread's or child's session inside a flat session:
		// "<flat>.<inner>" (nestedSep).
		if flat, in, cut := strings.Cut(req.SessionID, nestedSep); cut && in != "" {
			f, ok = c.sessions[flat]
			inner = in
		}
	}
	c.mu.Unlock()
	if !ok && req.SessionID != "" {
		c.send(appendError(nil, req.ID, req.SessionID, &wireError{codeSessionUnknown, "Session with given id not found."}))
		return
	}
	if !ok {
		var reason string
		if f, reason = c.attach(c.b.srv.targetID, true); f == nil {
			c.send(appendError(nil, req.ID, "", &wireError{codeServerError,
				"'" + req.Method + "' needs a session on the combined target, which could not be opened: " + reason}))
			return
		}
	}
	if f.browser {
		if h, ok := browserMethods[req.Method]; ok {
			c.answerBrowser(h, req)
			return
		}
		c.send(appendError(nil, req.ID, req.SessionID, notFound(req.Method)))
		return
	}
	f.deliver(req, msg, inner)
}

// send queues msg for the client. On overflow the connection ends (see the
// policy above): sendLoop writes the 1008 close frame itself.
func (c *browserConn) send(msg []byte) error {
	err := c.out.push(msg)
	if errors.Is(err, errQueueOverflow) {
		c.overflow.Do(func() {
			c.b.srv.logf("browser connection %d: closed, it stopped reading (%d messages or %d MiB queued)",
				c.id, c.out.maxMessages, c.out.maxBytes>>20)
			// A client that reads nothing would keep sendLoop in Write.
			c.watchdog = time.AfterFunc(overflowWriteGrace, func() { c.ws.CloseNow() })
		})
	}
	return err
}

// sendLoop is the connection's one writer.
func (c *browserConn) sendLoop() {
	ctx := context.Background()
	var batch [][]byte
	for {
		batch, closed, why := c.out.next(batch)
		if closed {
			c.closeWith(why)
			return
		}
		n := 0
		for _, m := range batch {
			if c.out.overflowed() {
				break
			}
			if err := c.ws.Write(ctx, websocket.MessageText, m); err != nil {
				c.ws.CloseNow()
				c.out.close(errDevToolsWrite)
				return
			}
			n++
		}
		clear(batch)
		c.out.written(n)
	}
}

func (c *browserConn) closeWith(why error) {
	var cs *closeState
	switch {
	case errors.As(why, &cs):
	case errors.Is(why, errQueueOverflow):
		cs = &closeState{websocket.StatusPolicyViolation, "the client stopped reading; closed so the host is not held back"}
	default:
		cs = &closeState{websocket.StatusInternalError, fmt.Sprint(why)}
	}
	c.ws.Close(cs.code, truncate(cs.reason, maxCloseReason))
}

// flatSession is one flat session on a browser connection and its
// Session's transport: the Session reads its requests from in and its
// messages go onto the connection's queue with its sessionId.
type flatSession struct {
	c        *browserConn // Static after construction.
	id       string       // Static after construction: "" for the session-less one.
	targetID string       // Static after construction.
	browser  bool         // Static after construction: attachToBrowserTarget's session (no Session).
	sess     *Session     // Set once before deliver is first called; nil for browser.

	in       chan []byte   // cap flatInboundMax: requests for readLoop
	gone     chan struct{} // closed by detach
	goneOnce sync.Once
}

// deliver hands a request to the session's readLoop, with the sessionId
// taken out (inside the session it is the window's own request) or, for a
// thread or child inside it, replaced by that one's own (inner), or answers
// it at once when the session's queue is full.
func (f *flatSession) deliver(req request, msg []byte, inner string) {
	if req.SessionID != "" {
		msg = rebuildRequest(req, inner)
	}
	select {
	case <-f.gone:
		f.c.send(appendError(nil, req.ID, f.id, &wireError{codeSessionUnknown, "Session with given id not found."}))
	case f.in <- msg:
	default:
		f.c.send(appendError(nil, req.ID, f.id, &wireError{codeServerError, fmt.Sprintf(
			"'%s' was not sent: %d requests already wait for this session (the host is busy or paused); retry once they are answered",
			req.Method, flatInboundMax)}))
	}
}

// detach ends the session: its readLoop ends once it has taken what is
// already queued for it.
func (f *flatSession) detach() { f.goneOnce.Do(func() { close(f.gone) }) }

// read is the Session's readLoop's: queued requests first, then the end.
func (f *flatSession) read(ctx context.Context) ([]byte, error) {
	select {
	case m := <-f.in:
		return m, nil
	default:
	}
	select {
	case m := <-f.in:
		return m, nil
	case <-f.gone:
		return nil, errFlatDetached
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// write stamps the session's id on msg and queues it on the connection.
// It never blocks (see the overflow policy above). A message of one of the
// Session's own flat children (a worker thread, a child process) already
// carries that child's sessionId, and the Target events about a child name
// it in params: those become "<flat>.<child>" (nestedSep), since
// Node numbers a thread's session per Node session and two flat sessions'
// children would otherwise share ids on one connection.
func (f *flatSession) write(_ context.Context, msg []byte) error {
	if f.id != "" {
		msg = nestedTargetEvent(msg, f.id)
		if start, end, ok := trailingSessionID(msg); ok {
			msg = splice(msg, start, end, f.id+nestedSep+string(msg[start:end]))
		} else {
			msg = withSessionID(msg, f.id)
		}
	}
	return f.c.send(msg)
}

// nestedSep joins a flat session's id and the id of a session of its own
// (a thread's, a child's) into the id the browser connection routes by.
// Flat session ids are hexadecimal, so the first separator splits them.
const nestedSep = "."

// trailingSessionID finds a top-level "sessionId" member written last, as
// the worker appends a child's (withSessionID), and returns its value's
// range without the quotes. After the value's closing quote only the
// outermost object's "}" follows, so the member is top-level; a quote
// inside a JSON string is escaped, so the bytes `,"sessionId":"` are
// structural.
func trailingSessionID(msg []byte) (start, end int, ok bool) {
	n := len(msg)
	if n < 4 || msg[n-1] != '}' || msg[n-2] != '"' {
		return 0, 0, false
	}
	q := bytes.LastIndexByte(msg[:n-2], '"')
	if q < 0 || bytes.IndexByte(msg[q+1:n-2], '\\') >= 0 || !bytes.HasSuffix(msg[:q], []byte(`,"sessionId":`)) {
		return 0, 0, false
	}
	return q + 1, n - 2, true
}

// nestedTargetEvent rewrites params.sessionId of a Session's
// Target.attachedToTarget / detachedFromTarget about a child of its own.
func nestedTargetEvent(msg []byte, flatID string) []byte {
	if !bytes.HasPrefix(msg, []byte(`{"method":"Target.attachedToTarget"`)) &&
		!bytes.HasPrefix(msg, []byte(`{"method":"Target.detachedFromTarget"`)) {
		return msg
	}
	start, end, ok := cdpwire.FindMember(msg, "params", "sessionId")
	if !ok || end-start < 2 || msg[start] != '"' {
		return msg
	}
	inner := cdpwire.Unquote(msg[start:end])
	return splice(msg, int(start)+1, int(end)-1, flatID+nestedSep+inner)
}

// splice returns a copy of msg with msg[start:end] replaced by the JSON
// string content of s (quoted, then its quotes dropped).
func splice(msg []byte, start, end int, s string) []byte {
	q, _ := jsontext.AppendQuote(nil, s)
	out := make([]byte, 0, len(msg)+len(q))
	out = append(out, msg[:start]...)
	out = append(out, q[1:len(q)-1]...)
	return append(out, msg[end:]...)
}

// close and closeNow end the session from its own side (its host went, it
// fell behind, a loop failed); the connection stays. The client is told
// by Target.detachedFromTarget once the Session has stopped (runFlat).
func (f *flatSession) close(websocket.StatusCode, string) { f.detach() }
func (f *flatSession) closeNow()                          { f.detach() }

// rebuildRequest rebuilds a request for a flat session's Session: id,
// method and params as the client sent them (params byte for byte), with
// sessionId inner ("" for none). Other top-level members are not CDP and
// are dropped.
func rebuildRequest(req request, inner string) []byte {
	out := append([]byte(`{"id":`), req.ID...)
	out = append(out, `,"method":`...)
	out, _ = jsontext.AppendQuote(out, req.Method)
	if req.Params != nil {
		out = append(out, `,"params":`...)
		out = append(out, req.Params...)
	}
	if inner != "" {
		out = append(out, `,"sessionId":`...)
		out, _ = jsontext.AppendQuote(out, inner)
	}
	return append(out, '}')
}

// attach opens a flat session on targetID: the connection's session-less
// one (sessionless, on the combined target; one at most), or one with a new
// sessionId. It dials
// the target's Node session in the caller's goroutine (a loopback connect:
// Node's inspector thread answers even while the host is paused). On
// failure f is nil and reason says why.
func (c *browserConn) attach(targetID string, sessionless bool) (f *flatSession, reason string) {
	p, _, ok := c.b.providerOf(targetID)
	if !ok {
		return nil, "no target with given id found"
	}
	sessionID := ""
	if !sessionless {
		sessionID = newTargetID()
	}
	return c.startFlat(sessionID, targetID, func(f *flatSession) (*Session, error) { return p.attach(targetID, f) })
}

// startFlat registers a flat session and starts its Session.
func (c *browserConn) startFlat(sessionID, targetID string, open func(*flatSession) (*Session, error)) (*flatSession, string) {
	f := &flatSession{c: c, id: sessionID, targetID: targetID, in: make(chan []byte, flatInboundMax), gone: make(chan struct{})}
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return nil, "the browser connection is closing"
	}
	if _, dup := c.sessions[sessionID]; dup {
		c.mu.Unlock()
		return c.sessions[sessionID], "" // the session-less one, opened meanwhile
	}
	c.running.Add(1)
	c.mu.Unlock()
	sess, err := open(f)
	if err != nil {
		c.running.Done()
		return nil, err.Error()
	}
	f.sess = sess
	c.mu.Lock()
	ended := c.ended
	c.sessions[sessionID] = f
	c.mu.Unlock()
	if ended {
		f.detach() // serve collected the sessions before this one was listed
	}
	go c.runFlat(f)
	return f, ""
}

// runFlat runs a flat session's Session, then forgets it and tells the
// client it is detached (after the session's last message, which its
// sendLoop has queued by then).
func (c *browserConn) runFlat(f *flatSession) {
	defer c.running.Done()
	defer c.b.srv.removeSession(f.sess)
	f.sess.run()
	f.detach()
	c.mu.Lock()
	if c.sessions[f.id] == f {
		delete(c.sessions, f.id)
	}
	c.mu.Unlock()
	if f.id != "" {
		c.send(detachedEvent(f.id, f.targetID))
	}
	c.b.srv.logf("browser connection %d: session %q on %s ended", c.id, f.id, f.targetID)
}
