package fetchcapture

import (
	"fmt"
	"strings"
	"testing"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// FuzzJournal drives the journal with arbitrary sequences of phases (ids,
// offsets, sizes and the source, host or page, from the input) and checks
// its invariants after each: the accounting equals what every entry keeps
// and fits every budget and share, a subscriber's stream plus the snapshot
// never repeat a step kind that may occur once, and Body never panics.
// Run: go test -run '^$' -fuzz FuzzJournal ./fetchcapture
func FuzzJournal(f *testing.F) {
	f.Add([]byte{0, 1, 1, 1, 2, 1, 0, 3, 3, 1, 4, 1})
	f.Add([]byte{0, 1, 1, 1, 1, 1, 1, 1, 2, 1, 5, 9, 4, 1, 7, 1})
	f.Add([]byte{0, 1, 0, 2, 0, 3, 0, 4, 6, 0, 0, 5})
	f.Add([]byte{0, 0x81, 1, 0x81, 1, 0x81, 1, 0x81, 2, 0x81, 0, 1, 2, 1, 8, 0, 0, 0x82, 9, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		j := New(Options{MaxEntries: 6, MaxBytes: 16 << 10, RedactHeaders: []string{"a"}})
		page := pageA
		open(j, host)
		open(j, page)
		snap, sub := j.Subscribe(8)
		defer sub.Close()
		_ = snap
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%10, ops[i+1]
			ref := host
			if arg&0x80 != 0 {
				ref = page
			}
			arg &= 0x7f
			id := fmt.Sprint(arg % 6)
			switch op {
			case 0:
				feed(j, ref, reqEv(id, "http://x/", sourceproto.HTTPHeader{Name: "A", Value: "v"}))
			case 1:
				feed(j, ref, respEv(id, "http://x/"+id, 200+int64(arg%3)*100))
			case 2, 3:
				feed(j, ref, bodyEv(id, int64(arg)*100, string(make([]byte, int(arg)*100))))
			case 4:
				feed(j, ref, finEv(id, int64(arg), arg%2 == 0))
			case 5:
				feed(j, ref, failEv(id, strings.Repeat("x", int(arg)*10), arg%2 == 0))
			case 6:
				j.SourceClosed(ref, sourceproto.CloseGoingAway)
				open(j, ref)
			case 7:
				j.Replaced(ref, 0, &sourceproto.Replace{Reason: sourceproto.ReplaceRequested})
			case 8:
				for range int(arg % 24) {
					feed(j, ref, hopEv(id, int(arg), []sourceproto.HTTPHeader{{Name: "location", Value: strings.Repeat("l", int(arg)*8)}}))
				}
			case 9:
				// A page leaves for good; another generation comes.
				j.SourceClosed(page, sourceproto.CloseGoingAway)
				page.Gen++
				open(j, page)
			}
			checkInvariants(t, j)
		}
	})
}

func checkInvariants(t *testing.T, j *Journal) {
	t.Helper()
	j.mu.Lock()
	var total tally
	var sides [2]tally
	perUse := map[*use]tally{}
	ids := make([]string, 0, j.order.Len())
	for el := j.order.Front(); el != nil; el = el.Next() {
		e := el.Value.(*entry)
		ids = append(ids, e.requestID)
		if j.byID[e.requestID] != e || j.byKey[e.key] != e {
			t.Fatalf("maps out of step for %s", e.requestID)
		}
		if j.uses[e.key.ref] != e.u {
			t.Fatalf("%s: its source's use is not filed", e.requestID)
		}
		if m := e.measure(); m != e.bytes {
			t.Fatalf("%s: accounted %d bytes, what it keeps costs %d", e.requestID, e.bytes, m)
		}
		for _, b := range []*body{&e.reqBody, &e.respBody} {
			c := int64(0)
			for _, ch := range b.chunks {
				c += chunkCost(ch)
			}
			if b.size != int64(len(b.bytes())) || b.cost != c {
				t.Fatal("body size accounting")
			}
		}
		ends, hops := 0, 0
		for _, s := range e.steps {
			switch s.Kind {
			case StepFinished, StepFailed:
				ends++
			case StepRedirect:
				hops++
			}
		}
		if ends > 1 || (ends == 1) != e.ended || hops > MaxRedirects || len(e.steps) > MaxRedirects+3 {
			t.Fatalf("%s: %d ends, ended=%v, %d hops, %d steps", e.requestID, ends, e.ended, hops, len(e.steps))
		}
		total.bytes += e.bytes
		total.entries++
		sides[e.u.side].bytes += e.bytes
		sides[e.u.side].entries++
		u := perUse[e.u]
		u.bytes += e.bytes
		u.entries++
		perUse[e.u] = u
	}
	for _, u := range j.uses {
		if perUse[u] != u.tally || u.running.Len()+u.ended.Len() != u.entries {
			t.Fatalf("source %s: accounted %+v, its entries sum to %+v", u.ref.ID, u.tally, perUse[u])
		}
		if !u.open && u.entries == 0 {
			t.Fatalf("source %s: closed and empty, still filed", u.ref.ID)
		}
	}
	if total != j.total || sides != j.sides || len(j.byID) != total.entries {
		t.Fatalf("accounted %+v %+v, entries sum to %+v %+v", j.total, j.sides, total, sides)
	}
	if total.bytes > j.opts.MaxBytes || total.entries > j.opts.MaxEntries ||
		sides[sidePages].bytes > j.pagesMax.bytes || sides[sidePages].entries > j.pagesMax.entries {
		t.Fatalf("over a budget: %+v, pages %+v", total, sides[sidePages])
	}
	j.mu.Unlock()
	for _, id := range ids {
		_, _ = j.Body(id, true)
		_, _ = j.Body(id, false)
	}
}

// held is what the host's side and the pages hold, by the journal's
// accounting.
func held(j *Journal) (host, pages int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.sides[sideHost].bytes, j.sides[sidePages].bytes
}
