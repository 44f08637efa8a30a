//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What the host's fetch capture costs the app, measured as a user pays it:
// real node hosts under real workers (`run` and `run --no-capture`), each
// with its own loopback HTTP server, timing inside the host from the call
// to the app's last body byte. The modes run on every host in each round,
// the host order rotated every round; figures are the medians of per-round
// ratios (captured / --no-capture, time: > 1 costs), reported, never
// asserted. Goals and current figures: docs/performance.md ("Host fetch
// capture").
//
//	go test -run '^$' -bench HostFetchCapture -benchtime 1x -v ./cmd/inspector-worker
//
// IW_FETCH_ROUNDS=N sets the rounds (default 7, at least 5);
// IW_FETCH_MODES=seq1k,conc1m runs only those modes; IW_FETCH_BASE_WORKER=
// /abs/bin adds a third host under that worker binary with capture on (a
// same-run A/B of two builds: its preload is the one embedded in it);
// IW_FETCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/p' passes node flags to
// the captured host (a profile; its figures are then not comparable).

// fetchBenchHost serves 1 KiB and 1 MiB bodies on loopback and runs the
// modes the benchmark asks for on its control socket (CTRL): one JSON line
// in ({mode, n}), one out ({ms, cpuMs, bytes}). Every response body is
// read whole by the app and its length checked.
const fetchBenchHost = `
const http = require('http'), net = require('net');
const KB = Buffer.alloc(1024, 'k'), MB = Buffer.alloc(1 << 20, 'm');
const server = http.createServer((req, res) => {
  const body = req.url.startsWith('/1m') ? MB : KB;
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 60000;
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
let base;
async function fetchOne(path, want) {
  const r = await fetch(base + path);
  const b = await r.arrayBuffer();
  if (b.byteLength !== want) throw new Error('body of ' + b.byteLength + ' bytes, want ' + want);
  return b.byteLength;
}
function httpOne(path, want) {
  return new Promise((resolve, reject) => {
    http.get(base + path, { agent }, (res) => {
      let n = 0;
      res.on('data', (c) => { n += c.length; });
      res.on('end', () => n === want ? resolve(n) : reject(new Error('body of ' + n + ' bytes')));
      res.on('error', reject);
    }).on('error', reject);
  });
}
async function postOne(path, want) {
  const r = await fetch(base + path, { method: 'POST', body: KB });
  const b = await r.arrayBuffer();
  if (b.byteLength !== want) throw new Error('body of ' + b.byteLength + ' bytes');
  return b.byteLength;
}
const MODES = {
  seq1k: [fetchOne, '/1k', 1024, 1], seq1m: [fetchOne, '/1m', 1 << 20, 1],
  conc1k: [fetchOne, '/1k', 1024, 16], conc1m: [fetchOne, '/1m', 1 << 20, 16],
  post1k: [postOne, '/1k', 1024, 1], http1k: [httpOne, '/1k', 1024, 1],
};
async function run(mode, n) {
  const [one, path, want, conc] = MODES[mode];
  const c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
  let bytes = 0, next = 0;
  await Promise.all(Array.from({ length: conc }, async () => {
    while (next < n) { next++; bytes += await one(path, want); }
  }));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const c = process.cpuUsage(c0);
  return { ms, cpuMs: (c.user + c.system) / 1000, bytes };
}
server.listen(0, '127.0.0.1', () => {
  base = 'http://127.0.0.1:' + server.address().port;
  const ctl = net.connect(Number(process.env.CTRL_PORT), '127.0.0.1');
  let buf = '';
  ctl.setEncoding('utf8');
  ctl.on('data', async (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const cmd = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      if (cmd.mode === 'exit') process.exit(0);
      let out;
      try { out = await run(cmd.mode, cmd.n); } catch (e) { out = { error: String(e && e.stack || e) }; }
      out.stats = globalThis.inspectorWorker ? globalThis.inspectorWorker.stats() : null;
      ctl.write(JSON.stringify(out) + '\n');
    }
  });
  ctl.write(JSON.stringify({ hello: true }) + '\n');
});
`

// fetchBenchMode is one workload: fetches per host and round (n), and how
// many the warm-up runs.
type fetchBenchMode struct {
	name string
	n    int
	what string
}

var fetchBenchModes = []fetchBenchMode{
	{"seq1k", 300, "fetch 1 KiB, sequential"},
	{"seq1m", 24, "fetch 1 MiB, sequential"},
	{"conc1k", 640, "fetch 1 KiB, 16 concurrent"},
	{"conc1m", 64, "fetch 1 MiB, 16 concurrent"},
	{"post1k", 300, "fetch POST 1 KiB body, 1 KiB response, sequential"},
	{"http1k", 300, "node:http GET 1 KiB, sequential (heads only)"},
}

// fetchBenchResult is one mode's answer of a host.
type fetchBenchResult struct {
	Ms    float64 `json:"ms"`
	CPUMs float64 `json:"cpuMs"`
	Bytes int64   `json:"bytes"`
	Error string  `json:"error"`
	Stats *struct {
		Queued, Dropped, Sent, Acked int
	} `json:"stats"`
}

// fetchBenchHostConn is one host under one worker, reached on its control
// socket.
type fetchBenchHostConn struct {
	name string
	c    net.Conn
	r    *bufio.Reader
}

func (h *fetchBenchHostConn) do(b *testing.B, mode string, n int) fetchBenchResult {
	b.Helper()
	if _, err := fmt.Fprintf(h.c, "{\"mode\":%q,\"n\":%d}\n", mode, n); err != nil {
		b.Fatalf("%s: %v", h.name, err)
	}
	h.c.SetReadDeadline(time.Now().Add(5 * time.Minute)) // a hang, not a slow round
	line, err := h.r.ReadBytes('\n')
	if err != nil {
		b.Fatalf("%s: reading the %s result: %v", h.name, mode, err)
	}
	var res fetchBenchResult
	if err := json.Unmarshal(line, &res); err != nil || res.Error != "" {
		b.Fatalf("%s: %s: %v %s", h.name, mode, err, res.Error)
	}
	return res
}

