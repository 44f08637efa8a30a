package hostnode

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

func TestDialRefusals(t *testing.T) {
	ctx := testCtx(t)
	for in, want := range map[string]error{
		"ws://0.0.0.0:9229/abc":     ErrNotLoopback,
		"ws://example.com:9229/abc": ErrNotLoopback,
		"http://127.0.0.1:9229/abc": ErrBadAddr,
		"127.0.0.1:9229":            ErrBadAddr, // needs Discover first
		"ws://127.0.0.1:9229":       ErrBadAddr,
	} {
		if c, err := Dial(ctx, in); !errors.Is(err, want) {
			if c != nil {
				c.CloseNow()
			}
			t.Errorf("Dial(%q) = %v, want %v", in, err, want)
		}
	}
}

// TestDialHandshake checks what Node's inspector requires of the handshake:
// the literal Host, no compression offered.
func TestDialHandshake(t *testing.T) {
	ctx := testCtx(t)
	type seen struct{ host, ext string }
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Host, r.Header.Get("Sec-WebSocket-Extensions")}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.Close(websocket.StatusNormalClosure, "")
	}))
	defer srv.Close()
	hostport := strings.TrimPrefix(srv.URL, "http://")
	c, err := Dial(ctx, "ws://"+hostport+"/0f2c")
	if err != nil {
		t.Fatal(err)
	}
	c.CloseNow()
	if s := <-got; s.host != hostport || s.ext != "" {
		t.Errorf("handshake Host = %q (want %q), Sec-WebSocket-Extensions = %q (want none)", s.host, hostport, s.ext)
	}
}

// TestDialLargeMessage: a 50 MB script source must pass the read limit. The
// answer is checked raw: decoding 50 MB of JSON under -race is slow.
func TestDialLargeMessage(t *testing.T) {
	ctx := testCtx(t)
	const size = 50 << 20
	js := fmt.Sprintf("globalThis.big = 'x'.repeat(%d);\n%s", size, waitForeverJS)
	stdout := newLineSink()
	p := startNode(t, ctx, Options{Argv: []string{"node", writeScript(t, js)}, Stdout: stdout})
	stdout.waitLine(t, ctx, "ready")
	c, err := Dial(ctx, p.InspectorURL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	req := `{"id":1,"method":"Runtime.evaluate","params":{"expression":"big","returnByValue":true}}`
	if err := c.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
		t.Fatal(err)
	}
	_, msg, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("reading a %d MB answer: %v", size>>20, err)
	}
	if len(msg) < size || !bytes.HasPrefix(msg, []byte(`{"id":1,"result":{"result":{"type":"string","value":"xxx`)) {
		t.Errorf("answer of %d bytes starting %.80q", len(msg), msg)
	}
}
