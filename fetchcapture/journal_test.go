package fetchcapture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

var host = sourceproto.SourceRef{ID: "host", Gen: 1, Role: sourceproto.RoleHost}

func open(j *Journal, ref sourceproto.SourceRef) {
	j.SourceOpened(sourceproto.SourceInfo{Ref: ref})
}

func feed(j *Journal, ref sourceproto.SourceRef, evs ...*sourceproto.FetchEvent) {
	a := &sourceproto.Append{}
	for _, ev := range evs {
		a.Items = append(a.Items, sourceproto.Item{Topic: sourceproto.TopicFetch, Fetch: ev})
	}
	j.Appended(ref, 0, a)
}

func reqEv(id, url string, headers ...sourceproto.HTTPHeader) *sourceproto.FetchEvent {
	return &sourceproto.FetchEvent{ID: id, Phase: sourceproto.PhaseRequest, Timestamp: 1,
		Request: &sourceproto.FetchRequest{URL: url, Method: "GET", Headers: headers}}
}

func respEv(id, url string, status int64) *sourceproto.FetchEvent {
	return &sourceproto.FetchEvent{ID: id, Phase: sourceproto.PhaseResponse, Timestamp: 2,
		Response: &sourceproto.FetchResponse{URL: url, Status: status, StatusText: "S", Headers: []sourceproto.HTTPHeader{}}}
}

func bodyEv(id string, off int64, data string) *sourceproto.FetchEvent {
	return &sourceproto.FetchEvent{ID: id, Phase: sourceproto.PhaseBody, Timestamp: 3,
		Body: &sourceproto.FetchBody{Part: sourceproto.PartResponse, Offset: off, Data: []byte(data)}}
}

func finEv(id string, n int64, trunc bool) *sourceproto.FetchEvent {
	return &sourceproto.FetchEvent{ID: id, Phase: sourceproto.PhaseFinished, Timestamp: 4,
		Finished: &sourceproto.FetchFinished{ResponseBytes: n, ResponseTruncated: trunc}}
}

func failEv(id, msg string, aborted bool) *sourceproto.FetchEvent {
	return &sourceproto.FetchEvent{ID: id, Phase: sourceproto.PhaseFailed, Timestamp: 4,
		Failed: &sourceproto.FetchFailure{Message: msg, Aborted: aborted}}
}

func kinds(steps []Step) string {
	names := map[StepKind]string{StepRequest: "req", StepRedirect: "hop", StepResponse: "resp", StepData: "data", StepFinished: "fin", StepFailed: "fail"}
	var out []string
	for _, s := range steps {
		out = append(out, names[s.Kind])
	}
	return strings.Join(out, ",")
}

func onlyEntry(t *testing.T, j *Journal) Entry {
	t.Helper()
	snap, sub := j.Subscribe(0)
	sub.Close()
	if len(snap) != 1 {
		t.Fatalf("want 1 entry, have %d", len(snap))
	}
	return snap[0]
}

func TestLifecycleAndBody(t *testing.T) {
	j := New(Options{})
	open(j, host)
	feed(j, host, reqEv("a", "http://x/"), respEv("a", "http://x/", 200), bodyEv("a", 0, "hel"), bodyEv("a", 3, "lo"), finEv("a", 5, false))
	e := onlyEntry(t, j)
	if got := kinds(e.Steps); got != "req,resp,data,fin" {
		t.Fatalf("steps %s", got)
	}
	if e.Steps[2].DataLength != 5 {
		t.Fatalf("merged data length %d", e.Steps[2].DataLength)
	}
	b, err := j.Body(e.RequestID, true)
	if err != nil || string(b.Data) != "hello" || b.Truncated || b.Total != 5 {
		t.Fatalf("body %q %v %+v", b.Data, err, b)
	}
	if _, err := j.Body(e.RequestID, false); !errors.Is(err, ErrNoBody) {
		t.Fatalf("request body: %v", err)
	}
	feed(j, host, reqEv("refused", "http://x/"), failEv("refused", "connect ECONNREFUSED", false))
	snap, sub := j.Subscribe(0)
	sub.Close()
	if _, err := j.Body(snap[1].RequestID, true); !errors.Is(err, ErrNoBody) || !strings.Contains(err.Error(), "before a response") {
		t.Fatalf("refused: %v", err)
	}
	if _, err := j.Body("iw-net.999", true); !errors.Is(err, ErrUnknownRequest) {
		t.Fatalf("unknown: %v", err)
	}
}

