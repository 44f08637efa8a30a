package cdpserver

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

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
	"github.com/inspector-worker/inspector-worker/sourceproto/sourceprototest"
)

// Pages over a real ws /client: the worker's own carrier
// (carrier.ClientHandler) mounted on the test worker, and pages played by
// sourceprototest's producer on a real WebSocket, as client.js speaks the
// protocol (docs/protocol.md). A hostile page is one that sends what
// client.js never would, as fast as the socket takes it.

// socketWorker is a worker whose pages connect over ws /client.
type socketWorker struct {
	*worker
	endpoint string
	token    string
}

func startSocketWorker(t *testing.T, opts Options) *socketWorker {
	t.Helper()
	w := startWorker(t, hostScript, opts)
	reg := sourceproto.NewRegistry(w.srv.ClientConsumer())
	w.srv.SetSourceRegistry(reg)
	token, err := sourceproto.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	clients, err := carrier.NewClientHandler(carrier.ClientOptions{Registry: reg, Token: token, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	w.srv.Handle("GET /client", clients)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = clients.Shutdown(ctx)
	})
	return &socketWorker{worker: w, endpoint: "ws://" + w.srv.Addr() + "/client", token: token.Reveal()}
}

// wsPage is one page connection. Its read loop answers runtime commands
// with answer (nil: never) and records the windows' console sessions and
// the acks; the test goroutine sends items.
type wsPage struct {
	t *testing.T
	c *websocket.Conn

	wmu sync.Mutex                // serializes p and writes
	p   *sourceprototest.Producer // Guarded by wmu.

	answer func(*sourceproto.RuntimeCommand) *sourceproto.RuntimeResult
	// closing: the test is ending the connection; writes may fail then.
	closing atomic.Bool

	mu       sync.Mutex
	cond     *sync.Cond
	sessions []string // Guarded by mu: console.enable sessions, in order.
	acked    uint64   // Guarded by mu: the highest sequence number acked.
	ended    bool     // Guarded by mu: the connection is gone.
	done     chan struct{}
}

func (sw *socketWorker) dialPage(t *testing.T, id, title string, caps sourceproto.Capability,
	answer func(*sourceproto.RuntimeCommand) *sourceproto.RuntimeResult) *wsPage {
	t.Helper()
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, sw.endpoint, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://127.0.0.1:1"}}})
	if err != nil {
		t.Fatalf("dial %s: %v", sw.endpoint, err)
	}
	c.SetReadLimit(sourceproto.MaxFrameBytes)
	pg := &wsPage{t: t, c: c, p: sourceprototest.New(id, sw.token), answer: answer, done: make(chan struct{})}
	pg.cond = sync.NewCond(&pg.mu)
	url := "http://127.0.0.1:1/" + id
	hello, err := sourceproto.Marshal(sourceproto.Header{Source: id}, &sourceproto.Hello{
		Role: sourceproto.RoleClient, Token: sourceproto.Secret(sw.token), Capabilities: caps,
		Topics: sourceproto.TopicConsole | sourceproto.TopicPage | sourceproto.TopicScript,
		Agent:  sourceproto.Agent{Name: "wspage", Version: "1"},
		Page:   &sourceproto.PageInfo{URL: url, Title: title},
	})
	if err != nil {
		t.Fatal(err)
	}
	pg.write(hello)
	_, welcome, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("page %s: no welcome: %v", id, err)
	}
	pg.p.Welcomed(t, welcome)
	pg.wmu.Lock()
	initial := pg.p.Replace(t, sourceproto.ReplaceInitial, sourceproto.Item{Topic: sourceproto.TopicPage, Page: &sourceproto.PageInfo{URL: url, Title: title}})
	pg.wmu.Unlock()
	pg.write(initial)
	go pg.readLoop()
	t.Cleanup(func() { pg.closing.Store(true); c.CloseNow(); <-pg.done })
	return pg
}

func (pg *wsPage) write(frame []byte) {
	if err := pg.c.Write(context.Background(), websocket.MessageText, frame); err != nil && !pg.closing.Load() {
		pg.t.Errorf("page %s: write: %v", pg.p.ID, err)
	}
}

func (pg *wsPage) readLoop() {
	defer close(pg.done)
	defer func() {
		pg.mu.Lock()
		pg.ended = true
		pg.cond.Broadcast()
		pg.mu.Unlock()
	}()
	for {
		_, raw, err := pg.c.Read(context.Background())
		if err != nil {
			return
		}
		f, err := sourceproto.Decode(raw)
		if err != nil {
			pg.t.Errorf("page %s: the worker sent an invalid frame: %v", pg.p.ID, err)
			return
		}
		switch b := f.Body.(type) {
		case *sourceproto.RuntimeCommand:
			if pg.answer == nil {
				continue
			}
			if res := pg.answer(b); res != nil {
				pg.wmu.Lock()
				out, err := sourceproto.Marshal(sourceproto.Header{Source: pg.p.ID, Gen: pg.p.Gen()}, res)
				pg.wmu.Unlock()
				if err != nil {
					pg.t.Errorf("page %s: marshal result: %v", pg.p.ID, err)
					return
				}
				pg.write(out)
			}
		case *sourceproto.ConsoleEnable:
			pg.mu.Lock()
			pg.sessions = append(pg.sessions, b.Session)
			pg.cond.Broadcast()
			pg.mu.Unlock()
		case *sourceproto.Ack:
			pg.mu.Lock()
			pg.acked = max(pg.acked, f.Seq)
			pg.cond.Broadcast()
			pg.mu.Unlock()
		}
	}
}

