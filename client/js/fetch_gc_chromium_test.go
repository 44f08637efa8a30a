//go:build linux

package clientjs_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	clientjs "github.com/inspector-worker/inspector-worker/client/js"
)

// bigFetchJS: 1 MiB fetches one after another, each body read whole
// (arrayBuffer), a minor GC forced while each is read; a fetch that does
// not end within 10 s is reported as hung. The report goes to /report.
const bigFetchJS = `
async function main() {
  const out = [];
  for (let i = 0; i < 6; i++) {
    const t0 = performance.now();
    const r = await fetch('/big?' + i, { cache: 'no-store' });
    const body = r.arrayBuffer();
    for (let k = 0; k < 3; k++) { await new Promise((res) => setTimeout(res, 0)); gc({ type: 'minor' }); }
    const n = await Promise.race([body.then((b) => b.byteLength), new Promise((res) => setTimeout(() => res('hung'), 10000))]);
    out.push({ n, ms: Math.round(performance.now() - t0) });
  }
  await fetch('/report', { method: 'POST', body: JSON.stringify({ out, captured: typeof window.__inspectorWorkerClient === 'object' }) });
}
main();
`

// A page's 1 MiB fetches through the capture end as without it, with minor
// GCs while they are read. Chromium drops an unmodified wrapper of a live
// object in a minor GC and makes a new one when asked again: the tap's
// WeakRef to its stream controller was cleared while the body was read, the
// read-ahead took the body for abandoned and the page's arrayBuffer() never
// settled (3 of the first 6 fetches in a run of the old code).
func TestChromiumPageFetchBigBodiesAcrossGC(t *testing.T) {
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	worker := &recordingWorker{}
	reports := make(chan map[string]any, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("/client", worker)
	mux.HandleFunc("/client.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write(clientjs.ClientJS())
	})
	mux.HandleFunc("/app.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = io.WriteString(w, bigFetchJS)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(big)
	})
	mux.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err == nil {
			reports <- m
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<!doctype html><html><head><title>big fetch</title><script src="/client.js" data-endpoint="ws://`+addr+
			`/client" data-token="t"></script></head><body><script src="/app.js"></script></body></html>`)
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	startChromium(t, t.TempDir(), "http://"+addr+"/", "--js-flags=--expose-gc")
	var rep map[string]any
	select {
	case rep = <-reports:
	case <-time.After(2 * time.Minute):
		t.Fatal("no report from the page")
	}
	t.Logf("fetches (bytes read, ms): %v", rep["out"])
	if rep["captured"] != true {
		t.Fatalf("the client did not load: %v", rep)
	}
	for i, f := range rep["out"].([]any) {
		if n := f.(map[string]any)["n"]; n != float64(1<<20) {
			t.Errorf("fetch %d: the body read gave %v, want %d bytes", i, n, 1<<20)
		}
	}
}
