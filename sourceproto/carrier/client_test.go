package carrier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/sourceprototest"
)

const pageOrigin = "http://127.0.0.1:5173"

// clientServer is a ClientHandler on a real loopback listener.
type clientServer struct {
	h     *ClientHandler
	srv   *httptest.Server
	reg   *sourceproto.Registry
	rec   *recorder
	tok   sourceproto.Token
	wsURL string
}

func newClientServer(t *testing.T, mod func(*ClientOptions)) *clientServer {
	t.Helper()
	tok, err := sourceproto.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	o := ClientOptions{Registry: sourceproto.NewRegistry(rec), Token: tok, ClientJS: []byte("export {};\n"), Logf: t.Logf}
	if mod != nil {
		mod(&o)
	}
	h, err := NewClientHandler(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		if err := h.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		srv.Close()
	})
	return &clientServer{h: h, srv: srv, reg: o.Registry, rec: rec, tok: tok, wsURL: "ws" + strings.TrimPrefix(srv.URL, "http") + "/client"}
}

// page is one scripted client connection.
type page struct {
	t  *testing.T
	ws *websocket.Conn
	p  *sourceprototest.Producer
}

func (s *clientServer) dial(ctx context.Context, t *testing.T, id, token string) *page {
	t.Helper()
	ws, resp, err := websocket.Dial(ctx, s.wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {pageOrigin}}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	ws.SetReadLimit(-1) // the worker's frames are the worker's business here
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &page{t: t, ws: ws, p: sourceprototest.New(id, token)}
}

// open dials, says hello and sends the initial replace.
func (s *clientServer) open(ctx context.Context, t *testing.T, id string, caps sourceproto.Capability) *page {
	t.Helper()
	pg := s.dial(ctx, t, id, s.tok.Reveal())
	pg.send(ctx, pg.p.Hello(t, caps, sourceproto.TopicConsole))
	pg.p.Welcomed(t, pg.recv(ctx))
	pg.send(ctx, pg.p.Replace(t, sourceproto.ReplaceInitial))
	sourceprototest.ExpectAck(t, pg.recv(ctx), 0)
	return pg
}

func (pg *page) send(ctx context.Context, frame []byte) {
	pg.t.Helper()
	if err := pg.ws.Write(ctx, websocket.MessageText, frame); err != nil {
		pg.t.Fatalf("page %s write: %v", pg.p.ID, err)
	}
}

func (pg *page) recv(ctx context.Context) []byte {
	pg.t.Helper()
	typ, b, err := pg.ws.Read(ctx)
	if err != nil || typ != websocket.MessageText {
		pg.t.Fatalf("page %s read: %v %v", pg.p.ID, typ, err)
	}
	return b
}

