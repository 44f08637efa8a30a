package hostnode

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// TestWriteBatchHoldsUntilRelease dials a WebSocket server through Dial
// with a bound WriteBatch: held messages reach the server only after
// Release, all of them, in order; and a batch not bound (plain context)
// leaves writes alone.
func TestWriteBatchHoldsUntilRelease(t *testing.T) {
	ctx := testCtx(t)
	got := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, msg, err := c.Read(r.Context())
			if err != nil {
				return
			}
			got <- string(msg)
		}
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/target"

	var b WriteBatch
	conn, err := Dial(WithWriteBatch(ctx, &b), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	if b.w == nil {
		t.Fatal("WithWriteBatch did not bind the batch to the dialled session")
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
	var unbound WriteBatch
	unbound.Hold() // does nothing
	if err := unbound.Release(); err != nil {
		t.Fatal(err)
	}
}
