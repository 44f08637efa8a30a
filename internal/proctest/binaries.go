package proctest

import (
	"os"
	"os/exec"
	"testing"
)

// Chromium returns Debian's chromium ($E2E_CHROMIUM, default
// /usr/bin/chromium). Without it the test fails under CI=true (CI must
// install it; scripts/test.sh does) and skips with a visible line elsewhere.
func Chromium(t testing.TB) string {
	t.Helper()
	p := os.Getenv("E2E_CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		missing(t, "no chromium at "+p, "install Debian's chromium (apt-get install -y chromium)")
	}
	return p
}

// Node returns the path of node on $PATH. Without it the test fails under
// CI=true and skips with a visible line elsewhere, like Chromium. Tests that
// start node by name (hostnode.Options{Argv: []string{"node", …}}) call it
// first, so that a missing node reads as that, not as a start error.
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		missing(t, "no node on $PATH", "install Node.js >= 20")
	}
	return p
}

// missing fails the test under CI=true (CI must install what its tests
// need; scripts/test.sh does) and skips it with a visible line elsewhere:
// a test that skips silently in CI is a defect.
func missing(t testing.TB, what, fix string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: CI must install it (scripts/test.sh does); %s", what, fix)
	}
	t.Skipf("SKIPPED: %s; %s to run this test", what, fix)
}
