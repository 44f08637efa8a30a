package fetchcapture

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

var (
	pageA = sourceproto.SourceRef{ID: "a", Gen: 2, Role: sourceproto.RoleClient}
	pageB = sourceproto.SourceRef{ID: "b", Gen: 3, Role: sourceproto.RoleClient}
)

// heapLive is the Go heap's live bytes after a full collection.
func heapLive() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// bigHeaders is ~1 MiB of header values, freshly allocated as the decoder
// allocates each frame's strings: 15 × 64,000 B (the most a 1 MiB frame
// holds at MaxStringBytes per value).
func bigHeaders() []sourceproto.HTTPHeader {
	h := make([]sourceproto.HTTPHeader, 15)
	for i := range h {
		h[i] = sourceproto.HTTPHeader{Name: fmt.Sprintf("x-flood-%d", i), Value: strings.Repeat("v", 64000)}
	}
	return h
}

func hopEv(id string, i int, h []sourceproto.HTTPHeader) *sourceproto.FetchEvent {
	return &sourceproto.FetchEvent{ID: id, Phase: sourceproto.PhaseResponse, Timestamp: 2,
		Response: &sourceproto.FetchResponse{URL: "http://flood/" + fmt.Sprint(i), Status: 302, StatusText: "Found", Headers: h}}
}

// The three floods of a hostile page, each as the decoder would hand them
// to the journal (fresh allocations per frame).
var floods = []struct {
	name string
	run  func(j *Journal, ref sourceproto.SourceRef)
}{
	{"hops_with_1MiB_headers", func(j *Journal, ref sourceproto.SourceRef) {
		feed(j, ref, reqEv("r", "http://flood/"))
		for i := range 150 {
			feed(j, ref, hopEv("r", i, bigHeaders()))
		}
	}},
	{"million_empty_hops", func(j *Journal, ref sourceproto.SourceRef) {
		n := 1_000_000
		if raceEnabled {
			n = 200_000 // the old journal already held ~60 MB for these
		}
		feed(j, ref, reqEv("r", "http://flood/"))
		evs := make([]*sourceproto.FetchEvent, 0, sourceproto.MaxBatchItems)
		for i := range n {
			evs = append(evs, hopEv("r", i, []sourceproto.HTTPHeader{}))
			if len(evs) == cap(evs) {
				feed(j, ref, evs...)
				evs = evs[:0]
			}
		}
		feed(j, ref, evs...)
	}},
	{"unfinished_requests_with_1MiB_headers", func(j *Journal, ref sourceproto.SourceRef) {
		for i := range 150 {
			feed(j, ref, reqEv(fmt.Sprint("u", i), "http://flood/"+fmt.Sprint(i), bigHeaders()...))
		}
	}},
}

// finishedBody records one finished request of ref with a size-byte body
// and returns its request id.
func finishedBody(t *testing.T, j *Journal, ref sourceproto.SourceRef, id string, size int) string {
	t.Helper()
	feed(j, ref, reqEv(id, "http://x/"+id), respEv(id, "http://x/"+id, 200))
	data := strings.Repeat(id[:1], size)
	for off := 0; off < size; off += sourceproto.MaxChunkBytes {
		feed(j, ref, bodyEv(id, int64(off), data[off:min(size, off+sourceproto.MaxChunkBytes)]))
	}
	feed(j, ref, finEv(id, int64(size), false))
	snap, sub := j.Subscribe(0)
	sub.Close()
	for _, e := range snap {
		if e.Steps[0].Request.Source == ref && e.Steps[0].Request.URL == "http://x/"+id {
			return e.RequestID
		}
	}
	t.Fatalf("%s not in the journal", id)
	return ""
}

func readable(t *testing.T, j *Journal, id string, size int, when string) {
	t.Helper()
	if b, err := j.Body(id, true); err != nil || len(b.Data) != size || b.Truncated {
		t.Errorf("%s: body of %s: %d bytes, %v (want %d whole)", when, id, len(b.Data), err, size)
	}
}

