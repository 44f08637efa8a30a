package cdpserver

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/browserrealm"
	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/hostrealm"
	"github.com/inspector-worker/inspector-worker/internal/cdpwire"
	"github.com/inspector-worker/inspector-worker/network"
	"github.com/inspector-worker/inspector-worker/pagerealm"
	"github.com/inspector-worker/inspector-worker/realm"
)

// Host is what the server needs of the host realm's backend (*hostnode.Host).
type Host interface {
	Info() hostnode.HostInfo
	OpenSession(ctx context.Context) (*websocket.Conn, error)
	Done() <-chan struct{}
	Reason() string
	Protocol(ctx context.Context) ([]byte, error)
}

// Options configures a Server.
type Options struct {
	// Logf receives one line per notable event (connections, refusals).
	// Default: discard.
	Logf func(format string, args ...any)
	// MaxQueuedMessages and MaxQueuedBytes bound each DevTools connection's
	// outgoing queue (queue.go). Defaults: maxQueuedMessages, maxQueuedBytes.
	MaxQueuedMessages int
	MaxQueuedBytes    int
	// HideScripts lists script URLs the worker's own tooling loads into the
	// host (the preload): their Debugger.scriptParsed never reaches a window,
	// so they do not clutter Sources.
	HideScripts []string
	// Mount adds handlers of other features (e.g. "/api/trace/" → the trace
	// API) under the same loopback listener and Host-header check. Patterns
	// use net/http.ServeMux syntax.
	Mount map[string]http.Handler
	// MaxWindows bounds the DevTools windows open at once on the target.
	// Each one costs a Node inspector session, and Node delivers every
	// console event once per session on the host's main thread, so windows
	// slow the host down. The next upgrade is refused with 503 and a reason.
	// Default: DefaultMaxWindows.
	MaxWindows int
	// IdleTimeout closes an HTTP keep-alive connection that has sent no
	// request for this long (WebSockets are not affected). Default:
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Watch keeps the windows open when the host goes away (run --watch):
	// the host is swapped with HostDown and HostUp (watch.go) and every
	// window gets a new Node session with its state replayed. Without it a
	// host that ends closes every window.
	Watch bool
	// ClientRuntimeTimeout bounds how long a window waits for a page to
	// answer a Runtime request (evaluate, getProperties …) routed to it; the
	// window then gets an error naming the deadline and the page a
	// runtime.cancel. Default: DefaultClientRuntimeTimeout.
	ClientRuntimeTimeout time.Duration
	// NoCapture makes FetchConsumer nil: fetch items are ignored and the
	// Network panel stays empty (run --no-capture).
	NoCapture bool
	// RedactHeaders are header names (any case) whose values the fetch
	// journal replaces when recording (--redact-header).
	RedactHeaders []string
	// JournalMaxEntries and JournalMaxBytes bound the fetch journal.
	// Defaults: fetchcapture.DefaultMaxEntries, DefaultMaxBytes.
	JournalMaxEntries int
	JournalMaxBytes   int64
}

// Defaults of Options. The README lists them.
const (
	// DefaultMaxWindows is far above what a person opens and still keeps a
	// runaway client (500 upgrades in 188 ms were measured) from making 500
	// Node sessions.
	DefaultMaxWindows = 16
	// DefaultIdleTimeout is how long chrome://inspect's discovery polling
	// (every few seconds) keeps one connection; idle ones beyond it are
	// closed so they cannot pile up.
	DefaultIdleTimeout = 30 * time.Second
	// DefaultClientRuntimeTimeout is far above what a page takes to evaluate
	// an ordinary expression, and short enough that a hung page (an endless
	// loop, a tab frozen in the background) gives the user an answer.
	DefaultClientRuntimeTimeout = 10 * time.Second
)