// send sends items as one append and returns its last sequence number.
func (pg *wsPage) send(items ...sourceproto.Item) uint64 {
	pg.wmu.Lock()
	frame := pg.p.Append(pg.t, items...)
	f, _ := sourceproto.DecodeEnvelope(frame)
	pg.wmu.Unlock()
	pg.write(frame)
	return f.Seq + uint64(len(items)) - 1
}

// dropNext makes the page report n lost items with its next append (a
// gap the worker announces).
func (pg *wsPage) dropNext(n uint64) {
	pg.wmu.Lock()
	pg.p.Drop(n)
	pg.wmu.Unlock()
}

// waitAcked waits until the worker acked seq: it has taken every item up
// to it.
func (pg *wsPage) waitAcked(seq uint64) {
	pg.t.Helper()
	if err := pg.awaitAcked(seq, cdptest.Timeout); err != nil {
		pg.t.Fatal(err)
	}
}

// awaitAcked is waitAcked for any goroutine: it returns why it gave up.
func (pg *wsPage) awaitAcked(seq uint64, limit time.Duration) error {
	timer := time.AfterFunc(limit, func() { pg.mu.Lock(); pg.cond.Broadcast(); pg.mu.Unlock() })
	defer timer.Stop()
	start := time.Now()
	pg.mu.Lock()
	defer pg.mu.Unlock()
	for pg.acked < seq {
		if pg.ended || time.Since(start) >= limit {
			return fmt.Errorf("page %s: the worker acked %d of %d items within %v (connection ended: %v)", pg.p.ID, pg.acked, seq, limit, pg.ended)
		}
		pg.cond.Wait()
	}
	return nil
}

// ackedSeq is the highest sequence number the worker acked so far.
func (pg *wsPage) ackedSeq() uint64 {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	return pg.acked
}

// waitSession waits for the console session of the n-th window (from 1).
func (pg *wsPage) waitSession(n int) string {
	pg.t.Helper()
	timer := time.AfterFunc(cdptest.Timeout, func() { pg.mu.Lock(); pg.cond.Broadcast(); pg.mu.Unlock() })
	defer timer.Stop()
	start := time.Now()
	pg.mu.Lock()
	defer pg.mu.Unlock()
	for len(pg.sessions) < n {
		if pg.ended || time.Since(start) >= cdptest.Timeout {
			pg.t.Fatalf("page %s: got %d console.enable, want %d", pg.p.ID, len(pg.sessions), n)
		}
		pg.cond.Wait()
	}
	return pg.sessions[n-1]
}

// answerNumber answers every evaluate with 42 and nothing else.
func answerNumber(c *sourceproto.RuntimeCommand) *sourceproto.RuntimeResult {
	r := &sourceproto.RuntimeResult{Session: c.Session, ID: c.ID, Method: c.Method}
	switch c.Method {
	case sourceproto.MethodEvaluate:
		r.Evaluate = &sourceproto.EvaluateResult{Result: sourceproto.RemoteObject{Type: sourceproto.TypeNumber, Value: sourceproto.RawJSON("42")}}
	case sourceproto.MethodReleaseObject:
		r.ReleaseObject = &sourceproto.ReleaseObjectResult{}
	case sourceproto.MethodReleaseObjectGroup:
		r.ReleaseObjectGroup = &sourceproto.ReleaseObjectGroupResult{}
	default:
		r.Error = &sourceproto.TransportError{Code: sourceproto.ErrCodeUnsupported, Message: "not in this test page"}
	}
	return r
}

// pageContext waits for the window's execution context of the page titled
// title.
func pageContext(t *testing.T, c *cdptest.Client, title string) ctxEvent {
	t.Helper()
	m := c.ExpectAnyEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"name":"`+title+`"`)
	})
	var ev ctxEvent
	if err := json.Unmarshal(m.Params, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// slowWindow is a DevTools window on a bare socket with a small receive
// buffer (smallWindowClient): when it stops reading, what the worker has
// for it stays in the worker's queue, under its policy.
type slowWindow struct {
	t *testing.T
	c *websocket.Conn
}

func dialSlowWindow(t *testing.T, url string) *slowWindow {
	t.Helper()
	c, _, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{HTTPClient: smallWindowClient()})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &slowWindow{t, c}
}

func (w *slowWindow) send(s string) {
	w.t.Helper()
	if err := w.c.Write(context.Background(), websocket.MessageText, []byte(s)); err != nil {
		w.t.Fatal(err)
	}
}

// read returns the next message, or an error after d of silence or on close.
func (w *slowWindow) read(d time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, msg, err := w.c.Read(ctx)
	return msg, err
}

func (w *slowWindow) untilAnswer(id int) {
	w.t.Helper()
	waitForAnswer(w.t, w.c, id)
}
