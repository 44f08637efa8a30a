package carrier

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

func TestMain(m *testing.M) {
	os.Exit(proctest.Main(m, proctest.MainOptions{Package: "carrier", Subreaper: true}))
}

// testTimeout bounds every wait in these tests. It is a hang detector,
// not a speed assertion: generous, because the machine is shared.
const testTimeout = 60 * time.Second

// watchdog returns a context that ends with the test, or after
// testTimeout; in that case the test fails with a dump of every goroutine,
// so a hang shows where it is.
func watchdog(t testing.TB) context.Context {
	t.Helper()
	return proctest.Watchdog(t, testTimeout)
}
