//go:build linux

package clientjs_test

// A page that stops reading a streamed fetch response, in a real browser:
// with client.js the page's cancel (reader.cancel(), body.cancel(), a
// `for await` left early, the reader of a pipeThrough cancelled) must close
// the server's connection as soon as without it, and the capture's entry
// must say the body was cancelled with the bytes it read. An unread
// response the page drops is closed when the capture's stream is
// collected (Chromium alone keeps that connection open until the page
// goes; the page cannot tell the difference), never held open by the
// capture.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	clientjs "github.com/inspector-worker/inspector-worker/client/js"
)

// pageCancelJS runs each case against the SSE (slow) and IDLE origins and
// POSTs the results to /report. Each origin is a server of its own, so the
// browser's six connections per host are never used up by held streams
// (the page and its reports stay on a third).
const pageCancelJS = `
const GUARD_MS = 6000;
async function one(url, form) {
  const r = await fetch(url);
  let stop, got = 0, cancelAt = 0, t0 = 0;
  if (form === 'reader') {
    const rd = r.body.getReader();
    const x = await rd.read();
    got += x.done ? 0 : x.value.length;
    stop = () => rd.cancel();
  } else if (form === 'body') {
    stop = () => r.body.cancel();
  } else if (form === 'break') {
    let atBreak;
    const breaking = new Promise((res) => { atBreak = res; });
    const loop = (async () => {
      for await (const c of r.body) { got += c.length; cancelAt = Date.now(); t0 = performance.now(); atBreak(); break; }
    })();
    await breaking;
    stop = () => loop;
  } else {
    const rd = r.body.pipeThrough(new TextDecoderStream()).getReader();
    const x = await rd.read();
    got += x.done ? 0 : x.value.length;
    stop = () => rd.cancel();
  }
  if (!cancelAt) { cancelAt = Date.now(); t0 = performance.now(); }
  const settled = await Promise.race([stop().then(() => true, () => true), new Promise((res) => setTimeout(() => res(false), GUARD_MS))]);
  return { status: r.status, type: r.type, settled, settleMs: settled ? performance.now() - t0 : null, cancelAt, read: got > 0, bodyUsed: r.bodyUsed };
}
async function drop(url) {
  let r = await fetch(url);
  const out = { status: r.status };
  await new Promise((res) => setTimeout(res, 100));
  r = null;
  out.droppedAt = Date.now();
  for (let i = 0; i < 20; i++) { gc(); await new Promise((res) => setTimeout(res, 50)); }
  return out;
}
async function main() {
  const res = {};
  for (const [route, origin] of [['sse', SSE], ['idle', IDLE]]) {
    for (const form of ['reader', 'body', 'break', 'pipe']) {
      try { res[route + '-' + form] = await one(origin + '/' + route + '?run=' + RUN + '&c=' + form, form); } catch (e) { res[route + '-' + form] = { error: String(e) }; }
    }
  }
  try { res.drop = await drop(IDLE + '/idle?run=' + RUN + '&c=drop'); } catch (e) { res.drop = { error: String(e) }; }
  res.captured = typeof window.__inspectorWorkerClient === 'object';
  await fetch('/report', { method: 'POST', body: JSON.stringify(res) });
}
main();
`

// cancelBound is how long a cancel may take to settle, and the server to
// see the connection close, before the test calls it a hang: a browser
// takes milliseconds; a capture that holds the stream takes hours (~120 B/s
// up to the 1 MiB budget) or forever (an idle stream).
const cancelBound = 5 * time.Second

// closeLog records when each request's connection closed, by request URI.
type closeLog struct {
	mu     sync.Mutex
	closed map[string]time.Time
}

func (l *closeLog) at(uri string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.closed[uri]
	return t, ok
}

