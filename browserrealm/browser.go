// Package browserrealm backs the realm of a page running in a Chromium-family
// browser with the browser's own DevTools protocol endpoint: the worker keeps
// one connection to the browser, tracks its page targets
// (Target.setDiscoverTargets), and gives each window that asks its own flat
// session on a page (Target.attachToTarget{flatten: true}). The window's
// messages in that session go to the browser as they are and the browser's
// come back as they are: ids are per session in Chromium, so nothing is
// rewritten. docs/agent-note.md "Native pages" has the decisions.
package browserrealm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// readLimit is the largest message the browser may send: a page's
// DOM.getDocument or a script's source can be tens of MiB; Chromium's own
// frontend takes any size. 256 MiB bounds a broken peer, not a real page.
const readLimit = 256 << 20

// callTimeout bounds the worker's own commands to the browser (discovery,
// attach, detach, close): each is answered at once by a live browser.
const callTimeout = 10 * time.Second

// writeTimeout bounds one write of a window's request to the browser; a
// browser that reads nothing for this long is treated as gone for that
// request (the caller answers it with the error).
const writeTimeout = 10 * time.Second

// DefaultMatch joins the pages a local app serves: http(s) on a loopback
// host. Never devtools://, chrome://, chrome-extension:// (not http).
var DefaultMatch = regexp.MustCompile(`^https?://(localhost|127\.0\.0\.1|\[::1\])(:\d+)?(/|$)`)

// Page is one joined page target of the browser.
type Page struct {
	TargetID string
	URL      string
	Title    string
}

// Browser is the worker's one connection to a browser.
type Browser struct {
	conn  *websocket.Conn
	match *regexp.Regexp
	self  string // Static after construction: the browser's debugging host:port, whose pages (its own DevTools frontend) never join.
	logf  func(string, ...any)

	mu      sync.Mutex
	nextID  int64                     // Guarded by mu: the worker's own request ids on the browser's root session.
	calls   map[int64]chan callResult // Guarded by mu: answers awaited by call.
	pages   map[string]Page           // Guarded by mu: joined page targets by targetId.
	changed chan struct{}             // Guarded by mu: closed at the next change of pages.
	subs    map[string]*Session       // Guarded by mu: every session id (attached and nested) → its window's Session.
	byRoot  map[string]*Session       // Guarded by mu: the attached (root) session id → Session.
	guards  map[string]*guardState    // Guarded by mu: the worker's own auto-attached sessions by sessionId (guard.go).
	guarded map[string]*guardState    // Guarded by mu: the same by targetId.
	started sync.WaitGroup            // guards started while setAutoAttach is answered
	autoOn  bool                      // Guarded by mu: Target.setAutoAttach is being answered (its attaches are the worker's).
	closed  bool                      // Guarded by mu: the connection ended.
	reason  string                    // Guarded by mu: why.
	done    chan struct{}             // closed when the connection ends
}

type callResult struct {
	result json.RawMessage
	err    error
}

