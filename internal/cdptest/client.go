// Package cdptest is a scripted CDP client for tests: it dials a DevTools
// WebSocket endpoint, sends requests, and waits for answers and events with
// Expect… helpers that fail the test with what was seen instead.
package cdptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Timeout bounds every wait. It is a hang detector, not a speed assertion:
// generous because CI machines are shared and slow.
const Timeout = 60 * time.Second

// Msg is one received CDP message.
type Msg struct {
	ID     *int64          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	// SessionID is the flat child session the message belongs to ("" for
	// the window's own target).
	SessionID string          `json:"sessionId"`
	Result    json.RawMessage `json:"result"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Raw []byte `json:"-"`
}

// Client is one scripted DevTools connection.
type Client struct {
	t    testing.TB
	name string
	c    *websocket.Conn

	timeout atomic.Int64 // a time.Duration; 0 = Timeout (SetTimeout)

	mu     sync.Mutex
	cond   *sync.Cond
	msgs   []Msg // Guarded by mu: everything received, in order.
	cursor int   // Guarded by mu: events before it were consumed by ExpectEvent.
	err    error // Guarded by mu: why the read loop ended.
	closed bool  // Guarded by mu.
	nextID int64 // Guarded by mu.
}

// DialOptions tune Dial.
type DialOptions struct {
	Header http.Header
	Host   string // Host header; default from the URL
}

// Dial connects to a ws:// URL; the connection is closed at test end.
func Dial(t testing.TB, name, url string, opts *DialOptions) *Client {
	t.Helper()
	c, err := TryDial(name, url, opts)
	if err != nil {
		t.Fatalf("%s: dial %s: %v", name, url, err)
	}
	c.t = t
	t.Cleanup(func() { c.c.CloseNow() })
	return c
}

// TryDial is Dial without a test: it returns the error.
func TryDial(name, url string, opts *DialOptions) (*Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	var dopts websocket.DialOptions
	if opts != nil {
		dopts.HTTPHeader = opts.Header
		dopts.Host = opts.Host
	}
	conn, resp, err := websocket.Dial(ctx, url, &dopts)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("%w (HTTP %d)", err, resp.StatusCode)
		}
		return nil, err
	}
	conn.SetReadLimit(512 << 20)
	cl := &Client{name: name, c: conn}
	cl.cond = sync.NewCond(&cl.mu)
	go cl.readLoop()
	return cl, nil
}

func (cl *Client) readLoop() {
	for {
		_, b, err := cl.c.Read(context.Background())
		cl.mu.Lock()
		if err != nil {
			cl.err, cl.closed = err, true
			cl.cond.Broadcast()
			cl.mu.Unlock()
			return
		}
		var m Msg
		if jerr := json.Unmarshal(b, &m); jerr != nil {
			m.Method = "<unparseable>"
		}
		m.Raw = b
		cl.msgs = append(cl.msgs, m)
		cl.cond.Broadcast()
		cl.mu.Unlock()
	}
}

// Conn is the underlying connection.
func (cl *Client) Conn() *websocket.Conn { return cl.c }

// SendRaw sends bytes as they are.
func (cl *Client) SendRaw(b []byte) {
	cl.t.Helper()
	if err := cl.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		cl.t.Fatalf("%s: send: %v", cl.name, err)
	}
}

// Send sends a request and returns its id.
func (cl *Client) Send(method string, params any) int64 {
	cl.t.Helper()
	return cl.SendTo("", method, params)
}

// SendTo sends a request in the flat child session sessionID ("" for the
// window's own target) and returns its id. Ids are unique across sessions,
// as the DevTools frontend's are.
func (cl *Client) SendTo(sessionID, method string, params any) int64 {
	cl.t.Helper()
	cl.mu.Lock()
	cl.nextID++
	id := cl.nextID
	cl.mu.Unlock()
	req := map[string]any{"id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	if sessionID != "" {
		req["sessionId"] = sessionID
	}
	b, err := json.Marshal(req)
	if err != nil {
		cl.t.Fatalf("%s: marshal %s: %v", cl.name, method, err)
	}
	cl.SendRaw(b)
	return id
}

// SetTimeout replaces Timeout for this client's waits: for a conversation
// that moves tens of MB, which under -race on a loaded machine can take
// minutes (still a hang detector).
func (cl *Client) SetTimeout(d time.Duration) { cl.timeout.Store(int64(d)) }

func (cl *Client) wait() time.Duration {
	if d := time.Duration(cl.timeout.Load()); d > 0 {
		return d
	}
	return Timeout
}

// Call sends a request and waits for its answer (result or error).
func (cl *Client) Call(method string, params any) Msg {
	cl.t.Helper()
	return cl.ExpectResponse(cl.Send(method, params))
}

// CallIn is Call in the flat child session sessionID.
func (cl *Client) CallIn(sessionID, method string, params any) Msg {
	cl.t.Helper()
	return cl.ExpectResponse(cl.SendTo(sessionID, method, params))
}

// MustCall is Call that fails the test on an error answer.
func (cl *Client) MustCall(method string, params any) Msg {
	cl.t.Helper()
	m := cl.Call(method, params)
	if m.Error != nil {
		cl.t.Fatalf("%s: %s answered error %d %q", cl.name, method, m.Error.Code, m.Error.Message)
	}
	return m
}

// ExpectResponse waits for the answer to id.
func (cl *Client) ExpectResponse(id int64) Msg {
	cl.t.Helper()
	m, ok := cl.waitFor(func(i int, m Msg) bool { return m.ID != nil && *m.ID == id }, false)
	if !ok {
		cl.t.Fatalf("%s: no answer to request %d: %s", cl.name, id, cl.state())
	}
	return m
}

// ExpectEvent waits for the next event named method (after the last one an
// ExpectEvent consumed) that satisfies match (nil = any).
func (cl *Client) ExpectEvent(method string, match func(Msg) bool) Msg {
	cl.t.Helper()
	m, ok := cl.waitFor(func(i int, m Msg) bool {
		return m.Method == method && m.ID == nil && (match == nil || match(m))
	}, true)
	if !ok {
		cl.t.Fatalf("%s: no %s event: %s", cl.name, method, cl.state())
	}
	return m
}

// Expect waits for the next message of any kind (after the last one an
// Expect or ExpectEvent consumed) that satisfies match.
func (cl *Client) Expect(what string, match func(Msg) bool) Msg {
	cl.t.Helper()
	m, ok := cl.waitFor(func(i int, m Msg) bool { return match(m) }, true)
	if !ok {
		cl.t.Fatalf("%s: no %s: %s", cl.name, what, cl.state())
	}
	return m
}

// ExpectClosed waits for the connection to end and returns the close error.
func (cl *Client) ExpectClosed() error {
	cl.t.Helper()
	deadline := time.AfterFunc(cl.wait(), func() { cl.mu.Lock(); cl.cond.Broadcast(); cl.mu.Unlock() })
	defer deadline.Stop()
	start := time.Now()
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for !cl.closed {
		if time.Since(start) > cl.wait() {
			cl.t.Fatalf("%s: connection still open after %v", cl.name, cl.wait())
		}
		cl.cond.Wait()
	}
	return cl.err
}

// ExpectAnyEvent waits until some event named method that satisfies match
// has been received, wherever it is among the received messages: for an
// event whose order against the others is not fixed (a replayed or a live
// one, depending on timing), which ExpectEvent's cursor could have passed.
func (cl *Client) ExpectAnyEvent(method string, match func(Msg) bool) Msg {
	cl.t.Helper()
	m, ok := cl.waitFor(func(_ int, m Msg) bool {
		return m.Method == method && m.ID == nil && (match == nil || match(m))
	}, false)
	if !ok {
		cl.t.Fatalf("%s: no %s event at all: %s", cl.name, method, cl.state())
	}
	return m
}

// Events returns every received event named method, in order.
func (cl *Client) Events(method string) []Msg {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	var out []Msg
	for _, m := range cl.msgs {
		if m.Method == method && m.ID == nil {
			out = append(out, m)
		}
	}
	return out
}

// All returns every message received so far.
func (cl *Client) All() []Msg {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return append([]Msg(nil), cl.msgs...)
}

func (cl *Client) waitFor(match func(int, Msg) bool, consume bool) (Msg, bool) {
	deadline := time.AfterFunc(cl.wait(), func() { cl.mu.Lock(); cl.cond.Broadcast(); cl.mu.Unlock() })
	defer deadline.Stop()
	start := time.Now()
	cl.mu.Lock()
	defer cl.mu.Unlock()
	from := 0
	if consume {
		from = cl.cursor
	}
	for {
		for i := from; i < len(cl.msgs); i++ {
			if match(i, cl.msgs[i]) {
				if consume {
					cl.cursor = i + 1
				}
				return cl.msgs[i], true
			}
		}
		from = len(cl.msgs)
		if cl.closed || time.Since(start) > cl.wait() {
			return Msg{}, false
		}
		cl.cond.Wait()
	}
}

func (cl *Client) state() string {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%d messages received", len(cl.msgs))
	if cl.closed {
		fmt.Fprintf(&b, ", connection closed: %v", cl.err)
	}
	for i := max(0, len(cl.msgs)-5); i < len(cl.msgs); i++ {
		raw := cl.msgs[i].Raw
		if len(raw) > 300 {
			raw = raw[:300]
		}
		fmt.Fprintf(&b, "\n  %s", raw)
	}
	return b.String()
}

// Forget drops every message received so far, for long conversations
// (thousands of requests): waits scan what was received from the start.
func (cl *Client) Forget() {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.msgs, cl.cursor = nil, 0
}
