//go:build linux

package clientjs_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/coder/websocket"
)

// wsSinkPage sends n WebSocket messages of size bytes, one per 10 ms
// timer tick (per 0: the ticks alone, the baseline), and resolves when done.
const wsSinkPage = `<!doctype html><script>
window.__send = (url, n, size, per) => new Promise((resolve) => {
  const ws = new WebSocket(url);
  const text = 'x'.repeat(size);
  let ticks = 0;
  ws.onopen = () => {
    const iv = setInterval(() => {
      for (let i = 0; i < per; i++) ws.send(text.slice(0, size - 8) + String(100000000 + ticks).slice(1));
      if (++ticks >= n) { clearInterval(iv); setTimeout(() => { ws.close(); resolve(ticks); }, 300); }
    }, 10);
  };
});
</script>`

// BenchmarkChromiumWebSocketCost: what one WebSocket message costs
// Chromium's renderer and network service, by size: what the page
// client's pacing (one frame per PACE_MS while a page logs steadily)
// saves. 10 pages each send 400 messages, one per 10 ms tick, to a Go
// sink on loopback; the same ticks without sends are the baseline, in the
// same run. Each line: CPU per message above the baseline.
//
//	go test -run '^$' -bench 'ChromiumWebSocketCost$' -benchtime 1x -v ./client/js/
func BenchmarkChromiumWebSocketCost(b *testing.B) {
	const pages, n = 10, 400
	mux := http.NewServeMux()
	mux.HandleFunc("/p", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, wsSinkPage)
	})
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(1 << 22)
		for {
			_, rd, err := c.Reader(context.Background())
			if err != nil {
				return
			}
			if _, err := io.Copy(io.Discard, rd); err != nil {
				return
			}
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	br := openCDPBrowser(b)
	var ps []*cdpPage
	for range pages {
		p := br.open("http://" + ln.Addr().String() + "/p")
		p.waitEval("typeof __send === 'function'")
		ps = append(ps, p)
	}
	const renderer, network = "renderer", "utility:network.mojom.NetworkService"
	// run returns the renderers' and the network service's CPU, ms.
	run := func(size, per int) (float64, float64) {
		t0 := treeCPUByType(br.pid)
		var wg sync.WaitGroup
		for _, p := range ps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var got int
				if err := p.evalErr(fmt.Sprintf("__send(%q, %d, %d, %d)", "ws://"+ln.Addr().String()+"/ws", n, size, per), &got); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		t1 := treeCPUByType(br.pid)
		return float64((t1[renderer] - t0[renderer]).Milliseconds()), float64((t1[network] - t0[network]).Milliseconds())
	}
	for range b.N {
		for _, size := range []int{256, 8 << 10, 64 << 10} {
			r0, n0 := run(size, 0)
			r1, n1 := run(size, 1)
			msgs := float64(pages * n)
			b.Logf("%6d B messages: renderers %4.0f us, network service %4.0f us per message (ticks alone: %.0f / %.0f ms, with sends: %.0f / %.0f ms)",
				size, 1000*(r1-r0)/msgs, 1000*(n1-n0)/msgs, r0, n0, r1, n1)
		}
	}
}
