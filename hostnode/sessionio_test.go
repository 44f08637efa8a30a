package hostnode

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestSessionIOHoldsUntilRelease dials a WebSocket server through Dial
// with a bound SessionIO: held messages reach the server only after
// Release, all of them, in order; and a batch not bound (plain context)
// leaves writes alone.
func TestSessionIOHoldsUntilRelease(t *testing.T) {
	ctx := testCtx(t)
	got := make(chan string, 10)
	url := wsServer(t, func(_ context.Context, _ *websocket.Conn, msg []byte) bool {
		got <- string(msg)
		return true
	})

	var b SessionIO
	conn, err := Dial(WithSessionIO(ctx, &b), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	if b.w == nil {
		t.Fatal("WithSessionIO did not bind the batch to the dialled session")
	}
	b.Hold()
	for _, m := range []string{"one", "two", "three"} {
		if err := conn.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	// A held message would arrive within a few ms on loopback; the server
	// reads in order, so "probe" (sent on a second, unheld session) proves
	// the server is reading while the held ones are not there.
	other, err := Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.CloseNow()
	if err := other.Write(ctx, websocket.MessageText, []byte("probe")); err != nil {
		t.Fatal(err)
	}
	if m := <-got; m != "probe" {
		t.Fatalf("server read %q before Release", m)
	}
	if err := b.Release(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one", "two", "three"} {
		if m := <-got; m != want {
			t.Fatalf("after Release: got %q, want %q", m, want)
		}
	}
	var unbound SessionIO
	unbound.Hold() // does nothing
	if err := unbound.Release(); err != nil {
		t.Fatal(err)
	}
}

// TestSessionIOMoreBuffered checks the reader's look-ahead against a
// WebSocket server that writes what it is asked ("N:SIZE": N messages of
// SIZE bytes, then a note on written): every header size of RFC 6455 (2, 4
// and 10 bytes), single and several messages. True while one of the
// messages written is not read yet, false once all are: a count that drifts
// off by one message would hold a batch across a read that waits, or end it
// early.
func TestSessionIOMoreBuffered(t *testing.T) {
	ctx := testCtx(t)
	written := make(chan struct{}, 10)
	url := wsServer(t, func(ctx context.Context, c *websocket.Conn, msg []byte) bool {
		var n, size int
		if _, err := fmt.Sscanf(string(msg), "%d:%d", &n, &size); err != nil {
			t.Errorf("server: bad request %q", msg)
			return false
		}
		for range n {
			if c.Write(ctx, websocket.MessageText, bytes.Repeat([]byte("x"), size)) != nil {
				return false
			}
		}
		written <- struct{}{}
		return true
	})

	var b SessionIO
	conn, err := Dial(WithSessionIO(ctx, &b), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	if b.MoreBuffered() {
		t.Fatal("MoreBuffered after the handshake, before any message")
	}
	for _, tc := range []struct{ n, size int }{{1, 10}, {3, 200}, {1, 1000}, {2, 70000}, {4, 125}, {2, 126}, {1, 65535}, {1, 65536}} {
		if err := conn.Write(ctx, websocket.MessageText, fmt.Appendf(nil, "%d:%d", tc.n, tc.size)); err != nil {
			t.Fatal(err)
		}
		<-written
		// Loopback delivers a write before it returns; the wait covers a
		// slow machine (MoreBuffered may only err towards true).
		deadline := time.Now().Add(5 * time.Second)
		for !b.MoreBuffered() {
			if time.Now().After(deadline) {
				t.Fatalf("%d×%d B: written by the server, MoreBuffered still false", tc.n, tc.size)
			}
			time.Sleep(time.Millisecond)
		}
		for i := range tc.n {
			_, msg, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(msg) != tc.size {
				t.Fatalf("%d×%d B: message %d has %d bytes", tc.n, tc.size, i+1, len(msg))
			}
			b.Took()
			if more, last := b.MoreBuffered(), i == tc.n-1; more == last {
				t.Fatalf("%d×%d B: after message %d, MoreBuffered = %v", tc.n, tc.size, i+1, more)
			}
		}
	}
	var unbound SessionIO // the relay ends its batch at every message
	if unbound.MoreBuffered() || unbound.NextLen() != 0 {
		t.Fatal("an unbound SessionIO claims to know what follows")
	}
}

// TestSessionIODrained: Drained, asked from another goroutine, is false
// while any message the server wrote is unread (in the kernel or read ahead
// by the library) and true once the reader took the last; a closer relying
// on it would otherwise discard Node's last messages.
func TestSessionIODrained(t *testing.T) {
	if !kernelQueueVisible {
		t.Skip("SKIPPED: no SIOCINQ on this OS: Drained always says it cannot tell")
	}
	ctx := testCtx(t)
	written := make(chan struct{}, 10)
	url := wsServer(t, func(ctx context.Context, c *websocket.Conn, msg []byte) bool {
		var n, size int
		if _, err := fmt.Sscanf(string(msg), "%d:%d", &n, &size); err != nil {
			t.Errorf("server: bad request %q", msg)
			return false
		}
		for range n {
			if c.Write(ctx, websocket.MessageText, bytes.Repeat([]byte("x"), size)) != nil {
				return false
			}
		}
		written <- struct{}{}
		return true
	})
	var b SessionIO
	conn, err := Dial(WithSessionIO(ctx, &b), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	drained := func() bool {
		ch := make(chan [2]bool)
		go func() { d, k := b.Drained(); ch <- [2]bool{d, k} }()
		r := <-ch
		if !r[1] {
			t.Fatal("Drained cannot tell on a bound session")
		}
		return r[0]
	}
	if !drained() {
		t.Fatal("not drained after the handshake, before any message")
	}
	for _, tc := range []struct{ n, size int }{{1, 10}, {5, 300}, {2, 70000}} {
		if err := conn.Write(ctx, websocket.MessageText, fmt.Appendf(nil, "%d:%d", tc.n, tc.size)); err != nil {
			t.Fatal(err)
		}
		<-written
		for i := range tc.n {
			if drained() {
				t.Fatalf("%d×%d B: drained with message %d unread", tc.n, tc.size, i+1)
			}
			if _, _, err := conn.Read(ctx); err != nil {
				t.Fatal(err)
			}
			b.Took()
		}
		if !drained() {
			t.Fatalf("%d×%d B: every message taken, not drained", tc.n, tc.size)
		}
	}
	var unbound SessionIO
	if d, known := unbound.Drained(); d || known {
		t.Fatal("an unbound SessionIO claims to know it is drained")
	}
}

// wsServer starts a WebSocket server for the test and returns its URL: it
// hands every message it reads to onMsg, until onMsg says false or the
// connection ends.
func wsServer(t *testing.T, onMsg func(ctx context.Context, c *websocket.Conn, msg []byte) bool) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, msg, err := c.Read(r.Context())
			if err != nil || !onMsg(r.Context(), c, msg) {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/target"
}