// A hostile page floods the journal three ways (the attack measured on the old journal:
// redirect hops of 1 MiB heads, a million empty hops, unfinished requests
// of 1 MiB heads). After each: the journal's accounting equals what it
// keeps (checkInvariants: every entry re-measured, every scope summed) and
// fits the budgets with pages within their share; the Go heap holds no
// more than the accounting says plus a reader's bounded queue; the host's
// body and another page's are still readable. After the page disconnects,
// what it left is released.
func TestJournalFloods(t *testing.T) {
	for _, fl := range floods {
		t.Run(fl.name, func(t *testing.T) {
			j := New(Options{})
			open(j, host)
			open(j, pageB)
			hostID := finishedBody(t, j, host, "h1", 200<<10)
			pageID := finishedBody(t, j, pageB, "b1", 100<<10)
			_, idle := j.Subscribe(0) // a window that never reads: its queue is bounded too
			defer idle.Close()
			base := heapLive()
			open(j, pageA)
			start := time.Now()
			fl.run(j, pageA)
			took := time.Since(start)
			checkInvariants(t, j)
			st := j.Stats()
			_, pages := held(j)
			heap := heapLive() - base
			t.Logf("%s: fed in %v; journal %d entries, %.1f MiB (pages %.1f MiB, budget %d MiB, pages' share %d MiB), evicted %d, violations %d; Go heap +%.1f MiB",
				fl.name, took.Round(time.Millisecond), st.Entries, float64(st.Bytes)/(1<<20), float64(pages)/(1<<20),
				DefaultMaxBytes>>20, DefaultMaxBytes/pagesShare>>20, st.Evicted, st.Violations, float64(heap)/(1<<20))
			if st.Bytes > DefaultMaxBytes || pages > DefaultMaxBytes/pagesShare {
				t.Errorf("journal at %d bytes, pages %d: over the budget", st.Bytes, pages)
			}
			// The accounting covers the heap: what the journal keeps, plus
			// the idle reader's queue (bounded in bytes), plus slack for
			// the runtime's own structures.
			if limit := st.Bytes + subscriberBytes + 4<<20; heap > limit {
				t.Errorf("the Go heap grew by %.1f MiB, more than the journal accounts for (%.1f MiB) plus a reader's queue and slack (%.1f MiB)",
					float64(heap)/(1<<20), float64(st.Bytes)/(1<<20), float64(limit)/(1<<20))
			}
			readable(t, j, hostID, 200<<10, "after the flood")
			readable(t, j, pageID, 100<<10, "after the flood")

			j.SourceClosed(pageA, sourceproto.CloseGoingAway)
			checkInvariants(t, j)
			st = j.Stats()
			_, pages = held(j)
			left := heapLive() - base
			t.Logf("%s: after the page left: journal %.1f MiB (pages %.1f MiB); Go heap +%.1f MiB", fl.name,
				float64(st.Bytes)/(1<<20), float64(pages)/(1<<20), float64(left)/(1<<20))
			if left > subscriberBytes+4<<20 {
				t.Errorf("the Go heap still holds +%.1f MiB after the page left", float64(left)/(1<<20))
			}
			readable(t, j, hostID, 200<<10, "after the page left")
			readable(t, j, pageID, 100<<10, "after the page left")
		})
	}
}

