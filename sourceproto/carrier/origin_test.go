package carrier

import (
	"testing"
)

func mustPatterns(t testing.TB, ps []string) []originPattern {
	t.Helper()
	var out []originPattern
	for _, s := range ps {
		p, err := parseOriginPattern(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func TestOriginAllowed(t *testing.T) {
	def := mustPatterns(t, DefaultAllowedOrigins())
	custom := mustPatterns(t, []string{"https://app.example.com", "http://*.test:8080", "http://127.0.0.1:5173"})
	tests := []struct {
		allow  []originPattern
		origin []string
		ok     bool
	}{
		{def, []string{"http://127.0.0.1:5173"}, true},
		{def, []string{"http://localhost:3000"}, true},
		{def, []string{"http://LOCALHOST:3000"}, true},
		{def, []string{"http://localhost"}, true},
		{def, []string{"https://localhost:8443"}, true},
		{def, []string{"http://[::1]:8080"}, true},
		{def, nil, false}, // missing: not a browser
		{def, []string{"http://localhost:1", "http://localhost:2"}, false},
		{def, []string{"null"}, false}, // sandboxed frame, file: page
		{def, []string{"http://evil.example"}, false},
		{def, []string{"http://localhost.evil.example:80"}, false},
		{def, []string{"http://127.0.0.2:5173"}, false},
		{def, []string{"ws://localhost:1"}, false},
		{def, []string{"http://localhost:3000/"}, false}, // not a serialized origin
		{def, []string{"http://user@localhost:3000"}, false},
		{def, []string{"http://localhost:x"}, false},
		{def, []string{""}, false},
		{custom, []string{"https://app.example.com"}, true},
		{custom, []string{"https://app.example.com:443"}, true},
		{custom, []string{"https://app.example.com:444"}, false},
		{custom, []string{"http://app.example.com"}, false},
		{custom, []string{"http://a.test:8080"}, true},
		{custom, []string{"http://a.test:8081"}, false},
		{custom, []string{"http://127.0.0.1:5173"}, true},
		{custom, []string{"http://127.0.0.1:5174"}, false},
		{custom, []string{"http://localhost:5173"}, false},
	}
	for _, tt := range tests {
		reason, ok := originAllowed(tt.allow, tt.origin)
		if ok != tt.ok || (!ok && reason == "") {
			t.Errorf("%q: allowed=%v (%q), want %v", tt.origin, ok, reason, tt.ok)
		}
	}
}

func TestParseOriginPatternErrors(t *testing.T) {
	for _, p := range []string{"", "localhost:*", "http://", "http://[::1", "http://a/b", "http://a:port", "http://[a-:*", "http://u@h"} {
		if _, err := parseOriginPattern(p); err == nil {
			t.Errorf("%q: accepted", p)
		}
	}
}

// FuzzOrigin: whatever the header, the check answers without panicking,
// and an allowed origin really is a loopback http(s) origin.
func FuzzOrigin(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:5173", "null", "http://[::1]:1", "http://localhost.evil:1", "https://LOCALHOST"} {
		f.Add(s)
	}
	def := mustPatterns(f, DefaultAllowedOrigins())
	f.Fuzz(func(t *testing.T, origin string) {
		if _, ok := originAllowed(def, []string{origin}); !ok {
			return
		}
		scheme, host, _, ok := parseOrigin(origin)
		if !ok || (scheme != "http" && scheme != "https") || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
			t.Fatalf("%q allowed: %s %s", origin, scheme, host)
		}
	})
}
