package sourceproto

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Benchmarks of the client ingest hot path: append frames of console
// events, decoded and validated by Source.Ingest, against a baseline of
// plain encoding/json.Unmarshal of the same bytes into the same Go types
// (no validation, no state). Run on one core:
//
//	go test -run '^$' -bench . -cpu 1 ./sourceproto/
//
// BenchmarkIngestVsStdJSON interleaves the two in chunks inside one run
// (this machine is shared and noisy, so sequential A-then-B ratios lie)
// and reports both rates and their ratio.

// seqBase makes every sequence number 13 digits wide, so the benchmark can
// rewrite it in place without re-encoding the frame.
const seqBase = 1_000_000_000_000

// benchFrame is a reusable append frame of n console events.
type benchFrame struct {
	buf    []byte
	seqPos int
	n      int
}

func newBenchFrame(n int) *benchFrame {
	items := make([]string, n)
	for i := range items {
		items[i] = consoleItem
	}
	s := appendFrame("c1", 1, seqBase, 0, items...)
	return &benchFrame{buf: []byte(s), seqPos: strings.Index(s, `"seq":`) + len(`"seq":`), n: n}
}

// setSeq writes seq (13 digits) into the frame.
func (f *benchFrame) setSeq(seq uint64) {
	for i := f.seqPos + 12; i >= f.seqPos; i-- {
		f.buf[i] = byte('0' + seq%10)
		seq /= 10
	}
}

// benchSource opens c1 and moves it to seq seqBase.
func benchSource(b *testing.B) *Source {
	reg := NewRegistry(nil)
	src, res := reg.Open([]byte(helloFrame("c1", caps, topics)), OpenOptions{Role: RoleClient, Token: testToken})
	if src == nil {
		b.Fatal(res.Err)
	}
	if r := src.Ingest([]byte(replaceFrame("c1", 1, seqBase-1, "initial"))); r.Err != nil {
		b.Fatal(r.Err)
	}
	return src
}

type stdFrame struct {
	V      int    `json:"v"`
	Type   string `json:"type"`
	Source string `json:"source"`
	Gen    uint64 `json:"gen"`
	Seq    uint64 `json:"seq"`
	Body   Append `json:"body"`
}

func benchSizes() []int { return []int{1, 32} }

func BenchmarkIngest(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			src, f := benchSource(b), newBenchFrame(n)
			seq := uint64(seqBase)
			b.SetBytes(int64(len(f.buf)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.setSeq(seq)
				if r := src.Ingest(f.buf); r.Err != nil {
					b.Fatal(r.Err)
				}
				seq += uint64(n)
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func BenchmarkStdJSON(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			f := newBenchFrame(n)
			b.SetBytes(int64(len(f.buf)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var v stdFrame
				if err := json.Unmarshal(f.buf, &v); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func BenchmarkIngestVsStdJSON(b *testing.B) {
	const chunk = 64
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			src, f := benchSource(b), newBenchFrame(n)
			seq := uint64(seqBase)
			var ours, base time.Duration
			for done := 0; done < b.N; done += chunk {
				t0 := time.Now()
				for i := 0; i < chunk; i++ {
					f.setSeq(seq)
					if r := src.Ingest(f.buf); r.Err != nil {
						b.Fatal(r.Err)
					}
					seq += uint64(n)
				}
				t1 := time.Now()
				for i := 0; i < chunk; i++ {
					var v stdFrame
					if err := json.Unmarshal(f.buf, &v); err != nil {
						b.Fatal(err)
					}
				}
				ours, base = ours+t1.Sub(t0), base+time.Since(t1)
			}
			frames := float64((b.N + chunk - 1) / chunk * chunk)
			b.ReportMetric(frames*float64(n)/ours.Seconds(), "ingest-events/s")
			b.ReportMetric(frames*float64(n)/base.Seconds(), "stdjson-events/s")
			b.ReportMetric(base.Seconds()/ours.Seconds(), "speedup")
		})
	}
}