// expectClosed expects the worker's close as the next message and checks
// the status and that the reason contains want.
func (pg *page) expectClosed(ctx context.Context, status websocket.StatusCode, want string) {
	pg.t.Helper()
	_, b, err := pg.ws.Read(ctx)
	if err == nil {
		pg.t.Fatalf("page %s: want close %d, got frame %s", pg.p.ID, status, b)
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != status || !strings.Contains(ce.Reason, want) {
		pg.t.Fatalf("page %s: got %v, want close %d %q", pg.p.ID, err, status, want)
	}
}

// handshake sends a WebSocket upgrade request with the given Origin
// values and returns the status and body.
func handshake(t *testing.T, url string, origins ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	for _, o := range origins {
		req.Header.Add("Origin", o)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return resp.StatusCode, ""
	}
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestClientOrigin(t *testing.T) {
	s := newClientServer(t, nil)
	url := s.srv.URL + "/client"
	tests := []struct {
		origins []string
		status  int
		reason  string
	}{
		{nil, http.StatusForbidden, "missing Origin"},
		{[]string{"http://evil.example"}, http.StatusForbidden, "origin not allowed"},
		{[]string{"http://127.0.0.1.evil.example:5173"}, http.StatusForbidden, "origin not allowed"},
		{[]string{"null"}, http.StatusForbidden, "not a serialized"},
		{[]string{pageOrigin, pageOrigin}, http.StatusForbidden, "more than one"},
		{[]string{pageOrigin}, http.StatusSwitchingProtocols, ""},
		{[]string{"https://localhost:8443"}, http.StatusSwitchingProtocols, ""},
	}
	for _, tt := range tests {
		status, body := handshake(t, url, tt.origins...)
		if status != tt.status || !strings.Contains(body, tt.reason) {
			t.Errorf("Origin %q: %d %q, want %d %q", tt.origins, status, body, tt.status, tt.reason)
		}
	}
	custom := newClientServer(t, func(o *ClientOptions) { o.AllowedOrigins = []string{"http://app.test:8080"} })
	if status, _ := handshake(t, custom.srv.URL+"/client", pageOrigin); status != http.StatusForbidden {
		t.Errorf("custom allow-list let the default origin in: %d", status)
	}
	if status, _ := handshake(t, custom.srv.URL+"/client", "http://app.test:8080"); status != http.StatusSwitchingProtocols {
		t.Errorf("custom allow-list refused its origin: %d", status)
	}
	if _, err := NewClientHandler(ClientOptions{Registry: s.reg, AllowedOrigins: []string{"localhost"}}); err == nil {
		t.Error("a bad pattern was accepted")
	}
}

func TestClientJS(t *testing.T) {
	s := newClientServer(t, nil)
	resp, err := http.Get(s.srv.URL + "/client.js")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	h := resp.Header
	if resp.StatusCode != 200 || string(body) != "export {};\n" || h.Get("Content-Type") != "text/javascript; charset=utf-8" ||
		h.Get("Cache-Control") != "no-store" || h.Get("Etag") != "" || h.Get("Last-Modified") != "" {
		t.Errorf("GET /client.js: %d %v %q", resp.StatusCode, h, body)
	}
	for _, c := range []struct{ method, path string }{{"POST", "/client.js"}, {"POST", "/client"}, {"GET", "/other"}} {
		req, _ := http.NewRequest(c.method, s.srv.URL+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("%s %s: %d", c.method, c.path, resp.StatusCode)
		}
	}
	none := newClientServer(t, func(o *ClientOptions) { o.ClientJS = nil })
	resp, err = http.Get(none.srv.URL + "/client.js")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("no bundle: %d", resp.StatusCode)
	}
}

// TestClientBadHello: the registry's reject, then close 1008 with a
// reason that names the failure but never the token.
func TestClientBadHello(t *testing.T) {
	ctx := watchdog(t)
	s := newClientServer(t, nil)
	wrong := s.dial(ctx, t, "page-1", "not-the-token")
	wrong.send(ctx, wrong.p.Hello(t, 0, sourceproto.TopicConsole))
	sourceprototest.ExpectReject(t, wrong.recv(ctx), sourceproto.RejectUnauthorized)
	wrong.expectClosed(ctx, websocket.StatusPolicyViolation, "bad token")

	notHello := s.dial(ctx, t, "page-2", s.tok.Reveal())
	notHello.send(ctx, []byte(`{"v":1,"type":"close","source":"page-2","gen":1,"body":{"code":"normal"}}`))
	sourceprototest.ExpectReject(t, notHello.recv(ctx), sourceproto.RejectUnexpectedFrame)
	notHello.expectClosed(ctx, websocket.StatusPolicyViolation, "hello refused: unexpected-frame")

	if evs := s.rec.snapshot(); len(evs) != 0 {
		t.Errorf("consumer saw %s", dump(evs))
	}
}

func TestClientNoHello(t *testing.T) {
	ctx := watchdog(t)
	s := newClientServer(t, nil)
	s.h.helloTimeout = 1 // fires at once; no test waits on the clock
	silent := s.dial(ctx, t, "page-1", "")
	silent.expectClosed(ctx, websocket.StatusPolicyViolation, "no hello")
}

// TestClientTenThousandInOrder: console items over a real WebSocket
// reach the consumer complete and in order, acks flowing back
// concurrently as a page would read them.
func TestClientTenThousandInOrder(t *testing.T) {
	ctx := watchdog(t)
	s := newClientServer(t, nil)
	pg := s.open(ctx, t, "page-1", 0)
	const total = 10_000
	acked := make(chan error, 1)
	go func() { acked <- readAcks(ctx, pg.ws, total, nil) }()
	for sent := 0; sent < total; {
		n := min(1+sent%97, total-sent) // batch sizes 1..97
		items := make([]sourceproto.Item, n)
		for i := range items {
			items[i] = sourceprototest.Log(fmt.Sprint(sent + i))
		}
		pg.send(ctx, pg.p.Append(t, items...))
		sent += n
	}
	if err := <-acked; err != nil {
		t.Fatal(err)
	}
	var logs []string
	for _, e := range of(s.rec.snapshot(), "page-1") {
		logs = append(logs, e.Logs...)
	}
	if len(logs) != total {
		t.Fatalf("consumer got %d items, want %d", len(logs), total)
	}
	for i, l := range logs {
		if l != fmt.Sprint(i) {
			t.Fatalf("item %d is %q", i, l)
		}
	}
}

// readAcks reads acks until one covers last, checking they only grow;
// acked, when not nil, hears how many more items each ack covers.
func readAcks(ctx context.Context, ws *websocket.Conn, last uint64, acked func(n uint64)) error {
	var prev uint64
	for prev < last {
		_, b, err := ws.Read(ctx)
		if err != nil {
			return fmt.Errorf("after ack %d: %w", prev, err)
		}
		f, err := sourceproto.Decode(b)
		if err != nil || f.Type != sourceproto.FrameAck || f.Seq <= prev {
			return fmt.Errorf("after ack %d: got %s (%v)", prev, b, err)
		}
		if acked != nil {
			acked(f.Seq - prev)
		}
		prev = f.Seq
	}
	return nil
}

// streamWindowed sends total one-item appends from pg, as a real page does:
// at most window of them unacked (one that never waits for its acks can
// fill the worker's queue of them, 1024 frames, on a loaded machine, and is
// rightly cut off as "client too slow"). It returns how many acks covered
// them and readAcks' error. It calls no t.Fatal: it may run in a goroutine.
func streamWindowed(ctx context.Context, t *testing.T, pg *page, total, window int) (int, error) {
	slots := make(chan struct{}, window)
	acks := 0
	acked := make(chan error, 1)
	go func() {
		acked <- readAcks(ctx, pg.ws, uint64(total), func(n uint64) {
			acks++
			for range n {
				<-slots
			}
		})
	}()
send:
	for i := range total {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			break send // readAcks ends with the context
		}
		if err := pg.ws.Write(ctx, websocket.MessageText, pg.p.Append(t, sourceprototest.Log(fmt.Sprint(i)))); err != nil {
			break // readAcks reports it
		}
	}
	err := <-acked // acks is the reader's until then
	return acks, err
}