// The journal's cost model covers the Go heap for many small entries
// (where fixed overheads dominate) and for entries of many hops: what the
// journal accounts is at least what the heap holds for it, and not wildly
// more (a model that overcounts evicts honest entries early).
func TestAccountingCoversTheHeap(t *testing.T) {
	for _, tc := range []struct {
		name string
		feed func(j *Journal, id string)
	}{
		{"small_finished", func(j *Journal, id string) {
			feed(j, host, reqEv(id, "http://x/"+id, sourceproto.HTTPHeader{Name: "accept", Value: "*/*"}),
				respEv(id, "http://x/"+id, 200), bodyEv(id, 0, "ok"), finEv(id, 2, false))
		}},
		{"twenty_hops", func(j *Journal, id string) {
			feed(j, host, reqEv(id, "http://x/"+id))
			for i := range MaxRedirects {
				feed(j, host, hopEv(id, i, []sourceproto.HTTPHeader{{Name: "location", Value: "/" + fmt.Sprint(i+1)}}))
			}
			feed(j, host, respEv(id, "http://x/end", 200), failEv(id, "reset", false))
		}},
		{"tiny_chunks", func(j *Journal, id string) {
			feed(j, host, reqEv(id, "http://x/"+id), respEv(id, "http://x/"+id, 200))
			for i := range 64 {
				feed(j, host, bodyEv(id, int64(i), "z"))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 5000
			j := New(Options{MaxEntries: n, MaxBytes: 1 << 30})
			open(j, host)
			base := heapLive()
			for i := range n {
				tc.feed(j, fmt.Sprint(i))
			}
			heap := heapLive() - base
			st := j.Stats()
			runtime.KeepAlive(j)
			t.Logf("%s: %d entries, accounted %.0f B each, heap %.0f B each", tc.name, st.Entries, float64(st.Bytes)/n, float64(heap)/n)
			if st.Entries != n {
				t.Fatalf("%d entries", st.Entries)
			}
			if heap > st.Bytes || 2*heap < st.Bytes {
				t.Errorf("accounted %d B for %d B of heap: the cost model is off", st.Bytes, heap)
			}
		})
	}
}

// More than MaxRedirects hops end the request failed, as Chromium does; a
// live reader sees every hop, the journal then keeps the request line and
// the failure; later phases are ignored.
func TestRedirectCap(t *testing.T) {
	j := New(Options{})
	open(j, host)
	_, sub := j.Subscribe(0)
	defer sub.Close()
	loc := []sourceproto.HTTPHeader{{Name: "location", Value: strings.Repeat("/next", 2000)}}
	feed(j, host, reqEv("a", "http://x/", loc...))
	for i := range MaxRedirects + 5 {
		feed(j, host, hopEv("a", i, loc))
	}
	feed(j, host, finEv("a", 0, false))
	checkInvariants(t, j)
	steps, _, _ := sub.Next(context.Background(), nil)
	want := "req," + strings.Repeat("hop,", MaxRedirects) + "resp,fail"
	if got := kinds(steps); got != want {
		t.Fatalf("live steps %s, want %s", got, want)
	}
	if f := steps[len(steps)-1].Failure; !strings.Contains(f.Message, "more than 20 redirects") {
		t.Fatalf("failure %q", f.Message)
	}
	e := onlyEntry(t, j)
	if got := kinds(e.Steps); got != "req,fail" {
		t.Fatalf("kept steps %s", got)
	}
	if st := j.Stats(); st.Violations != 5 || st.Bytes > 4<<10 {
		t.Fatalf("violations %d, %d bytes kept", st.Violations, st.Bytes)
	}
}

// A page that disconnects with requests unfinished: they end failed (a
// live reader sees the full heads, then the failure) and keep only their
// request line; their bodies answer why they are gone.
func TestSourceClosedReleasesUnfinished(t *testing.T) {
	j := New(Options{})
	open(j, pageA)
	feed(j, pageA, reqEv("a", "http://x/a", bigHeaders()...), respEv("a", "http://x/a", 302), hopEv("a", 1, bigHeaders()), bodyEv("a", 0, "part"))
	feed(j, pageA, reqEv("done", "http://x/done"), respEv("done", "http://x/done", 200), bodyEv("done", 0, "all"), finEv("done", 3, false))
	_, sub := j.Subscribe(0)
	defer sub.Close()
	j.SourceClosed(pageA, sourceproto.CloseGoingAway)
	checkInvariants(t, j)
	steps, _, _ := sub.Next(context.Background(), nil)
	if len(steps) != 1 || steps[0].Kind != StepFailed || len(steps[0].Request.Headers) != 15 {
		t.Fatalf("live: %s", kinds(steps))
	}
	snap, s2 := j.Subscribe(0)
	s2.Close()
	if got := kinds(snap[0].Steps); got != "req,fail" || snap[0].Steps[0].Request.Headers != nil {
		t.Fatalf("released entry: %s, headers %v", got, snap[0].Steps[0].Request.Headers)
	}
	if st := j.Stats(); st.Bytes > 8<<10 {
		t.Fatalf("the page still holds %d bytes", st.Bytes)
	}
	if _, err := j.Body(snap[0].RequestID, true); !errors.Is(err, ErrReleased) || !strings.Contains(err.Error(), "page disconnected") {
		t.Fatalf("released body: %v", err)
	}
	readable(t, j, snap[1].RequestID, 3, "a finished entry of the closed page")
}

// notices reads what sub has queued and returns its notices.
func notices(t *testing.T, sub *Subscription) []string {
	t.Helper()
	var out []string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		steps, lost, err := sub.Next(ctx, nil)
		cancel()
		if err != nil {
			return out
		}
		if lost > 0 {
			t.Fatalf("the reader lost %d steps", lost)
		}
		for _, s := range steps {
			if s.Kind == StepNotice {
				out = append(out, s.Notice)
			}
		}
	}
}

