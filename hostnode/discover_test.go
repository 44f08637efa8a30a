package hostnode

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDiscover(t *testing.T) {
	ctx := testCtx(t)
	p := startNode(t, ctx, Options{Argv: []string{"node", writeScript(t, waitForeverJS)}})
	_, hostport, _, err := ParseInspectorAddr(p.InspectorURL())
	if err != nil {
		t.Fatal(err)
	}
	got, err := Discover(ctx, hostport)
	if err != nil {
		t.Fatal(err)
	}
	if got != p.InspectorURL() {
		t.Errorf("Discover = %q, want %q", got, p.InspectorURL())
	}
	// Discover's answer is dialable.
	if v, err := dialSession(t, ctx, got).evaluate(ctx, "1+1"); err != nil || v != float64(2) {
		t.Errorf("evaluate = %v, %v", v, err)
	}
}

func TestDiscoverRefusals(t *testing.T) {
	ctx := testCtx(t)
	for _, hp := range []string{"0.0.0.0:9229", "example.com:9229", "10.0.0.1:9229"} {
		if _, err := Discover(ctx, hp); !errors.Is(err, ErrNotLoopback) {
			t.Errorf("Discover(%q) = %v, want ErrNotLoopback", hp, err)
		}
	}

	hosts := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hosts <- r.Host:
		default:
		}
		switch r.URL.Path {
		case "/json/list":
			w.Write([]byte(`[{"id":"x"},{"webSocketDebuggerUrl":"ws://example.com:9229/x"}]`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	hostport := strings.TrimPrefix(srv.URL, "http://")
	if _, err := Discover(ctx, hostport); !errors.Is(err, ErrNotLoopback) {
		t.Errorf("Discover accepted a non-loopback webSocketDebuggerUrl: %v", err)
	}
	if gotHost := <-hosts; gotHost != hostport {
		t.Errorf("Host header = %q, want %q", gotHost, hostport)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0") // nobody answers HTTP here: closed at once
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close()
	if _, err := Discover(ctx, closedAddr); err == nil || !strings.Contains(err.Error(), "--inspect") {
		t.Errorf("Discover(closed port) = %v, want a hint about --inspect", err)
	}
}

func TestFirstTarget(t *testing.T) {
	tests := []struct {
		body, want string
		wantErr    error
	}{
		{`[{"webSocketDebuggerUrl":"ws://127.0.0.1:1/a"},{"webSocketDebuggerUrl":"ws://127.0.0.1:1/b"}]`, "ws://127.0.0.1:1/a", nil},
		{`[{"id":"no url"},{"webSocketDebuggerUrl":"ws://127.0.0.1:1/b"}]`, "ws://127.0.0.1:1/b", nil},
		{`[]`, "", ErrNoTarget},
		{`[{"webSocketDebuggerUrl":"http://127.0.0.1:1/a"}]`, "", ErrBadAddr},
	}
	for _, tc := range tests {
		got, err := firstTarget("127.0.0.1:1", []byte(tc.body))
		if got != tc.want || (tc.wantErr == nil) != (err == nil) || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
			t.Errorf("firstTarget(%s) = %q, %v; want %q, %v", tc.body, got, err, tc.want, tc.wantErr)
		}
	}
	if _, err := firstTarget("127.0.0.1:1", []byte(`{"not":"an array"}`)); err == nil {
		t.Error("firstTarget accepted an object")
	}
}
