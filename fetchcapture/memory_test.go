package fetchcapture

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// 10,000 responses of 1 MB each (every chunk a fresh allocation, as the
// decoder makes them) keep the journal within its byte budget by its own
// accounting, and the Go heap near it once collected. The figures are
// logged (go test -v -run TestMemory ./fetchcapture).
func TestMemoryTenThousandMegabyteResponses(t *testing.T) {
	const size = 1 << 20
	responses := 10000
	if raceEnabled {
		// 10 GB of allocations under the race detector starved the tests of
		// other packages running beside it (go test ./...); 1,000 responses
		// still pass the budget 15 times over.
		responses = 1000
		t.Logf("race detector on: %d responses instead of 10,000 (run without -race for the full figure)", responses)
	}
	j := New(Options{})
	open(j, host)
	_, sub := j.Subscribe(0) // a reader that never reads: its queue is bounded too
	defer sub.Close()
	peak := int64(0)
	for i := range responses {
		id := fmt.Sprint(i)
		feed(j, host, reqEv(id, "http://x/big"), respEv(id, "http://x/big", 200))
		for off := 0; off < size; off += sourceproto.MaxChunkBytes {
			n := min(sourceproto.MaxChunkBytes, size-off)
			feed(j, host, bodyEv(id, int64(off), string(make([]byte, n))))
		}
		feed(j, host, finEv(id, size, false))
		if b := j.Stats().Bytes; b > peak {
			peak = b
		}
	}
	st := j.Stats()
	if peak > DefaultMaxBytes || st.Bytes > DefaultMaxBytes {
		t.Fatalf("journal at %d bytes (peak %d), budget %d", st.Bytes, peak, DefaultMaxBytes)
	}
	if st.Entries == 0 || st.Entries > DefaultMaxEntries || st.Evicted == 0 {
		t.Fatalf("stats %+v", st)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d × %d B: journal %d entries, %.1f MiB by its accounting (peak %.1f MiB, budget %d MiB), evicted %d; Go heap in use %.1f MiB, from the OS %.1f MiB",
		responses, size, st.Entries, float64(st.Bytes)/(1<<20), float64(peak)/(1<<20), DefaultMaxBytes>>20, st.Evicted,
		float64(ms.HeapInuse)/(1<<20), float64(ms.HeapSys)/(1<<20))
	// The heap holds the journal plus the subscriber's bounded queue
	// (steps are pointers; bodies are not in it) and test garbage: a
	// generous bound that still fails if bodies leaked past eviction.
	if ms.HeapInuse > 3*DefaultMaxBytes {
		t.Fatalf("heap in use %d MiB after GC", ms.HeapInuse>>20)
	}
}