// Shares: pages together never hold more than their share; a flooding
// page pushes out only its own entries while it holds the most, another
// page's while that page holds more (told once), and the host's only
// beyond its reserve (told once).
func TestShares(t *testing.T) {
	const budget, mb = 8 << 20, 1<<20 - 4096
	j := New(Options{MaxBytes: budget})
	open(j, host)
	open(j, pageA)
	open(j, pageB)
	_, sub := j.Subscribe(0)
	defer sub.Close()
	var said []string
	// The host borrows: 7 MiB, beyond its 4 MiB reserve.
	var hostIDs []string
	for i := range 7 {
		hostIDs = append(hostIDs, finishedBody(t, j, host, fmt.Sprint("h", i), mb))
	}
	// Page B takes 3 MiB: the host's oldest beyond its reserve give way.
	var bIDs []string
	for i := range 3 {
		bIDs = append(bIDs, finishedBody(t, j, pageB, fmt.Sprint("b", i), mb))
		said = append(said, notices(t, sub)...)
	}
	checkInvariants(t, j)
	if h, p := held(j); h < budget/2 || p != 3*(p/3) || h+p > budget {
		t.Fatalf("host %d bytes, pages %d", h, p)
	}
	readable(t, j, hostIDs[len(hostIDs)-1], mb, "the host's newest")
	// Page A floods unfinished 1 MiB heads: B (holding more) gives way
	// until A holds the most, then A pays for itself; the host keeps its
	// reserve.
	for i := range 40 {
		feed(j, pageA, reqEv(fmt.Sprint("u", i), "http://flood/", bigHeaders()...))
		checkInvariants(t, j)
		said = append(said, notices(t, sub)...)
	}
	if h, p := held(j); p > budget/2 || h < budget/2-mb {
		t.Fatalf("after the flood: host %d bytes, pages %d", h, p)
	}
	readable(t, j, hostIDs[len(hostIDs)-1], mb, "the host's newest, after the flood")
	readable(t, j, bIDs[2], mb, "page B's newest, after the flood")
	if len(said) != 2 || !strings.Contains(said[0], "host's oldest requests") || !strings.Contains(said[1], "of the page b") {
		t.Fatalf("notices: %q", said)
	}
}

// A reader that stops reading pins at most subscriberBytes of heads,
// however many heads the journal has since evicted. Measured on the
// queue's steps: the header bytes of the distinct requests they point at.
func TestSubscriberQueueBytesBound(t *testing.T) {
	j := New(Options{})
	open(j, pageA)
	_, sub := j.Subscribe(0)
	defer sub.Close()
	for i := range 100 {
		feed(j, pageA, reqEv(fmt.Sprint(i), "http://flood/", bigHeaders()...))
	}
	sub.mu.Lock()
	pinned, seen := int64(0), map[*Request]bool{}
	for _, s := range sub.q {
		if r := s.Request; r != nil && !seen[r] {
			seen[r] = true
			for _, h := range r.Headers {
				pinned += int64(len(h.Value))
			}
		}
	}
	n, lost := len(sub.q), sub.lost
	sub.mu.Unlock()
	t.Logf("queue: %d steps, %.1f MiB of heads pinned (bound %d MiB), %d lost", n, float64(pinned)/(1<<20), subscriberBytes>>20, lost)
	if pinned > subscriberBytes || lost == 0 {
		t.Fatalf("queue pins %d bytes of heads (bound %d), lost %d", pinned, subscriberBytes, lost)
	}
}
