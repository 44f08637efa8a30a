package browserrealm

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestJoins: which targets join by default — app pages on loopback, never
// the browser's own pages, its DevTools frontend, extensions or frames.
func TestJoins(t *testing.T) {
	b := &Browser{match: DefaultMatch, self: "127.0.0.1:9222"}
	for _, c := range []struct {
		typ, url string
		want     bool
	}{
		{"page", "http://127.0.0.1:3000/", true},
		{"page", "http://localhost:5173/shop?x=1", true},
		{"page", "https://[::1]:8443/", true},
		{"page", "http://localhost", true},
		{"page", "http://127.0.0.1:9222/devtools/devtools_app.html?ws=x", false}, // the browser's own frontend
		{"page", "devtools://devtools/bundled/devtools_app.html", false},
		{"page", "chrome://newtab/", false},
		{"page", "chrome-extension://abc/popup.html", false},
		{"page", "about:blank", false},
		{"page", "https://example.com/", false},
		{"page", "http://localhost.example.com/", false},
		{"iframe", "http://127.0.0.1:3000/frame", false},
		{"service_worker", "http://127.0.0.1:3000/sw.js", false},
	} {
		if got := b.joins(targetInfo{Type: c.typ, URL: c.url}); got != c.want {
			t.Errorf("joins(%s %s) = %v, want %v", c.typ, c.url, got, c.want)
		}
	}
	b.match = regexp.MustCompile(`^https://app\.test/`)
	if !b.joins(targetInfo{Type: "page", URL: "https://app.test/x"}) || b.joins(targetInfo{Type: "page", URL: "http://127.0.0.1:3000/"}) {
		t.Error("--browser-match does not replace the default")
	}
}

// TestBrowserWebSocketFlag: a flag that names no endpoint says what to give.
func TestBrowserWebSocketFlag(t *testing.T) {
	for _, bad := range []string{"9222", "127.0.0.1:9222", "ftp://127.0.0.1:9222", ""} {
		if _, err := browserWebSocket(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "give http://HOST:PORT") {
			t.Errorf("browserWebSocket(%q): %v", bad, err)
		}
	}
	if u, err := browserWebSocket(context.Background(), "ws://127.0.0.1:9222/devtools/browser/x"); err != nil || u != "ws://127.0.0.1:9222/devtools/browser/x" {
		t.Errorf("a ws:// URL is used as is: %q %v", u, err)
	}
}

// TestGuardScriptQuotes: the join expression reaches JavaScript as a string
// literal, whatever it holds.
func TestGuardScriptQuotes(t *testing.T) {
	s := guardScript(`^http://a"b\d</script>`)
	if !strings.Contains(s, `new RegExp("^http://a\"b\\d\u003c/script\u003e")`) {
		t.Errorf("guard script: %s", s)
	}
}