// envelope is what the worker reads of every browser message: routing
// only; the message itself is relayed as it came.
type envelope struct {
	ID        *int64          `json:"id"`
	Method    string          `json:"method"`
	SessionID string          `json:"sessionId"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type targetInfo struct {
	TargetID string `json:"targetId"`
	Type     string `json:"type"`
	URL      string `json:"url"`
	Title    string `json:"title"`
}

// Dial connects to the browser at endpoint (http://HOST:PORT, whose
// /json/version names the browser's WebSocket, or that ws:// URL itself) and
// starts tracking its pages whose URL match matches (nil: DefaultMatch).
func Dial(ctx context.Context, endpoint string, match *regexp.Regexp, logf func(string, ...any)) (*Browser, error) {
	if match == nil {
		match = DefaultMatch
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	wsURL, err := browserWebSocket(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	conn, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to the browser at %s: %w (is it started with --remote-debugging-port?)", wsURL, err)
	}
	conn.SetReadLimit(readLimit)
	self := ""
	if u, err := url.Parse(wsURL); err == nil {
		self = u.Host
	}
	b := &Browser{conn: conn, match: match, self: self, logf: logf, calls: map[int64]chan callResult{}, pages: map[string]Page{},
		changed: make(chan struct{}), subs: map[string]*Session{}, byRoot: map[string]*Session{}, guards: map[string]*guardState{},
		guarded: map[string]*guardState{},
		done:    make(chan struct{})}
	go b.readLoop()
	if _, err := b.call(ctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true}); err != nil {
		conn.CloseNow()
		return nil, fmt.Errorf("browser at %s: Target.setDiscoverTargets: %w", wsURL, err)
	}
	if err := b.startGuard(ctx); err != nil {
		conn.CloseNow()
		return nil, fmt.Errorf("browser at %s: %w", wsURL, err)
	}
	return b, nil
}

// browserWebSocket turns an endpoint flag into the browser's WebSocket URL.
func browserWebSocket(ctx context.Context, endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("--browser-cdp %q: give http://HOST:PORT or ws://HOST:PORT/devtools/browser/ID", endpoint)
	}
	switch u.Scheme {
	case "ws", "wss":
		return endpoint, nil
	case "http", "https":
	default:
		return "", fmt.Errorf("--browser-cdp %q: give http://HOST:PORT or ws://HOST:PORT/devtools/browser/ID", endpoint)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(endpoint, "/")+"/json/version", nil)
	if err != nil {
		return "", err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("read %s/json/version: %w (is the browser started with --remote-debugging-port?)", endpoint, err)
	}
	defer res.Body.Close()
	var v struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, res.Body, 1<<20)).Decode(&v); err != nil || v.WebSocketDebuggerURL == "" {
		return "", fmt.Errorf("%s/json/version names no webSocketDebuggerUrl (status %d): not a Chromium debugging endpoint?", endpoint, res.StatusCode)
	}
	return v.WebSocketDebuggerURL, nil
}

// Pages lists the joined pages, by target id.
func (b *Browser) Pages() []Page {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Page, 0, len(b.pages))
	for _, p := range b.pages {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TargetID < out[j].TargetID })
	return out
}

// Changed is closed at the next change of Pages; take it before Pages.
func (b *Browser) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}

// Done is closed when the connection to the browser ended.
func (b *Browser) Done() <-chan struct{} { return b.done }

// Reason says why the connection ended.
func (b *Browser) Reason() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reason
}

// Close ends the connection; every session is told it is gone.
func (b *Browser) Close() { b.conn.Close(websocket.StatusNormalClosure, "inspector-worker stopped") }

// call sends one of the worker's own commands on the root session (or on
// one of its own guard sessions) and waits for its answer.
func (b *Browser) call(ctx context.Context, sessionID, method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	ch := make(chan callResult, 1)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errors.New("the browser connection ended: " + b.reason)
	}
	// The worker's ids are negative: the root session and the guard
	// sessions are the worker's alone, so they only need to be unique
	// among themselves.
	b.nextID--
	id := b.nextID
	b.calls[id] = ch
	b.mu.Unlock()
	req := map[string]any{"id": id, "method": method, "params": params}
	if sessionID != "" {
		req["sessionId"] = sessionID
	}
	msg, _ := json.Marshal(req)
	if err := b.conn.Write(ctx, websocket.MessageText, msg); err != nil {
		b.mu.Lock()
		delete(b.calls, id)
		b.mu.Unlock()
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.calls, id)
		b.mu.Unlock()
		return nil, fmt.Errorf("%s: no answer from the browser in %v", method, callTimeout)
	case <-b.done:
		return nil, errors.New("the browser connection ended: " + b.Reason())
	}
}

// readLoop reads the browser until the connection ends, then tells every
// session. It never blocks on a window: Session.deliver is a bounded,
// non-blocking queue (the window's own; its overflow closes that window).
func (b *Browser) readLoop() {
	var err error
	for {
		var msg []byte
		_, msg, err = b.conn.Read(context.Background())
		if err != nil {
			break
		}
		var env envelope
		if json.Unmarshal(msg, &env) != nil {
			b.logf("browser: dropped an unparseable message (%d bytes)", len(msg))
			continue
		}
		if env.SessionID != "" && !b.isGuard(env.SessionID) {
			b.fromSession(env, msg)
			continue
		}
		b.fromRoot(env)
	}
	why := "the browser closed its debugging connection"
	if s := websocket.CloseStatus(err); s == -1 {
		why = "the browser went away (" + err.Error() + ")"
	}
	b.mu.Lock()
	b.closed, b.reason = true, why
	calls := b.calls
	b.calls = map[int64]chan callResult{}
	sessions := make([]*Session, 0, len(b.byRoot))
	for _, s := range b.byRoot {
		sessions = append(sessions, s)
	}
	b.byRoot, b.subs = map[string]*Session{}, map[string]*Session{}
	b.pages = map[string]Page{}
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
	close(b.done)
	for _, ch := range calls {
		ch <- callResult{err: errors.New(why)}
	}
	for _, s := range sessions {
		s.end(why)
	}
}

// fromSession relays a message of a page session to the window that owns
// it, following the nested sessions (the page's own iframes and workers,
// auto-attached in it) so they reach the same window.
func (b *Browser) fromSession(env envelope, msg []byte) {
	b.mu.Lock()
	s := b.subs[env.SessionID]
	if s != nil && env.ID == nil {
		var p struct {
			SessionID string `json:"sessionId"`
		}
		switch env.Method {
		case "Target.attachedToTarget":
			if json.Unmarshal(env.Params, &p) == nil && p.SessionID != "" {
				b.subs[p.SessionID] = s
			}
		case "Target.detachedFromTarget":
			if json.Unmarshal(env.Params, &p) == nil {
				delete(b.subs, p.SessionID)
			}
		}
	}
	b.mu.Unlock()
	if s == nil {
		return // a session detached meanwhile
	}
	id := int64(0)
	if env.ID != nil {
		id = *env.ID
	}
	s.deliver(msg, env.SessionID, env.ID != nil, id)
}

// fromRoot handles the worker's own answers and the target events.
func (b *Browser) fromRoot(env envelope) {
	if env.ID != nil {
		b.mu.Lock()
		ch := b.calls[*env.ID]
		delete(b.calls, *env.ID)
		b.mu.Unlock()
		if ch != nil {
			r := callResult{result: env.Result}
			if env.Error != nil {
				r.err = errors.New(env.Error.Message)
			}
			ch <- r
		}
		return
	}
	if env.SessionID != "" {
		return // an event of a guard session: the worker enables nothing there
	}
	switch env.Method {
	case "Target.targetCreated", "Target.targetInfoChanged":
		var p struct {
			TargetInfo targetInfo `json:"targetInfo"`
		}
		if json.Unmarshal(env.Params, &p) == nil {
			b.noteTarget(p.TargetInfo)
		}
	case "Target.targetDestroyed":
		var p struct {
			TargetID string `json:"targetId"`
		}
		if json.Unmarshal(env.Params, &p) == nil {
			b.dropPage(p.TargetID)
		}
	case "Target.attachedToTarget":
		b.noteAttached(env.Params)
	case "Target.detachedFromTarget":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(env.Params, &p) == nil {
			b.mu.Lock()
			s := b.byRoot[p.SessionID]
			if g := b.guards[p.SessionID]; g != nil {
				delete(b.guards, p.SessionID)
				delete(b.guarded, g.targetID)
			}
			b.mu.Unlock()
			if s != nil {
				s.end("the page was closed")
			}
		}
	}
}

// joins says whether a target is one of the app's pages.
func (b *Browser) joins(t targetInfo) bool {
	if t.Type != "page" || !b.match.MatchString(t.URL) {
		return false
	}
	u, err := url.Parse(t.URL)
	return err == nil && u.Host != b.self
}

// noteTarget adds, updates or drops a page as its target changes. A page
// that navigates keeps its target; one that navigates away from the app
// leaves the list (windows attached to it stay attached, as in Chrome).
func (b *Browser) noteTarget(t targetInfo) {
	if !b.joins(t) {
		b.dropPage(t.TargetID)
		return
	}
	p := Page{TargetID: t.TargetID, URL: t.URL, Title: t.Title}
	b.mu.Lock()
	defer b.mu.Unlock()
	old, had := b.pages[t.TargetID]
	b.pages[t.TargetID] = p
	if !had || old != p {
		close(b.changed)
		b.changed = make(chan struct{})
	}
}

func (b *Browser) dropPage(targetID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.pages[targetID]; ok {
		delete(b.pages, targetID)
		close(b.changed)
		b.changed = make(chan struct{})
	}
}
