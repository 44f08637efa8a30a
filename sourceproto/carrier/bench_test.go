package carrier

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/sourceprototest"
)

// BenchmarkClientVsDecode measures append frames per second through
// ClientHandler — a real loopback WebSocket, the read loop, the registry,
// a counting consumer, and the ack back through the sendLoop — against
// the same frames given to sourceproto.Decode and to Source.Ingest
// directly. The three run interleaved in chunks inside one run (this
// machine is shared and noisy; sequential A-then-B ratios lie), so the
// reported ratios are the numbers to read:
//
//	go test -run '^$' -bench ClientVsDecode ./sourceproto/carrier/
//
// The page side runs in the benchmark's goroutine on the same machine, so
// "carrier" includes the client's own WebSocket costs.
func BenchmarkClientVsDecode(b *testing.B) {
	for _, n := range []int{1, 32} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) { benchClientVsDecode(b, n) })
	}
}

// seqBase makes every sequence number 13 digits wide, so one frame can be
// reused with its seq rewritten in place.
const seqBase = 1_000_000_000_000

// countingConsumer counts delivered items.
type countingConsumer struct {
	sourceproto.NopConsumer
	items atomic.Uint64
}

func (c *countingConsumer) Appended(_ sourceproto.SourceRef, _ uint64, a *sourceproto.Append) {
	c.items.Add(uint64(len(a.Items)))
}

// benchFrame is an append frame of n console events whose seq can be set.
type benchFrame struct {
	buf    []byte
	seqPos int
}

func newBenchFrame(b *testing.B, p *sourceprototest.Producer, n int) *benchFrame {
	items := make([]sourceproto.Item, n)
	for i := range items {
		items[i] = sourceprototest.Log("user logged in", "id", "42")
	}
	buf := p.Append(b, items...)
	return &benchFrame{buf: buf, seqPos: bytes.Index(buf, []byte(`"seq":`)) + len(`"seq":`)}
}

func (f *benchFrame) setSeq(seq uint64) {
	for i := f.seqPos + 12; i >= f.seqPos; i-- {
		f.buf[i] = byte('0' + seq%10)
		seq /= 10
	}
}

// benchProducer says hello and an initial replace that leaves the next
// sequence number at seqBase. open sends a frame and returns the answer.
func benchProducer(b *testing.B, id, token string, open func([]byte) []byte) *sourceprototest.Producer {
	p := sourceprototest.New(id, token)
	p.Welcomed(b, open(p.Hello(b, 0, sourceproto.TopicConsole)))
	p.Lose(seqBase - 1)
	sourceprototest.ExpectAck(b, open(p.Replace(b, sourceproto.ReplaceInitial)), seqBase-1)
	return p
}

// benchRig is a page connected to a ClientHandler, and a source of a
// separate registry fed directly, each with a reusable frame.
type benchRig struct {
	ctx     context.Context
	ws      *websocket.Conn
	wire    *benchFrame // sent over the WebSocket
	counter *countingConsumer
	src     *sourceproto.Source // the direct path
	local   *benchFrame         // given to src.Ingest and Decode
}

func newBenchRig(b *testing.B, n int) *benchRig {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	tok, _ := sourceproto.NewToken()
	r := &benchRig{ctx: ctx, counter: &countingConsumer{}}
	h, err := NewClientHandler(ClientOptions{Registry: sourceproto.NewRegistry(r.counter), Token: tok})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	b.Cleanup(func() { _ = h.Shutdown(context.Background()) })
	r.ws, _, err = websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/client",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {pageOrigin}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = r.ws.CloseNow() })
	r.wire = newBenchFrame(b, benchProducer(b, "bench", tok.Reveal(), func(f []byte) []byte {
		if err := r.ws.Write(ctx, websocket.MessageText, f); err != nil {
			b.Fatal(err)
		}
		_, ans, err := r.ws.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return ans
	}), n)
	direct := sourceproto.NewRegistry(&countingConsumer{})
	r.local = newBenchFrame(b, benchProducer(b, "bench", tok.Reveal(), func(f []byte) []byte {
		if r.src == nil {
			s, res := direct.Open(f, sourceproto.OpenOptions{Role: sourceproto.RoleClient, Token: tok})
			r.src = s
			return res.Replies[0]
		}
		return r.src.Ingest(f).Replies[0]
	}), n)
	return r
}

func benchClientVsDecode(b *testing.B, n int) {
	r := newBenchRig(b, n)
	const chunk = 128
	var carrier, ingest, decode time.Duration
	wireSeq, localSeq := uint64(seqBase), uint64(seqBase)
	b.SetBytes(int64(len(r.wire.buf)))
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		t0 := time.Now()
		for i := 0; i < chunk; i++ {
			r.wire.setSeq(wireSeq)
			wireSeq += uint64(n)
			if err := r.ws.Write(r.ctx, websocket.MessageText, r.wire.buf); err != nil {
				b.Fatal(err)
			}
		}
		for i := 0; i < chunk; i++ {
			if _, _, err := r.ws.Read(r.ctx); err != nil { // the acks
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		for i := 0; i < chunk; i++ {
			r.local.setSeq(localSeq)
			localSeq += uint64(n)
			if res := r.src.Ingest(r.local.buf); res.Err != nil {
				b.Fatal(res.Err)
			}
		}
		t2 := time.Now()
		for i := 0; i < chunk; i++ {
			if _, err := sourceproto.Decode(r.local.buf); err != nil {
				b.Fatal(err)
			}
		}
		t3 := time.Now()
		carrier, ingest, decode = carrier+t1.Sub(t0), ingest+t2.Sub(t1), decode+t3.Sub(t2)
	}
	b.StopTimer()
	frames := float64((b.N + chunk - 1) / chunk * chunk)
	if got, want := r.counter.items.Load(), uint64(frames)*uint64(n); got != want {
		b.Fatalf("consumer counted %d items, want %d", got, want)
	}
	b.ReportMetric(frames/carrier.Seconds(), "carrier-frames/s")
	b.ReportMetric(frames/ingest.Seconds(), "ingest-frames/s")
	b.ReportMetric(frames/decode.Seconds(), "decode-frames/s")
	b.ReportMetric(decode.Seconds()/carrier.Seconds(), "carrier/decode")
	b.ReportMetric(ingest.Seconds()/carrier.Seconds(), "carrier/ingest")
}
