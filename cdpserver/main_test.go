package cdpserver

import (
	"os"
	"testing"

	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// TestMain fails the package when a test left a goroutine (a window's read
// or send loop, a hub sender, a watcher, a relay) or a child process (node,
// Chromium) behind: this is the most concurrent package, and a goroutine
// that outlives its session is how a leak or a stuck lock shows first.
func TestMain(m *testing.M) {
	os.Exit(proctest.Main(m, proctest.MainOptions{Package: "cdpserver", Children: true}))
}
