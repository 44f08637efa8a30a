package carrier

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

func TestMain(m *testing.M) {
	if err := proctest.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "carrier tests:", err)
		os.Exit(2)
	}
	code := m.Run()
	if code == 0 {
		if err := checkNoLeakedGoroutines(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// leakSuspects are the goroutines this package's code and tests start.
var leakSuspects = []string{
	"carrier.(*hostPipe)", "carrier.(*clientConn)", "carrier.ServeHostPipe", "carrier.(*ClientHandler)",
	"coder/websocket.(*Conn)", "os/exec.(*Cmd)", "net/http.(*conn).serve",
}

// checkNoLeakedGoroutines waits (up to 10 s, a hang detector) for every
// suspect goroutine to end after all tests ran.
func checkNoLeakedGoroutines() error {
	var leaked []string
	for range 1000 {
		leaked = leaked[:0]
		for _, g := range goroutines() {
			for _, s := range leakSuspects {
				if strings.Contains(g, s) {
					leaked = append(leaked, g)
					break
				}
			}
		}
		if len(leaked) == 0 {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("carrier tests: %d goroutines leaked:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
}

func goroutines() []string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Split(string(buf), "\n\n")
}

// testTimeout bounds every wait in these tests. It is a hang detector,
// not a speed assertion: generous, because the machine is shared.
const testTimeout = 60 * time.Second

// watchdog returns a context that ends with the test, or after
// testTimeout; in that case the test fails with a dump of every
// goroutine, so a hang shows where it is.
func watchdog(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(func() {
		if ctx.Err() == context.DeadlineExceeded {
			t.Errorf("watchdog: the test hung; goroutines:\n%s", strings.Join(goroutines(), "\n\n"))
		}
		cancel()
	})
	return ctx
}
