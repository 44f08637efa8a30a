package cdpserver

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// TestMsgReaderKeepsMessagesApart sends messages of sizes around the scratch
// bounds and checks each one arrives whole and stays unchanged after the
// reader reads the next (a slice aliasing the scratch buffer would not):
// without a size hint, and with hints that are right, too small, too large
// or absent (hostnode.SessionIO.NextLen is only a hint).
func TestMsgReaderKeepsMessagesApart(t *testing.T) {
	for _, tc := range []struct {
		name string
		hint func(n int) int64
	}{
		{"no hint", nil},
		{"right", func(n int) int64 { return int64(n) }},
		{"too small", func(n int) int64 { return int64(n/2 + 1) }},
		{"too large", func(n int) int64 { return int64(2*n + 1) }},
		{"unknown", func(int) int64 { return 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) { testMsgReader(t, tc.hint) })
	}
}

func testMsgReader(t *testing.T, hint func(n int) int64) {
	sizes := []int{0, 1, 4095, 4096, 4097, keepScratch - 1, keepScratch, keepScratch + 1, 2 * keepScratch, 5 << 20, 10, 3}
	ctx := context.Background()
	c := dialServing(t, func(ctx context.Context, c *websocket.Conn) {
		for i, n := range sizes {
			msg := bytes.Repeat([]byte{byte('a' + i)}, n)
			if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
				return
			}
		}
		c.Close(websocket.StatusNormalClosure, "")
	})
	c.SetReadLimit(16 << 20)
	var rd msgReader
	cur := 0
	if hint != nil {
		rd.size = func() int64 { return hint(sizes[cur]) }
	}
	var got [][]byte
	for i := range sizes {
		cur = i
		msg, err := rd.read(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, msg)
	}
	if _, err := rd.read(ctx, c); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after the last message: %v, want the normal close", err)
	}
	for i, n := range sizes {
		want := bytes.Repeat([]byte{byte('a' + i)}, n)
		if !bytes.Equal(got[i], want) {
			t.Fatalf("message %d (%d bytes): got %d bytes, changed or cut", i, n, len(got[i]))
		}
	}
}

func TestMsgReaderHonoursReadLimit(t *testing.T) {
	ctx := context.Background()
	c := dialServing(t, func(ctx context.Context, c *websocket.Conn) {
		c.Write(ctx, websocket.MessageText, bytes.Repeat([]byte("x"), 2000))
		c.Read(ctx)
	})
	c.SetReadLimit(1000)
	var rd msgReader
	if msg, err := rd.read(ctx, c); err == nil {
		t.Fatalf("read %d bytes past a 1000-byte limit", len(msg))
	}
}

// dialServing dials a test WebSocket server whose side of the connection
// is serve; both end with the test.
func dialServing(t *testing.T, serve func(ctx context.Context, c *websocket.Conn)) *websocket.Conn {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		serve(r.Context(), c)
	}))
	t.Cleanup(srv.Close)
	c, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}