// streamServer serves /sse (an event every 130 ms, ~120 B/s, never
// ending) and /idle (one event, then nothing) to any origin, and notes
// when the client closed each connection.
func streamServer(t *testing.T, log *closeLog, stop <-chan struct{}) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	event := func(i int) string { return fmt.Sprintf("data: tick %03d\n\n", i) }
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/sse" && r.URL.Path != "/idle" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Type", "text/event-stream")
		// Not reusable: a browser that stops reading a reusable stream may
		// drain it for up to 5 s (net's HttpResponseBodyDrainer) before
		// closing, with or without capture.
		w.Header().Set("Connection", "close")
		_, _ = io.WriteString(w, event(0))
		w.(http.Flusher).Flush()
		var tick <-chan time.Time
		if r.URL.Path == "/sse" {
			tk := time.NewTicker(130 * time.Millisecond)
			defer tk.Stop()
			tick = tk.C
		}
		for i := 1; ; i++ {
			select {
			case <-r.Context().Done():
				log.mu.Lock()
				log.closed[r.URL.RequestURI()] = time.Now()
				log.mu.Unlock()
				return
			case <-stop:
				return
			case <-tick:
				_, _ = io.WriteString(w, event(i))
				w.(http.Flusher).Flush()
			}
		}
	})
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String()
}