// Server is the worker's CDP endpoint for one host.
//
// Goroutines: the http.Server's; per DevTools connection a Session's three
// (readLoop, hostLoop, sendLoop); per browser connection its readLoop,
// sendLoop and targetLoop, and per flat session on it a Session's
// (browser.go); one hostWatch that closes every session when the host is
// gone.
type Server struct {
	targetID string            // Static after construction.
	hostInfo hostnode.HostInfo // Static after construction: the first host's (a restart runs the same script).
	registry *realm.Registry   // Static after construction.
	clients  *pagerealm.Hub    // Static after construction: the page realms' backend.
	// hostScripts: the host's script URLs → scriptIds, for the Network
	// domain's initiator links (its own leaf lock; emptied when the host
	// is replaced: a new process reuses V8's script ids).
	hostScripts hostrealm.Scripts
	network     *network.Domain       // Static after construction: the fetch journal's Network domain.
	logf        func(string, ...any)  // Static after construction.
	debug       bool                  // Static after construction: Options.Logf was set.
	opts        Options               // Static after construction, defaults filled in.
	children    ChildRealms           // Set before serving (SetChildRealms); nil: no child targets.
	native      *browserrealm.Browser // Set before serving (SetNativeBrowser); nil: no native pages (native.go).
	browser     *browserEndpoint      // Static after construction: /devtools/browser (browser.go).

	mux     *http.ServeMux // Static after construction; Handle adds routes.
	ln      net.Listener   // Static after construction.
	addr    string         // Static after construction: "127.0.0.1:PORT".
	httpSrv *http.Server   // Static after construction.

	mu       sync.Mutex            // Taken after pagerealm.Hub.mu, never before. Lock order: see docs/locks.md.
	sessions map[*Session]struct{} // Guarded by mu.
	opening  int                   // Guarded by mu: upgrades holding a window slot, not yet sessions.
	nextConn int64                 // Guarded by mu.
	closing  string                // Guarded by mu: non-empty once shutting down.
	wg       sync.WaitGroup        // Counts running sessions.

	// swapMu serialises host swaps (HostDown, HostUp) with the binding of
	// a window to a host (a window's registration, HostUp's rebind), so a
	// window never binds to a host that was replaced: the Node session is
	// dialled outside it, then bound under it only if hostGen has not
	// moved. No network I/O under it. Lock order: see docs/locks.md.
	swapMu   sync.Mutex // Lock order: see docs/locks.md.
	hostMu   sync.Mutex // Guards host, hostDown and hostGen; a leaf lock (docs/locks.md).
	host     Host       // Guarded by hostMu; static without Options.Watch.
	hostDown string     // Guarded by hostMu: why no host runs (watch mode), "" while one does.
	hostGen  uint64     // Guarded by hostMu: counts HostDown and HostUp calls.
}

// New returns a server for host on ln (see Listen). Call Serve to accept
// connections.
func New(host Host, ln net.Listener, opts Options) *Server {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if opts.MaxQueuedMessages <= 0 {
		opts.MaxQueuedMessages = maxQueuedMessages
	}
	if opts.MaxQueuedBytes <= 0 {
		opts.MaxQueuedBytes = maxQueuedBytes
	}
	if opts.MaxWindows <= 0 {
		opts.MaxWindows = DefaultMaxWindows
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.ClientRuntimeTimeout <= 0 {
		opts.ClientRuntimeTimeout = DefaultClientRuntimeTimeout
	}
	info := host.Info()
	s := &Server{
		targetID: newTargetID(),
		host:     host,
		hostInfo: info,
		registry: realm.NewRegistry(realm.NewHostRealm(info.Title)),
		httpSrv:  &http.Server{ReadHeaderTimeout: 10 * time.Second, IdleTimeout: opts.IdleTimeout},
		logf:     logf,
		debug:    opts.Logf != nil,
		opts:     opts,
		ln:       ln,
		addr:     ln.Addr().String(),
		sessions: map[*Session]struct{}{},
	}
	s.clients = pagerealm.New(pageServer{s}, pagerealm.Config{TargetID: s.targetID, Registry: s.registry,
		RuntimeTimeout: opts.ClientRuntimeTimeout, Served: pageAgentMethods()})
	s.network = s.newNetwork()
	s.browser = newBrowserEndpoint(s)
	s.httpSrv.Handler = s.routes()
	return s
}

func newTargetID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return fmt.Sprintf("%X", b[:])
}

// TargetID is the page target's id, stable for the server's lifetime and
// unguessable: knowing it is what lets a client open the WebSocket.
func (s *Server) TargetID() string { return s.targetID }

// Registry returns the realm registry shared by every connection.
func (s *Server) Registry() *realm.Registry { return s.registry }

// Addr is the listening address.
func (s *Server) Addr() string { return s.addr }

// PageWebSocketURL is the target's webSocketDebuggerUrl at the listening
// address.
func (s *Server) PageWebSocketURL() string { return s.pageWebSocketURL(s.addr) }

func (s *Server) pageWebSocketURL(hostport string) string {
	return "ws://" + hostport + "/devtools/page/" + s.targetID
}

// FrontendURL is the URL to paste into Chrome. devtools_app.html builds the
// full UI for a page target; inspector.html would give most of the window to
// a screencast pane there is nothing to show in.
func (s *Server) FrontendURL() string { return s.frontendURL(s.addr) }

func (s *Server) frontendURL(hostport string) string {
	return "devtools://devtools/bundled/devtools_app.html?ws=" + hostport + "/devtools/page/" + s.targetID
}

// Listen opens the endpoint on addr, which must be a loopback address. When
// fallback is set and the port is taken, it listens on a free port of the same
// host instead and reports that it did.
func Listen(addr string, fallback bool) (ln net.Listener, fellBack bool, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, false, fmt.Errorf("cdpserver: bad listen address %q: %w", addr, err)
	}
	if err := checkLoopback(host); err != nil {
		return nil, false, err
	}
	ln, err = net.Listen("tcp", addr)
	if err == nil {
		return ln, false, nil
	}
	if !fallback || !errors.Is(err, syscall.EADDRINUSE) {
		return nil, false, fmt.Errorf("cdpserver: cannot listen on %s: %w", addr, err)
	}
	ln, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, false, fmt.Errorf("cdpserver: cannot listen on %s or a free port: %w", addr, err)
	}
	return ln, true, nil
}