func TestBodyGapAndOverlapAreRejected(t *testing.T) {
	for name, second := range map[string]*sourceproto.FetchEvent{
		"gap": bodyEv("a", 5, "x"), "overlap": bodyEv("a", 1, "x"),
	} {
		t.Run(name, func(t *testing.T) {
			j := New(Options{})
			open(j, host)
			feed(j, host, reqEv("a", "http://x/"), respEv("a", "http://x/", 200), bodyEv("a", 0, "abc"), second, finEv("a", 4, false))
			e := onlyEntry(t, j)
			_, err := j.Body(e.RequestID, true)
			if !errors.Is(err, ErrBrokenBody) || !strings.Contains(err.Error(), name) {
				t.Fatalf("want a broken body naming the %s, got %v", name, err)
			}
			bare := New(Options{}) // the same entry, never given a body
			open(bare, host)
			feed(bare, host, reqEv("a", "http://x/"), respEv("a", "http://x/", 200), finEv("a", 4, false))
			if st := j.Stats(); st.Bytes != bare.Stats().Bytes {
				t.Fatalf("broken body still counted: %d bytes, %d without a body", st.Bytes, bare.Stats().Bytes)
			}
		})
	}
}

func TestNotFinishedAndNotRead(t *testing.T) {
	j := New(Options{})
	open(j, host)
	r := reqEv("a", "http://x/")
	r.Request.Kind, r.Request.BodiesNotRead = sourceproto.KindHTTP, true
	feed(j, host, r, reqEv("b", "http://y/"), respEv("b", "http://y/", 200))
	snap, sub := j.Subscribe(0)
	sub.Close()
	if _, err := j.Body(snap[0].RequestID, true); !errors.Is(err, ErrBodiesNotRead) || !strings.Contains(err.Error(), "node:http") {
		t.Fatalf("bodiesNotRead: %v", err)
	}
	if _, err := j.Body(snap[1].RequestID, true); !errors.Is(err, ErrNotFinished) {
		t.Fatalf("unfinished: %v", err)
	}
	if snap[0].Steps[0].Request.Kind != sourceproto.KindHTTP || snap[1].Steps[0].Request.Kind != sourceproto.KindFetch {
		t.Fatalf("kinds %v %v", snap[0].Steps[0].Request.Kind, snap[1].Steps[0].Request.Kind)
	}
}

func TestRedirects(t *testing.T) {
	j := New(Options{})
	open(j, host)
	// Hops known: 302 then 301 then 200.
	feed(j, host, reqEv("a", "http://x/1"), respEv("a", "http://x/1", 302), respEv("a", "http://x/2", 301), respEv("a", "http://x/3", 200), finEv("a", 0, false))
	// Only redirected:true known.
	r := respEv("b", "http://x/final", 200)
	r.Response.Redirected = true
	feed(j, host, reqEv("b", "http://x/start"), r, finEv("b", 0, false))
	// A final 304 stays the response.
	feed(j, host, reqEv("c", "http://x/c"), respEv("c", "http://x/c", 304), finEv("c", 0, false))
	snap, sub := j.Subscribe(0)
	sub.Close()
	if got := kinds(snap[0].Steps); got != "req,hop,hop,resp,fin" {
		t.Fatalf("a: %s", got)
	}
	h1, h2 := snap[0].Steps[1], snap[0].Steps[2]
	if h1.Response.Status != 302 || h1.Response.URL != "http://x/1" || h1.RedirectURL != "http://x/2" ||
		h2.Response.Status != 301 || h2.RedirectURL != "http://x/3" || snap[0].Steps[3].Response.Status != 200 {
		t.Fatalf("hops %+v %+v", h1, h2)
	}
	if got := kinds(snap[1].Steps); got != "req,hop,resp,fin" || !snap[1].Steps[1].Response.StatusUnknown ||
		snap[1].Steps[1].Response.URL != "http://x/start" || snap[1].Steps[1].RedirectURL != "http://x/final" {
		t.Fatalf("b: %s %+v", got, snap[1].Steps[1])
	}
	if got := kinds(snap[2].Steps); got != "req,resp,fin" || snap[2].Steps[1].Response.Status != 304 {
		t.Fatalf("c: %s", got)
	}
}

