package cdpserver

import (
	"testing"

	"github.com/inspector-worker/inspector-worker/hostnode"
)

// TestHostContextName: the context selector never shows a path.
func TestHostContextName(t *testing.T) {
	for url, want := range map[string]string{
		"file:///home/me/app/server.js": "server.js",
		"file:///":                      "Host",
		"":                              "Host",
		"node:internal/repl":            "Host",
	} {
		s := &Server{hostInfo: hostnode.HostInfo{URL: url, Title: "/usr/bin/node"}}
		if got := s.hostContextName(); got != want {
			t.Errorf("hostContextName() with host URL %q = %q, want %q", url, got, want)
		}
	}
}
