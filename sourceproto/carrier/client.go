package carrier

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// ClientOptions configures NewClientHandler. Zero values are documented
// defaults.
type ClientOptions struct {
	// Registry receives every client source. Required.
	Registry *sourceproto.Registry
	// Token is the run's client token (sourceproto.NewToken). Required in
	// practice: with a zero Token the registry refuses every hello. It is
	// only ever passed to Registry.Open: never logged, never echoed.
	Token sourceproto.Token
	// AllowedOrigins are the page origins that may open /client, as
	// "scheme://host[:port]" patterns: host may use path.Match wildcards,
	// port may be "*" (any, or none). nil = DefaultAllowedOrigins().
	AllowedOrigins []string
	// ClientJS is served at GET /client.js (package client/js,
	// clientjs.ClientJS()). nil = 404.
	ClientJS []byte
	// Logf receives one line per refused or ended connection; nil = silent.
	Logf func(format string, args ...any)
	// MaxConns bounds the /client connections open at once (each one is a
	// source with its own replay buffers and outbox). The next upgrade is
	// refused with 503 and a reason. 0 = DefaultMaxClients.
	MaxConns int
}

// DefaultMaxClients is ClientOptions.MaxConns's default: more tabs of one app
// than a person keeps open, few enough that a page stuck in a reconnect loop
// cannot exhaust the worker's file descriptors.
const DefaultMaxClients = 64

// ClientHandler serves GET /client (the client WebSocket carrier) and GET
// /client.js. Mount it on both paths, behind the loopback listener's
// Host-header check (cdpserver.Server.Handle).
//
// Goroutines: per /client connection, net/http's handler goroutine runs
// the read loop and waits, through an errgroup, for the connection's one
// sendLoop; a grace timer (time.AfterFunc) cuts off the writes of a
// connection that is ending; a hello timer closes a connection that does
// not send its hello. Shutdown starts one waiter goroutine while it runs.
type ClientHandler struct {
	reg     *sourceproto.Registry // Static after construction.
	token   sourceproto.Token     // Static after construction.
	origins []originPattern       // Static after construction.
	js      []byte                // Static after construction.
	logf    func(string, ...any)  // Static after construction.
	// helloTimeout is defaultHelloTimeout; static after construction
	// (tests shorten it before serving).
	helloTimeout time.Duration

	maxConns int // Static after construction.

	mu      sync.Mutex           // Guards the fields below. Lock order: see docs/locks.md.
	opening int                  // Guarded by mu: upgrades holding a connection slot, not yet in conns.
	conns   map[*clientConn]bool // Guarded by mu: connections being served.
	closing bool                 // Guarded by mu: Shutdown was called.
	wg      sync.WaitGroup       // One per connection being served (Add under mu).
}

// NewClientHandler checks the options and returns the handler.
func NewClientHandler(o ClientOptions) (*ClientHandler, error) {
	if o.Registry == nil {
		return nil, errors.New("carrier: ClientOptions.Registry is required")
	}
	if o.AllowedOrigins == nil {
		o.AllowedOrigins = DefaultAllowedOrigins()
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxClients
	}
	h := &ClientHandler{reg: o.Registry, token: o.Token, js: o.ClientJS, logf: o.Logf, conns: make(map[*clientConn]bool),
		helloTimeout: defaultHelloTimeout, maxConns: o.MaxConns}
	if h.logf == nil {
		h.logf = nopLogf
	}
	for _, s := range o.AllowedOrigins {
		p, err := parseOriginPattern(s)
		if err != nil {
			return nil, err
		}
		h.origins = append(h.origins, p)
	}
	return h, nil
}

// ServeHTTP routes /client and /client.js.
func (h *ClientHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/client.js" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		h.serveJS(w)
	case r.URL.Path == "/client" && r.Method == http.MethodGet:
		h.serveClient(w, r)
	case r.URL.Path == "/client" || r.URL.Path == "/client.js":
		http.Error(w, "inspector-worker: method not allowed", http.StatusMethodNotAllowed)
	default:
		http.NotFound(w, r)
	}
}

// serveJS serves the client bundle. no-store: the bundle must be the one
// this worker embeds; a cached bundle from another build is exactly the
// stale producer the protocol's version check exists to catch, and it is
// small and local, so there is nothing to gain from caching.
func (h *ClientHandler) serveJS(w http.ResponseWriter) {
	if h.js == nil {
		http.Error(w, "inspector-worker: no client bundle configured", http.StatusNotFound)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/javascript; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	// Pages on other loopback ports load it with <script src>; a page
	// that sets Cross-Origin-Embedder-Policy would refuse it without this.
	hd.Set("Cross-Origin-Resource-Policy", "cross-origin")
	hd.Set("Content-Length", strconv.Itoa(len(h.js)))
	_, _ = w.Write(h.js)
}

// serveClient checks the Origin, upgrades, and serves one source.
func (h *ClientHandler) serveClient(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Values("Origin")
	if reason, ok := originAllowed(h.origins, origin); !ok {
		h.logf("client: refused %q: %s", truncate(r.Header.Get("Origin"), 200), reason)
		http.Error(w, "inspector-worker: "+reason, http.StatusForbidden)
		return
	}
	if reason := h.reserve(); reason != "" {
		h.logf("client: refused a connection: %s", reason)
		http.Error(w, "inspector-worker: "+reason, http.StatusServiceUnavailable)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// The Origin was checked above, scheme and port included, which
		// the library's host-only patterns cannot express.
		InsecureSkipVerify: true,
		// Frames are small JSON and the link is loopback: compression
		// would cost CPU and per-connection memory for nothing.
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		h.unreserve()
		return // Accept answered the request
	}
	// The library refuses a longer message while reading it (close 1009),
	// so a frame is never buffered beyond the limit.
	ws.SetReadLimit(sourceproto.MaxFrameBytes)
	c := newClientConn(h, ws, origin[0])
	if !h.track(c) {
		_ = ws.Close(websocket.StatusGoingAway, "worker shutting down")
		return
	}
	defer h.untrack(c)
	c.serve()
}

// reserve takes a connection slot for an upgrade, or says why it cannot;
// track turns it into a tracked connection, unreserve gives it back.
func (h *ClientHandler) reserve() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.conns) + h.opening; n >= h.maxConns {
		return fmt.Sprintf("%d page connections are already open, the limit; close some pages, "+
			"or restart inspector-worker with --max-clients N", n)
	}
	h.opening++
	return ""
}

func (h *ClientHandler) unreserve() {
	h.mu.Lock()
	h.opening--
	h.mu.Unlock()
}

func (h *ClientHandler) track(c *clientConn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.opening--
	if h.closing {
		return false
	}
	h.conns[c] = true
	h.wg.Add(1)
	return true
}

func (h *ClientHandler) untrack(c *clientConn) {
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
	h.wg.Done()
}

// Shutdown refuses new connections, sends every live one close{shutdown}
// and a WebSocket close (1001), and waits for them to end. When ctx ends
// first, the remaining connections are dropped without a handshake and
// Shutdown returns ctx.Err() once they are gone.
func (h *ClientHandler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closing = true
	conns := make([]*clientConn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.finish(shutdownEnding())
	}
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	for _, c := range conns {
		_ = c.ws.CloseNow()
	}
	<-done
	return ctx.Err()
}