func TestSourceClosedFailsUnfinished(t *testing.T) {
	j := New(Options{})
	page := sourceproto.SourceRef{ID: "p", Gen: 2, Role: sourceproto.RoleClient}
	open(j, host)
	open(j, page)
	feed(j, host, reqEv("a", "http://x/"))
	feed(j, page, reqEv("a", "http://x/"), respEv("a", "http://x/", 200))
	j.SourceClosed(page, sourceproto.CloseGoingAway)
	j.Replaced(host, 0, &sourceproto.Replace{Reason: sourceproto.ReplaceRequested})
	snap, sub := j.Subscribe(0)
	sub.Close()
	for i, want := range []string{"host resent its state", "page disconnected"} {
		e := snap[i]
		last := e.Steps[len(e.Steps)-1]
		if last.Kind != StepFailed || !strings.Contains(last.Failure.Message, want) {
			t.Fatalf("entry %d: %s %+v", i, kinds(e.Steps), last.Failure)
		}
	}
	// Later phases of a closed entry are ignored.
	feed(j, host, finEv("a", 0, false))
	if st := j.Stats(); st.Violations != 1 {
		t.Fatalf("violations %d", st.Violations)
	}
}

func TestRedaction(t *testing.T) {
	j := New(Options{RedactHeaders: []string{"Authorization", "x-API-key"}})
	open(j, host)
	feed(j, host, reqEv("a", "http://x/", sourceproto.HTTPHeader{Name: "authorization", Value: "Bearer s3cret"},
		sourceproto.HTTPHeader{Name: "X-Api-Key", Value: "k"}, sourceproto.HTTPHeader{Name: "accept", Value: "*/*"}))
	h := onlyEntry(t, j).Steps[0].Request.Headers
	if h[0].Value != RedactedValue || h[1].Value != RedactedValue || h[2].Value != "*/*" {
		t.Fatalf("headers %+v", h)
	}
}

func TestEvictionByCountKeepsUnfinished(t *testing.T) {
	j := New(Options{MaxEntries: 3})
	open(j, host)
	feed(j, host, reqEv("open", "http://x/"))
	for i := range 10 {
		id := fmt.Sprint(i)
		feed(j, host, reqEv(id, "http://x/"), respEv(id, "http://x/", 200), finEv(id, 0, false))
	}
	snap, sub := j.Subscribe(0)
	sub.Close()
	if len(snap) != 3 || kinds(snap[0].Steps) != "req" {
		t.Fatalf("%d entries, first %s", len(snap), kinds(snap[0].Steps))
	}
	// Only unfinished ones: the oldest is failed and dropped.
	for i := range 4 {
		feed(j, host, reqEv(fmt.Sprint("u", i), "http://x/"))
	}
	if st := j.Stats(); st.Entries != 3 {
		t.Fatalf("entries %d", st.Entries)
	}
}