func TestChromiumPageFetchCancel(t *testing.T) {
	log := &closeLog{closed: map[string]time.Time{}}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) }) // runs before the servers' Shutdown (cleanups are LIFO)
	sse, idle := streamServer(t, log, stop), streamServer(t, log, stop)

	worker := &recordingWorker{}
	reports := make(chan map[string]any, 2)
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
	mux.HandleFunc("/app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = fmt.Fprintf(w, "const SSE = %q, IDLE = %q, RUN = %q;\n%s", sse, idle, r.URL.Query().Get("run"), pageCancelJS)
	})
	mux.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err == nil {
			reports <- m
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		client, run := "", "plain"
		if r.URL.Path == "/captured" {
			client = `<script src="/client.js" data-endpoint="ws://` + addr + `/client" data-token="t"></script>`
			run = "cap"
		} else if r.URL.Path != "/plain" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<!doctype html><html><head><title>cancel page</title>`+client+`</head><body><script src="/app.js?run=`+run+`"></script></body></html>`)
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	base := "http://" + addr
	wait := func(what string) map[string]any {
		select {
		case m := <-reports:
			return m
		case <-time.After(120 * time.Second):
			t.Fatalf("no report from the %s page", what)
			return nil
		}
	}
	// --expose-gc: the drop case collects the response it dropped.
	startChromium(t, t.TempDir(), base+"/plain", "--js-flags=--expose-gc")
	plain := wait("plain")
	startChromium(t, t.TempDir(), base+"/captured", "--js-flags=--expose-gc")
	captured := wait("captured")
	if plain["captured"] != false || captured["captured"] != true {
		t.Fatalf("client.js loaded: plain %v, captured %v", plain["captured"], captured["captured"])
	}

	type pageCase struct{ name, origin, uri string }
	var cases []pageCase
	for _, route := range []struct{ name, origin string }{{"sse", sse}, {"idle", idle}} {
		for _, form := range []string{"reader", "body", "break", "pipe"} {
			cases = append(cases, pageCase{route.name + "-" + form, route.origin, "/" + route.name + "?run=%s&c=" + form})
		}
	}
	cases = append(cases, pageCase{"drop", idle, "/idle?run=%s&c=drop"})

	// When the server saw each connection close, in ms after the page's
	// cancel (or drop); -1: not within cancelBound.
	closeAfter := func(rep map[string]any, c pageCase, run string) float64 {
		r, _ := rep[c.name].(map[string]any)
		since, ok := r["cancelAt"].(float64)
		if !ok {
			since, ok = r["droppedAt"].(float64)
		}
		if !ok {
			t.Fatalf("%s (%s): no result: %v", c.name, run, r)
		}
		start := time.UnixMilli(int64(since))
		for {
			if at, ok := log.at(fmt.Sprintf(c.uri, run)); ok {
				return float64(at.Sub(start).Microseconds()) / 1000
			}
			if time.Since(start) > cancelBound {
				return -1
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	figure := func(ms float64) string {
		if ms < 0 {
			return "not within " + cancelBound.String()
		}
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
	settle := func(r map[string]any) string {
		if ms, ok := r["settleMs"].(float64); ok {
			return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
		}
		return "not within 6 s"
	}
	closes := map[string]float64{}
	for _, c := range cases {
		p, _ := plain[c.name].(map[string]any)
		cp, _ := captured[c.name].(map[string]any)
		pc, cc := closeAfter(plain, c, "plain"), closeAfter(captured, c, "cap")
		closes[c.name] = cc
		if c.name == "drop" {
			t.Logf("%s: the server saw the close after the page dropped the response: plain %s, capture %s", c.name, figure(pc), figure(cc))
			continue
		}
		t.Logf("%s: cancel settled: plain %s, capture %s; the server saw the close after: plain %s, capture %s",
			c.name, settle(p), settle(cp), figure(pc), figure(cc))
	}
	for _, c := range cases {
		p, _ := plain[c.name].(map[string]any)
		cp, _ := captured[c.name].(map[string]any)
		if cc := closes[c.name]; cc < 0 || cc > float64(cancelBound.Milliseconds()) {
			t.Errorf("%s: the server did not see the connection close within %v of the page's cancel/drop (capture)", c.name, cancelBound)
		}
		if c.name == "drop" {
			continue
		}
		if p["settled"] != true || cp["settled"] != true {
			t.Errorf("%s: settled: plain %v, capture %v", c.name, p["settled"], cp["settled"])
		} else if ms := cp["settleMs"].(float64); ms > float64(cancelBound.Milliseconds()) {
			t.Errorf("%s: the capture's cancel settled after %.0f ms", c.name, ms)
		}
		for _, k := range []string{"status", "type", "settled", "read", "bodyUsed", "error"} {
			if fmt.Sprint(p[k]) != fmt.Sprint(cp[k]) {
				t.Errorf("%s: the page saw %s %v with capture, %v without", c.name, k, cp[k], p[k])
			}
		}
	}

	// The entries: cancelled (or dropped) with the bytes read, which are
	// what the server sent.
	var fetches []*capturedFetch
	deadline := time.Now().Add(30 * time.Second)
	for {
		worker.mu.Lock()
		items := append([]json.RawMessage(nil), worker.items...)
		worker.mu.Unlock()
		fetches = assembleFetches(t, items)
		ended := 0
		for _, f := range fetches {
			if f.end != nil {
				ended++
			}
		}
		if ended >= len(cases) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	sent := ""
	for i := 0; i < 200; i++ {
		sent += fmt.Sprintf("data: tick %03d\n\n", i)
	}
	cancelled := regexp.MustCompile(`^the application cancelled the response body after (\d+) bytes$`)
	dropped := regexp.MustCompile(`^the application dropped the response before its body ended \((\d+) bytes read\)$`)
	for _, c := range cases {
		url := c.origin + fmt.Sprintf(c.uri, "cap")
		var f *capturedFetch
		for _, x := range fetches {
			if x.request != nil && x.request.Request.URL == url {
				f = x
			}
		}
		if f == nil {
			t.Errorf("%s: no entry for %s", c.name, url)
			continue
		}
		if f.end == nil || f.end.Failed == nil || !f.end.Failed.Aborted {
			t.Errorf("%s: the entry does not end as aborted: %s %+v", c.name, f.phases, f.end)
			continue
		}
		re := cancelled
		if c.name == "drop" {
			re = dropped
		}
		m := re.FindStringSubmatch(f.end.Failed.Message)
		if m == nil {
			t.Errorf("%s: failed message %q", c.name, f.end.Failed.Message)
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n != len(f.respBody) || len(f.respBody) > len(sent) || string(f.respBody) != sent[:len(f.respBody)] {
			t.Errorf("%s: %s bytes said, %d recorded: %q", c.name, m[1], len(f.respBody), f.respBody)
		}
	}
}