// TestClientIsolation: misbehaving pages are refused one by one while a
// healthy page keeps streaming, unaffected, at the same time.
func TestClientIsolation(t *testing.T) {
	ctx := watchdog(t)
	s := newClientServer(t, nil)
	good := s.open(ctx, t, "good", 0)
	const total = 3000
	acked := make(chan error, 1)
	go func() { // the healthy page, concurrently with the bad ones
		_, err := streamWindowed(ctx, t, good, total, 64)
		acked <- err
	}()

	spammer := s.open(ctx, t, "spammer", 0)
	for i := 0; i < sourceproto.MaxConsecutiveRejects; i++ {
		spammer.send(ctx, []byte(`{"v":1,"type":"append"}`))
		sourceprototest.ExpectReject(t, spammer.recv(ctx), sourceproto.RejectMalformed)
	}
	sourceprototest.Expect(t, spammer.recv(ctx), sourceproto.FrameClose)
	spammer.expectClosed(ctx, websocket.StatusPolicyViolation, "too many rejected frames")

	binary := s.open(ctx, t, "binary", 0)
	if err := binary.ws.Write(ctx, websocket.MessageBinary, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	binary.expectClosed(ctx, websocket.StatusUnsupportedData, "text")

	huge := s.open(ctx, t, "huge", 0)
	_ = huge.ws.Write(ctx, websocket.MessageText, make([]byte, sourceproto.MaxFrameBytes+1))
	huge.expectClosed(ctx, websocket.StatusMessageTooBig, "")

	thief := s.dial(ctx, t, "good", "guessed") // a wrong token cannot take over a live id
	thief.send(ctx, thief.p.Hello(t, 0, sourceproto.TopicConsole))
	sourceprototest.ExpectReject(t, thief.recv(ctx), sourceproto.RejectUnauthorized)
	thief.expectClosed(ctx, websocket.StatusPolicyViolation, "bad token")

	if err := <-acked; err != nil {
		t.Fatal(err)
	}
	evs := s.rec.snapshot()
	var logs []string
	for _, e := range of(evs, "good") {
		if e.Kind == "closed" {
			t.Fatalf("the healthy page was closed: %s", dump(of(evs, "good")))
		}
		logs = append(logs, e.Logs...)
	}
	if len(logs) != total || logs[total-1] != fmt.Sprint(total-1) {
		t.Errorf("healthy page delivered %d items", len(logs))
	}
	for _, id := range []string{"spammer", "binary", "huge"} {
		s.rec.waitFor(ctx, t, id+" closed", has("closed", id, sourceproto.ClosePolicy))
	}
}

// TestClientReconnect: a second connection with the same id is a new
// generation; the old connection hears close{replaced} and is closed.
func TestClientReconnect(t *testing.T) {
	ctx := watchdog(t)
	s := newClientServer(t, nil)
	old := s.open(ctx, t, "page-1", 0)
	old.send(ctx, old.p.Append(t, sourceprototest.Log("before")))
	sourceprototest.ExpectAck(t, old.recv(ctx), 1)

	fresh := s.open(ctx, t, "page-1", 0)
	if fresh.p.Gen() <= old.p.Gen() {
		t.Fatalf("generation %d after %d", fresh.p.Gen(), old.p.Gen())
	}
	c := sourceprototest.Expect(t, old.recv(ctx), sourceproto.FrameClose)
	if c.Gen != old.p.Gen() || c.Body.(*sourceproto.Close).Code != sourceproto.CloseReplaced {
		t.Errorf("old connection got %+v", c)
	}
	old.expectClosed(ctx, websocket.StatusNormalClosure, "replaced")

	fresh.send(ctx, fresh.p.Append(t, sourceprototest.Log("after")))
	sourceprototest.ExpectAck(t, fresh.recv(ctx), 1)
	evs := s.rec.waitFor(ctx, t, "the new append", func(evs []event) bool { return len(evs) >= 6 })
	want := fmt.Sprintf("opened page-1/1 replaced page-1/1 appended page-1/1 closed page-1/1 replaced "+
		"opened page-1/%d replaced page-1/%[1]d appended page-1/%[1]d", fresh.p.Gen())
	var got []string
	for _, e := range evs {
		got = append(got, e.Kind+" "+fmt.Sprintf("%s/%d", e.Ref.ID, e.Ref.Gen)+map[bool]string{true: " " + string(e.Code)}[e.Kind == "closed"])
	}
	if strings.Join(got, " ") != want {
		t.Errorf("consumer saw\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}

// TestClientTooSlow: a page that stops reading while the worker sends is
// closed with 1008 "client too slow" once its queue passes the limit;
// Send reports the overflow instead of blocking.
func TestClientTooSlow(t *testing.T) {
	ctx := watchdog(t)
	s := newClientServer(t, nil)
	pg := s.open(ctx, t, "slow", sourceproto.CapRuntime)
	info, _ := s.reg.Lookup("slow")
	expr := strings.Repeat("x", 60<<10)
	var err error
	for id := uint64(1); err == nil; id++ {
		if id > 100_000 {
			t.Fatal("the queue never overflowed")
		}
		err = s.reg.Send(info.Ref, &sourceproto.RuntimeCommand{Session: "s1", ID: id, Method: sourceproto.MethodEvaluate,
			Evaluate: &sourceproto.EvaluateParams{Expression: expr}})
	}
	if !errors.Is(err, ErrQueueFull) {
		t.Fatalf("Send: %v, want ErrQueueFull", err)
	}
	s.rec.waitFor(ctx, t, "closed", has("closed", "slow", sourceproto.ClosePolicy))
	for { // what was on the wire before the overflow, then the close
		_, _, err := pg.ws.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || ce.Reason != "client too slow" {
				t.Fatalf("got %v, want close 1008 client too slow", err)
			}
			break
		}
	}
}

func TestClientProducerClose(t *testing.T) {
	ctx := watchdog(t)
	s := newClientServer(t, nil)
	pg := s.open(ctx, t, "page-1", 0)
	pg.send(ctx, pg.p.Frame(t, &sourceproto.Close{Code: sourceproto.CloseGoingAway, Reason: "pagehide"}))
	pg.expectClosed(ctx, websocket.StatusNormalClosure, "closed by producer")
	s.rec.waitFor(ctx, t, "closed", has("closed", "page-1", sourceproto.CloseGoingAway))
}

func TestClientDisconnect(t *testing.T) {
	ctx := watchdog(t)
	s := newClientServer(t, nil)
	pg := s.open(ctx, t, "page-1", 0)
	_ = pg.ws.CloseNow() // the tab crashed
	s.rec.waitFor(ctx, t, "closed", has("closed", "page-1", sourceproto.CloseGoingAway))
	if _, ok := s.reg.Lookup("page-1"); ok {
		t.Error("the source is still live")
	}
}

func TestClientShutdown(t *testing.T) {
	ctx := watchdog(t)
	s := newClientServer(t, nil)
	pg := s.open(ctx, t, "page-1", 0)
	shut := make(chan error, 1)
	go func() { shut <- s.h.Shutdown(ctx) }() // it waits for the page's close handshake
	c := sourceprototest.Expect(t, pg.recv(ctx), sourceproto.FrameClose).Body.(*sourceproto.Close)
	if c.Code != sourceproto.CloseShutdown {
		t.Errorf("close %+v", c)
	}
	pg.expectClosed(ctx, websocket.StatusGoingAway, "shutting down")
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	s.rec.waitFor(ctx, t, "closed", has("closed", "page-1", sourceproto.CloseShutdown))
	late := s.dial(ctx, t, "page-2", s.tok.Reveal())
	late.expectClosed(ctx, websocket.StatusGoingAway, "shutting down")
}

// Past MaxConns the next upgrade is refused with 503 and a reason; a closed
// connection frees its slot.
func TestClientConnLimit(t *testing.T) {
	ctx := watchdog(t)
	s := newClientServer(t, func(o *ClientOptions) { o.MaxConns = 2 })
	a := s.open(ctx, t, "page-1", 0)
	s.open(ctx, t, "page-2", 0)
	status, body := handshake(t, "http"+strings.TrimPrefix(s.wsURL, "ws"), pageOrigin)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "2 page connections are already open") ||
		!strings.Contains(body, "--max-clients") {
		t.Fatalf("third connection: %d %q, want 503 naming the limit", status, body)
	}
	_ = a.ws.CloseNow()
	s.rec.waitFor(ctx, t, "closed", has("closed", "page-1", sourceproto.CloseGoingAway))
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.h.mu.Lock()
		n := len(s.h.conns) + s.h.opening
		s.h.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed page still holds its slot (%d in use)", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.open(ctx, t, "page-3", 0)
}

// TestClientCoalescedAcks: a page whose hello asks for ackDelayMs gets
// its appends acked cumulatively, in order, never twice; the last ones by
// the carrier's timer, with nothing more sent; and the 5,000 items all
// reach the consumer.
func TestClientCoalescedAcks(t *testing.T) {
	ctx := watchdog(t)
	s := newClientServer(t, nil)
	pg := s.dial(ctx, t, "page-1", s.tok.Reveal())
	pg.p.AckDelayMs = 200
	pg.send(ctx, pg.p.Hello(t, 0, sourceproto.TopicConsole))
	pg.p.Welcomed(t, pg.recv(ctx))
	pg.send(ctx, pg.p.Replace(t, sourceproto.ReplaceInitial))
	sourceprototest.ExpectAck(t, pg.recv(ctx), 0)
	const total = 5000
	acks, err := streamWindowed(ctx, t, pg, total, 16) // the page client's window
	if err != nil {                                    // the last ones are acked by the timer
		t.Fatal(err)
	}
	// One ack per append would be 5,000; a full window of 16 is acked by
	// at least every 8th.
	if n := acks; n > total/2 {
		t.Errorf("%d acks for %d appends; want them coalesced", n, total)
	}
	var logs int
	for _, e := range of(s.rec.snapshot(), "page-1") {
		logs += len(e.Logs)
	}
	if logs != total {
		t.Fatalf("consumer got %d items, want %d", logs, total)
	}
}