func TestByteBudget(t *testing.T) {
	const max = 1 << 20
	j := New(Options{MaxBytes: max})
	open(j, host)
	chunk := strings.Repeat("z", sourceproto.MaxChunkBytes)
	for i := range 200 {
		id := fmt.Sprint(i)
		feed(j, host, reqEv(id, "http://x/"), respEv(id, "http://x/", 200))
		for off := 0; off < 200<<10; off += len(chunk) {
			feed(j, host, bodyEv(id, int64(off), chunk))
			if st := j.Stats(); st.Bytes > max {
				t.Fatalf("journal at %d bytes > %d", st.Bytes, max)
			}
		}
		feed(j, host, finEv(id, 200<<10, false))
	}
	st := j.Stats()
	if st.Entries == 0 || st.Evicted == 0 {
		t.Fatalf("stats %+v", st)
	}
	// One body alone larger than the budget: its prefix is kept, cut by the journal.
	feed(j, host, reqEv("big", "http://x/"), respEv("big", "http://x/", 200))
	for off := 0; off < 2*max; off += len(chunk) {
		feed(j, host, bodyEv("big", int64(off), chunk))
	}
	feed(j, host, finEv("big", 2*max, false))
	snap, sub := j.Subscribe(0)
	sub.Close()
	last := snap[len(snap)-1]
	b, err := j.Body(last.RequestID, true)
	if err != nil || !b.Truncated || b.By != "journal" || len(b.Data) == 0 || len(b.Data) >= 2*max {
		t.Fatalf("big body: %v truncated=%v by=%s len=%d", err, b.Truncated, b.By, len(b.Data))
	}
	if st := j.Stats(); st.Bytes > max || st.BudgetCuts == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestSubscribeCutOver subscribes while producers run: every step of every
// entry is in the snapshot or the stream, exactly once.
func TestSubscribeCutOver(t *testing.T) {
	j := New(Options{MaxEntries: 100000})
	open(j, host)
	const producers, per = 4, 500
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				id := fmt.Sprintf("%d-%d", p, i)
				feed(j, host, reqEv(id, "http://x/"))
				feed(j, host, respEv(id, "http://x/", 200), bodyEv(id, 0, "ab"))
				feed(j, host, finEv(id, 2, false))
			}
		}()
	}
	type sub struct {
		snap []Entry
		s    *Subscription
	}
	var subs []sub
	for range 20 {
		snap, s := j.Subscribe(0)
		subs = append(subs, sub{snap, s})
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	for n, x := range subs {
		seen := map[string]string{}
		for _, e := range x.snap {
			seen[e.RequestID] = kinds(e.Steps)
		}
		done := 0
		for _, k := range seen {
			if strings.HasSuffix(k, "fin") {
				done++
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang bound
		for done < producers*per {
			steps, lost, err := x.s.Next(ctx, nil)
			if err != nil {
				t.Fatalf("subscriber %d: %v after %d finished entries", n, err, done)
			}
			if lost > 0 {
				t.Fatalf("lost %d", lost)
			}
			for _, st := range steps {
				seen[st.RequestID] = strings.TrimPrefix(seen[st.RequestID]+","+kinds([]Step{st}), ",")
				if st.Kind == StepFinished {
					done++
				}
			}
		}
		cancel()
		ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
		if steps, _, _ := x.s.Next(ctx, nil); len(steps) > 0 {
			t.Fatalf("subscriber %d: %d steps after every entry finished", n, len(steps))
		}
		cancel()
		x.s.Close()
		if len(seen) != producers*per {
			t.Fatalf("subscriber %d saw %d entries", n, len(seen))
		}
		for id, k := range seen {
			if k != "req,resp,data,fin" {
				t.Fatalf("subscriber %d, %s: %s", n, id, k)
			}
		}
	}
}

func TestSubscriberOverflowIsCounted(t *testing.T) {
	j := New(Options{})
	open(j, host)
	_, s := j.Subscribe(10)
	defer s.Close()
	for i := range 25 {
		feed(j, host, reqEv(fmt.Sprint(i), "http://x/"))
	}
	steps, lost, err := s.Next(context.Background(), nil)
	if err != nil || len(steps) != 10 || lost != 0 {
		t.Fatalf("first: %d %d %v", len(steps), lost, err)
	}
	feed(j, host, reqEv("late", "http://x/")) // still dropping until the report
	_, lost, err = s.Next(context.Background(), nil)
	if err != nil || lost != 16 {
		t.Fatalf("lost %d %v", lost, err)
	}
	feed(j, host, reqEv("resumed", "http://x/"))
	steps, _, _ = s.Next(context.Background(), nil)
	if len(steps) != 1 {
		t.Fatalf("after the report: %d steps", len(steps))
	}
	s.Close()
	if _, _, err := s.Next(context.Background(), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	if j.Stats().Subscribers != 0 {
		t.Fatal("subscriber still registered")
	}
}

func TestBodyIsCopied(t *testing.T) {
	j := New(Options{})
	open(j, host)
	feed(j, host, reqEv("a", "http://x/"), respEv("a", "http://x/", 200), bodyEv("a", 0, "abc"), finEv("a", 3, false))
	id := onlyEntry(t, j).RequestID
	b1, _ := j.Body(id, true)
	b1.Data[0] = 'X'
	b2, _ := j.Body(id, true)
	if !bytes.Equal(b2.Data, []byte("abc")) {
		t.Fatalf("body changed through a returned slice: %q", b2.Data)
	}
}
