package cdpserver

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/sourceprototest"
)

// BenchmarkClientConsoleToDevTools measures client console events delivered
// to one DevTools connection: decoded and validated by the registry,
// projected by the hub, relayed through the session's queue and socket, and
// read by a raw WebSocket client. Batches of 64 events per append, as the
// client bundle sends them under load. Goal: hold ≥ 150k events/s
// (docs/performance.md).
//
//	go test -run '^$' -bench ClientConsole -benchtime 100000x ./cdpserver
func BenchmarkClientConsoleToDevTools(b *testing.B) {
	w := startWorker(b, hostScript, Options{Logf: func(string, ...any) {}})
	reg := sourceproto.NewRegistry(w.srv.ClientConsumer())
	w.srv.SetSourceRegistry(reg)
	token, _ := sourceproto.NewToken()

	dt, _, err := websocket.Dial(context.Background(), w.srv.PageWebSocketURL(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer dt.CloseNow()
	dt.Write(context.Background(), websocket.MessageText, []byte(`{"id":1,"method":"Runtime.enable"}`))

	p := sourceprototest.New("bench-page", token.Reveal())
	src, res := reg.Open(p.Hello(b, sourceproto.CapConsole, sourceproto.TopicConsole),
		sourceproto.OpenOptions{Role: sourceproto.RoleClient, Token: token})
	if src == nil {
		b.Fatalf("open: %s", res.Replies)
	}
	p.Welcomed(b, res.Replies[0])
	src.Ingest(p.Replace(b, sourceproto.ReplaceInitial))

	const batch = 64
	items := make([]sourceproto.Item, batch)
	for i := range items {
		items[i] = sourceprototest.Log("benchmark message with a few words", "and a second argument")
	}
	// Frames are built before the clock starts: the producer is not measured.
	frames := make([][]byte, 0, b.N/batch+1)
	for n := 0; n < b.N; n += batch {
		frames = append(frames, p.Append(b, items...))
	}
	total := len(frames) * batch

	type result struct {
		n    int
		last time.Time
	}
	got := make(chan result)
	go func() {
		var r result
		// Until every event arrived, or none for 3 s (the rest were dropped
		// for this window — counted and announced, not silently lost).
		for r.n < total {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			_, msg, err := dt.Read(ctx)
			cancel()
			if err != nil {
				break
			}
			if bytes.HasPrefix(msg, []byte(`{"method":"Runtime.consoleAPICalled"`)) && bytes.Contains(msg, []byte(`"executionContextId":-`)) {
				r.n++
				r.last = time.Now()
			}
		}
		got <- r
	}()
	time.Sleep(100 * time.Millisecond) // let Runtime.enable's answer settle
	b.ResetTimer()
	start := time.Now()
	for _, f := range frames {
		if r := src.Ingest(f); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
	r := <-got
	b.StopTimer()
	if r.n != total {
		b.Logf("delivered %d of %d events; the rest were dropped for the window, counted", r.n, total)
	}
	elapsed := r.last.Sub(start)
	n := r.n
	b.ReportMetric(float64(n)/elapsed.Seconds(), "events/s")
}