// startFetchBenchHost starts `bin run [flags] -- node host.js` and waits for
// the host to dial the control socket.
func startFetchBenchHost(b *testing.B, name, bin string, nodeArgs []string, flags ...string) *fetchBenchHostConn {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	dir, script := writeScript(b, fetchBenchHost)
	args := append(append([]string{"run", "--port", "0"}, flags...), "--", "node")
	args = append(append(args, nodeArgs...), script)
	saved := workerBin
	workerBin = bin
	w := startCmdEnv(b, dir, []string{"CTRL_PORT=" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)}, args...)
	workerBin = saved
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(time.Minute))
	c, err := ln.Accept()
	if err != nil {
		b.Fatalf("%s: the host never dialled the control socket: %v", name, err)
	}
	b.Cleanup(func() {
		// The host exits on its own (a --cpu-prof profile is written
		// then), and `run` with it; past the wait the worker is killed.
		fmt.Fprintf(c, "{\"mode\":\"exit\"}\n")
		c.Close()
		select {
		case <-w.done:
		case <-time.After(30 * time.Second):
		}
	})
	h := &fetchBenchHostConn{name: name, c: c, r: bufio.NewReader(c)}
	if _, err := h.r.ReadBytes('\n'); err != nil {
		b.Fatalf("%s: no hello: %v", name, err)
	}
	return h
}

func BenchmarkHostFetchCapture(b *testing.B) {
	rounds := 7
	if n, err := strconv.Atoi(os.Getenv("IW_FETCH_ROUNDS")); err == nil && n > 0 {
		rounds = max(n, 5)
	}
	modes := fetchBenchModes
	if only := os.Getenv("IW_FETCH_MODES"); only != "" {
		modes = nil
		for _, m := range fetchBenchModes {
			if strings.Contains(","+only+",", ","+m.name+",") {
				modes = append(modes, m)
			}
		}
	}
	nodeArgs := strings.Fields(os.Getenv("IW_FETCH_NODE_ARGS"))
	hosts := []*fetchBenchHostConn{
		startFetchBenchHost(b, "plain", workerBin, nil, "--no-capture"),
		startFetchBenchHost(b, "capture", workerBin, nodeArgs),
	}
	if base := os.Getenv("IW_FETCH_BASE_WORKER"); base != "" {
		hosts = append(hosts, startFetchBenchHost(b, "base", base, nil))
	}
	// Warm-up: the JIT, the keep-alive sockets, the journals.
	for _, m := range modes {
		for _, h := range hosts {
			h.do(b, m.name, max(m.n/4, 16))
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// per mode, per host: per-round ms and cpu ms
		ms := map[string]map[string][]float64{}
		cpu := map[string]map[string][]float64{}
		var last map[string]fetchBenchResult
		for r := 0; r < rounds; r++ {
			last = map[string]fetchBenchResult{}
			for _, m := range modes {
				if ms[m.name] == nil {
					ms[m.name], cpu[m.name] = map[string][]float64{}, map[string][]float64{}
				}
				for k := range hosts {
					h := hosts[(k+r)%len(hosts)] // rotate who goes first
					res := h.do(b, m.name, m.n)
					ms[m.name][h.name] = append(ms[m.name][h.name], res.Ms)
					cpu[m.name][h.name] = append(cpu[m.name][h.name], res.CPUMs)
					if m.name == modes[len(modes)-1].name {
						last[h.name] = res
					}
				}
			}
		}
		b.StopTimer()
		var sb strings.Builder
		fmt.Fprintf(&sb, "%d rounds; time per fetch (ms, median), capture / --no-capture per round [min–max], and the host's CPU ratio:\n", rounds)
		for _, m := range modes {
			p, c := ms[m.name]["plain"], ms[m.name]["capture"]
			fmt.Fprintf(&sb, "  %-7s %-52s plain %.3f ms, capture %.3f ms: %s; cpu %s\n", m.name, m.what,
				median(p)/float64(m.n), median(c)/float64(m.n), ratioLine(c, p), ratioLine(cpu[m.name]["capture"], cpu[m.name]["plain"]))
			if bs := ms[m.name]["base"]; bs != nil {
				fmt.Fprintf(&sb, "  %-7s %-52s base %.3f ms: base/plain %s; capture/base %s; cpu capture/base %s\n", "", "",
					median(bs)/float64(m.n), ratioLine(bs, p), ratioLine(c, bs), ratioLine(cpu[m.name]["capture"], cpu[m.name]["base"]))
			}
		}
		for _, h := range hosts {
			if s := last[h.name].Stats; s != nil {
				fmt.Fprintf(&sb, "  %s producer: queued %d, dropped %d, sent %d, acked %d\n", h.name, s.Queued, s.Dropped, s.Sent, s.Acked)
			}
		}
		b.Log(sb.String())
		for _, m := range modes {
			b.ReportMetric(medianRatio(ms[m.name]["capture"], ms[m.name]["plain"]), m.name+"-x")
		}
		b.StartTimer()
	}
}

// ratioLine is "1.23× [1.10–1.40]": the median per-round ratio a/b and
// the range over rounds.
func ratioLine(a, b []float64) string {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = a[i] / b[i]
	}
	s := append([]float64(nil), r...)
	sort.Float64s(s)
	return fmt.Sprintf("%.3f× [%.2f–%.2f]", s[len(s)/2], s[0], s[len(s)-1])
}
