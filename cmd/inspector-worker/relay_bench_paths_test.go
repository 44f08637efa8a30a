//go:build linux

package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// relayHostScript is each path's Node host: flood(n) logs n console messages
// from a CommonJS file, the host traffic the worker rewrites (stack URLs).
const relayHostScript = `
globalThis.flood = (n) => { for (let i = 0; i < n; i++) console.log('flood', i); return n; };
setInterval(() => {}, 1000);
`

// benchWindows is the "8 windows at once" mode's window count.
const benchWindows = 8

// relayPath is one way for a DevTools-like client to reach its own Node
// host. Static after setup.
type relayPath struct {
	name    string
	pid     int          // the relay process whose CPU and RSS count (0 for direct)
	main    *benchConn   // the window that enabled Runtime (console flood)
	windows []*benchConn // benchWindows more, without Runtime.enable
}

// Path order in every table; the benchmark rotates the run order per round.
// pathBase exists only with IW_RELAY_BASE_WORKER: another worker binary
// (e.g. built from the commit before a change) measured in the same run.
// IW_RELAY_WORKER replaces the worker under test (default: the binary
// TestMain built from this checkout).
const (
	pathBest = iota
	pathStock
	pathSplice
	pathWorker
	pathBase
)

var pathNames = []string{"direct-best", "direct-stock", "splice", "worker", "worker-base"}

// startRelayPaths starts one Node host per path (so no path's sessions load
// another's host), the splice and the worker(s) in front of theirs, and
// opens each path's windows. Every process is killed by PID in b.Cleanup
// (startCmdEnv).
func startRelayPaths(b *testing.B, baseWorker string) []*relayPath {
	dir, script := writeScript(b, relayHostScript)
	paths := make([]*relayPath, pathWorker+1)
	if baseWorker != "" {
		paths = append(paths, nil)
	}
	for i := range paths {
		node := startBenchProc(b, dir, nil, "node", "--inspect=127.0.0.1:0", script)
		nodeURL := node.waitFor(node.stderr, `Debugger listening on (ws://127\.0\.0\.1:\d+/[\w-]+)`)
		p := &relayPath{name: pathNames[i]}
		url, quickAck := nodeURL, i != pathStock
		switch i {
		case pathSplice:
			self, err := os.Executable()
			if err != nil {
				b.Fatal(err)
			}
			hostport := regexp.MustCompile(`ws://([^/]+)/`).FindStringSubmatch(nodeURL)[1]
			s := startBenchProc(b, dir, []string{spliceEnv + "=" + hostport}, self)
			front := s.waitFor(s.stderr, `splice listening on (127\.0\.0\.1:\d+)`)
			url = strings.Replace(nodeURL, hostport, front, 1)
			p.pid = s.cmd.Process.Pid
		case pathWorker, pathBase:
			bin := workerBin
			if v := os.Getenv("IW_RELAY_WORKER"); v != "" {
				bin = v
			}
			if i == pathBase {
				bin = baseWorker
			}
			w := startBenchProc(b, dir, nil, bin, "serve", "--host-inspector", nodeURL, "--port", "0")
			url = pageURL(b, w.addr())
			p.pid = w.cmd.Process.Pid
		}
		p.main = dialWindow(b, url, quickAck)
		p.main.call(b, "Runtime.enable", "{}")
		for range benchWindows {
			p.windows = append(p.windows, dialWindow(b, url, quickAck))
		}
		paths[i] = p
	}
	return paths
}

// startBenchProc starts any program as a workerProc (output captured,
// killed by PID and checked gone at cleanup).
func startBenchProc(b testing.TB, dir string, env []string, bin string, args ...string) *workerProc {
	saved := workerBin
	workerBin = bin
	defer func() { workerBin = saved }()
	return startCmdEnv(b, dir, env, args...)
}

// startPerf profiles pid with Linux perf into IW_RELAY_PERF (if set) until
// the returned stop is called: the worker has no pprof flag, and perf needs
// none (Go keeps frame pointers, so -g call graphs work). Read it with
// `perf report -i FILE`.
func startPerf(b *testing.B, pid int) (stop func()) {
	out := os.Getenv("IW_RELAY_PERF")
	if out == "" {
		return func() {}
	}
	p := startBenchProc(b, ".", nil, "perf", "record", "-F", "999", "-g", "-o", out, "-p", strconv.Itoa(pid))
	time.Sleep(300 * time.Millisecond) // perf attaches on its own time and says nothing
	return func() {
		p.cmd.Process.Signal(syscall.SIGINT)
		p.wait() // perf ends by its own SIGINT: no exit code to check
		if !strings.Contains(p.stderr.String(), "Captured and wrote") {
			b.Errorf("perf record wrote no profile: %s", p.stderr)
		}
		fmt.Printf("perf profile of the worker (pid %d): %s\n", pid, out)
	}
}
