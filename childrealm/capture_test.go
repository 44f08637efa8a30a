package childrealm

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// TestCaptureHandlerRefuses: the capture channel is opened only with the
// child token, as an upgrade, for a followed child's pid; every refusal
// comes before the upgrade and never reaches serve.
func TestCaptureHandlerRefuses(t *testing.T) {
	tok, err := sourceproto.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := sourceproto.NewToken()
	reg := NewRegistry(Options{})
	srv := httptest.NewServer(CaptureHandler(reg, tok, func(conn net.Conn, c *Child) {
		t.Errorf("serve called for pid %d", c.PID)
		conn.Close()
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name, auth, upgrade, query string
		want                       int
	}{
		{"no token", "", CaptureUpgrade, "?pid=1", http.StatusUnauthorized},
		{"another token", "Bearer " + other.Reveal(), CaptureUpgrade, "?pid=1", http.StatusUnauthorized},
		{"not an upgrade", "Bearer " + tok.Reveal(), "", "?pid=1", http.StatusBadRequest},
		{"no pid", "Bearer " + tok.Reveal(), CaptureUpgrade, "", http.StatusBadRequest},
		{"not followed", "Bearer " + tok.Reveal(), CaptureUpgrade, "?pid=1", http.StatusNotFound},
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/child/capture"+tc.query, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		if tc.upgrade != "" {
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", tc.upgrade)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, res.StatusCode, tc.want)
		}
	}
}
