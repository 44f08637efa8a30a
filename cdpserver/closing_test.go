package cdpserver

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// How a window ends, over real sockets and a real node host: each ending
// that leaves the socket usable sends a close frame with a reason.

// onlySession waits for the worker's single DevTools session and returns it.
func (w *worker) onlySession(t *testing.T) *Session {
	t.Helper()
	deadline := time.Now().Add(cdptest.Timeout)
	for time.Now().Before(deadline) {
		w.srv.mu.Lock()
		for sess := range w.srv.sessions {
			if len(w.srv.sessions) == 1 {
				w.srv.mu.Unlock()
				return sess
			}
		}
		w.srv.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no single DevTools session within %v (have %d)", cdptest.Timeout, w.srv.sessionCount())
	return nil
}

// A window that stops reading until its queue overflows, then reads, gets
// the 1008 close frame with the reason, not a dropped connection.
func TestSlowWindowReadsTheOverflowReason(t *testing.T) {
	w := startWorker(t, hostScript, Options{MaxQueuedMessages: 16})
	// A small receive buffer fills after a few messages, so sendLoop blocks
	// in a Write and the worker's queue must take the rest.
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	slow, _, err := websocket.Dial(context.Background(), w.srv.PageWebSocketURL(), &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.CloseNow()
	slow.SetReadLimit(1 << 30)
	sess := w.onlySession(t)
	ctx, cancel := context.WithTimeout(context.Background(), cdptest.Timeout)
	defer cancel()
	slow.Write(ctx, websocket.MessageText, []byte(`{"id":1,"method":"Runtime.enable"}`))
	slow.Write(ctx, websocket.MessageText, []byte(`{"id":2,"method":"Runtime.evaluate","params":{"expression":"emitBig(400, 65536)"}}`))
	for !sess.out.overflowed() {
		if ctx.Err() != nil {
			t.Fatalf("the queue never overflowed (host exit code %d)", w.proc.ExitCode())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Stay slow a while longer: past coder/websocket's 5 s bound on writing a
	// close frame (a Close racing sendLoop's blocked Write gave up there and
	// dropped the connection: the window read EOF), within overflowWriteGrace.
	const slowFor = 6 * time.Second
	if slowFor >= overflowWriteGrace {
		t.Fatalf("slowFor %v must stay below overflowWriteGrace %v", slowFor, overflowWriteGrace)
	}
	time.Sleep(slowFor)
	n := 0
	for {
		_, _, err = slow.Read(ctx)
		if err != nil {
			break
		}
		n++
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || ce.Reason != overflowReason {
		t.Fatalf("after %d messages the slow window read %v; want close 1008 %q", n, err, overflowReason)
	}
	t.Logf("the slow window read %d messages, then close 1008", n)
}

// rawRequests are sent by hand before the close frame: relayed to Node (one
// answered late) and answered by the worker itself.
var rawRequests = []struct {
	req  string
	want string // in the answer's result
}{
	{`{"id":1,"method":"Runtime.evaluate","params":{"expression":"1+1"}}`, `"value":2`},
	{`{"id":2,"method":"Target.getTargetInfo"}`, `"targetInfo"`},
	{`{"id":3,"method":"Runtime.evaluate","params":{"expression":"new Promise(r => setTimeout(() => r(3), 300))","awaitPromise":true}}`, `"value":3`},
	{`{"id":4,"method":"Page.bringToFront"}`, `{}`},
	{`{"id":5,"method":"Runtime.evaluate","params":{"expression":"5"}}`, `"value":5`},
}

// A client that sends its requests and its close frame in one write (as
// chrome-remote-interface's REPL does on piped input) gets every answer,
// then the close reply. With the frames sent along with the upgrade request
// they arrive in the HTTP server's buffer, which the gate must cover too.
func TestRequestsBeforeTheCloseFrameAreAnswered(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	for _, withUpgrade := range []bool{false, true} {
		t.Run(fmt.Sprintf("frames with the upgrade request %v", withUpgrade), func(t *testing.T) {
			conn, err := net.Dial("tcp", w.srv.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(cdptest.Timeout)) // hang detector
			upgrade := "GET /devtools/page/" + w.srv.TargetID() + " HTTP/1.1\r\nHost: " + w.srv.Addr() +
				"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
			var frames []byte
			for _, r := range rawRequests {
				frames = append(frames, wsFrame(0x1, true, true, []byte(r.req), 0)...)
			}
			frames = append(frames, wsFrame(opClose, true, true, closePayload(1000, "done"), 0)...)
			br := bufio.NewReader(conn)
			if withUpgrade {
				mustWrite(t, conn, append([]byte(upgrade), frames...))
				expectSwitching(t, br)
			} else {
				mustWrite(t, conn, []byte(upgrade))
				expectSwitching(t, br)
				mustWrite(t, conn, frames)
			}
			seen := map[int64]int{}
			for {
				op, payload := readServerFrame(t, br)
				if op == opClose {
					if len(payload) < 2 || binary.BigEndian.Uint16(payload) != 1000 {
						t.Fatalf("close reply %x, want code 1000", payload)
					}
					break
				}
				var m struct {
					ID     int64           `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal(payload, &m); err != nil || m.ID < 1 || m.ID > 5 || m.Result == nil {
					t.Fatalf("unexpected message %s", payload)
				}
				if want := rawRequests[m.ID-1].want; !strings.Contains(string(m.Result), want) {
					t.Fatalf("answer %s, want %s in its result", payload, want)
				}
				seen[m.ID]++
			}
			for id := int64(1); id <= 5; id++ {
				if seen[id] != 1 {
					t.Errorf("request %d answered %d times, want once (answers: %v)", id, seen[id], seen)
				}
			}
			if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
				t.Errorf("after the close reply: %v, want EOF", err)
			}
		})
	}
}

func mustWrite(t *testing.T, conn net.Conn, b []byte) {
	t.Helper()
	if _, err := conn.Write(b); err != nil {
		t.Fatal(err)
	}
}

func expectSwitching(t *testing.T, br *bufio.Reader) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("upgrade response: %v", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade answered %s", resp.Status)
	}
}

// readServerFrame reads one unmasked, unfragmented server frame.
func readServerFrame(t *testing.T, br *bufio.Reader) (byte, []byte) {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		t.Fatalf("reading a frame header: %v", err)
	}
	if h[0]&0x80 == 0 || h[1]&0x80 != 0 {
		t.Fatalf("frame header %x: want a final, unmasked frame", h)
	}
	n := uint64(h[1] & 0x7F)
	switch n {
	case 126:
		var b [2]byte
		io.ReadFull(br, b[:])
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		io.ReadFull(br, b[:])
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > 1<<20 {
		t.Fatalf("frame of %d bytes: not an answer", n)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(br, payload); err != nil {
		t.Fatalf("reading a %d-byte payload: %v", n, err)
	}
	return h[0] & 0x0F, payload
}

// Ending paths other than overflow and host exit (TestHostDeathAnswersPendingRequests)
// close the window with a code and a reason.
func TestEveryEndingSendsACloseFrame(t *testing.T) {
	for _, tc := range []struct {
		name   string
		end    func(w *worker, sess *Session)
		code   websocket.StatusCode
		reason string
	}{
		{"shutdown", func(w *worker, _ *Session) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			w.srv.Shutdown(ctx, "worker stopping")
		}, websocket.StatusGoingAway, "worker stopping"},
		{"panic in hostLoop", func(_ *worker, sess *Session) {
			go sess.guard("hostLoop", false, func() { panic("injected") })
		}, websocket.StatusInternalError, "inspector-worker failed (hostLoop: injected)"},
		// The writer's guard writes the close frame itself (the real sendLoop,
		// still running here, then finds the connection closing).
		{"panic in sendLoop", func(_ *worker, sess *Session) {
			go sess.guard("sendLoop", true, func() { panic("injected") })
		}, websocket.StatusInternalError, "inspector-worker failed (sendLoop: injected)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := startWorker(t, hostScript, Options{})
			c := w.dial("A")
			c.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
			tc.end(w, w.onlySession(t))
			err := c.ExpectClosed()
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != tc.code || !strings.HasPrefix(ce.Reason, tc.reason) {
				t.Fatalf("window read %v, want close %d %q", err, tc.code, tc.reason)
			}
		})
	}
}