func checkLoopback(host string) error {
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w: %q. The endpoint gives full control of the Node host (it can run any code), "+
			"so it only listens on 127.0.0.1 or ::1; to debug from another machine, forward the port over SSH "+
			"(ssh -L 9229:127.0.0.1:9229 host)", ErrNonLoopback, host)
	}
	return nil
}

// Serve accepts connections until Shutdown. It returns
// http.ErrServerClosed after a Shutdown.
func (s *Server) Serve() error {
	go s.hostWatch()
	return s.httpSrv.Serve(s.ln)
}

// currentHost is the host windows bind to now, or nil and why there is none
// (watch mode, between HostDown and HostUp).
func (s *Server) currentHost() (Host, string) {
	h, _, down := s.currentHostGen()
	return h, down
}

// currentHostGen is currentHost with the host generation: a Node session
// dialled for it may be bound (under swapMu) only while it is unchanged.
func (s *Server) currentHostGen() (Host, uint64, string) {
	s.hostMu.Lock()
	defer s.hostMu.Unlock()
	if s.hostDown != "" {
		return nil, s.hostGen, s.hostDown
	}
	return s.host, s.hostGen, ""
}

// hostWatch releases the host when it is gone or finished: every Node
// session is closed at once (so Node never waits for a debugger to
// disconnect), and each window is then told why by its own session
// (Session.hostLoop), with the exit code when the host reports one.
func (s *Server) hostWatch() {
	if s.opts.Watch {
		return // the run supervisor swaps hosts (HostDown, HostUp); windows stay
	}
	<-s.host.Done()
	for _, sess := range s.stopAccepting("the Node host is gone") {
		go sess.closeHostAfterAnswers()
	}
	s.browser.closeAll("the Node host is gone")
}

// stopAccepting refuses new sessions from now on and returns the open ones.
func (s *Server) stopAccepting(reason string) []*Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing == "" {
		s.closing = reason
	}
	sessions := make([]*Session, 0, len(s.sessions))
	for sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	return sessions
}

// closeSessions closes every open session with reason and refuses new ones.
func (s *Server) closeSessions(reason string) {
	for _, sess := range s.stopAccepting(reason) {
		sess.endHost(reason, false)
		sess.closeHost()
	}
	s.browser.closeAll(reason)
}

// Shutdown closes every DevTools connection with reason (shown by the
// frontend), waits for the sessions to end (bounded by ctx), and stops
// the HTTP server.
func (s *Server) Shutdown(ctx context.Context, reason string) error {
	s.closeSessions(reason)
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return s.httpSrv.Shutdown(ctx)
}

// reserveWindow takes one of the MaxWindows slots for an upgrade about to
// open a Node session, or says why it cannot. The slot becomes the
// session's in addSession, or is given back with releaseWindow.
func (s *Server) reserveWindow() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing != "" {
		return s.closing
	}
	if n := len(s.sessions) + s.opening; n >= s.opts.MaxWindows {
		return fmt.Sprintf("%d DevTools windows are already open on this target, the limit: each one costs "+
			"a Node inspector session that slows the host down. Close one, or restart inspector-worker "+
			"with --max-windows N", n)
	}
	s.opening++
	return ""
}

func (s *Server) releaseWindow() {
	s.mu.Lock()
	s.opening--
	s.mu.Unlock()
}

// addSession turns a reserved window slot into a registered session unless
// the server is closing (the slot is released either way).
func (s *Server) addSession(newSess func(id int64) *Session) (*Session, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opening--
	if s.closing != "" {
		return nil, s.closing
	}
	s.nextConn++
	sess := newSess(s.nextConn)
	s.sessions[sess] = struct{}{}
	s.wg.Add(1)
	return sess, ""
}

func (s *Server) removeSession(sess *Session) {
	s.mu.Lock()
	delete(s.sessions, sess)
	s.mu.Unlock()
	// After Server.mu: the hub's lock comes first in the lock order.
	s.clients.SessionClosed(sess.page)
	sess.net.Close()
	s.wg.Done()
}

// Handle adds a route of another feature (the client ingest, the trace API)
// behind the same loopback listener and Host-header check. Call it before
// Serve.
func (s *Server) Handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
}

// sessionCount is the number of open DevTools sessions.
func (s *Server) sessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// hidden reports whether a scriptParsed event is about a script of
// HideScripts. Node names CommonJS scripts by bare path, hence both forms.
// Only the event's own params.url counts: V8 puts the stack of the moment
// into scriptParsed.stackTrace, and Node answers Debugger.enable on an
// interrupt, so the scripts it lists then carry whatever code was running,
// often the preload's (its console wrapper); matching the URL anywhere in
// the event hid every script and the window's Sources tree stayed empty
// (docs/agent-note.md "Relay rules").
func (s *Server) hidden(msg []byte) bool {
	if len(s.opts.HideScripts) == 0 {
		return false
	}
	start, end, ok := cdpwire.FindMember(msg, "params", "url")
	if !ok {
		return false
	}
	u := cdpwire.Unquote(msg[start:end])
	for _, p := range s.opts.HideScripts {
		if u == p || u == "file://"+p {
			return true
		}
	}
	return false
}
