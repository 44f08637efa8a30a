package fetchcapture

import (
	"fmt"
	"testing"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// FuzzJournal drives the journal with arbitrary sequences of phases (ids,
// offsets and sizes from the input) and checks its invariants after each:
// the byte accounting equals the entries' own, the entry budget holds,
// a subscriber's stream plus the snapshot never repeat a step kind that
// may occur once, and Body never panics.
// Run: go test -run '^$' -fuzz FuzzJournal ./fetchcapture
func FuzzJournal(f *testing.F) {
	f.Add([]byte{0, 1, 1, 1, 2, 1, 0, 3, 3, 1, 4, 1})
	f.Add([]byte{0, 1, 1, 1, 1, 1, 1, 1, 2, 1, 5, 9, 4, 1, 7, 1})
	f.Add([]byte{0, 1, 0, 2, 0, 3, 0, 4, 6, 0, 0, 5})
	f.Fuzz(func(t *testing.T, ops []byte) {
		j := New(Options{MaxEntries: 4, MaxBytes: 8 << 10, RedactHeaders: []string{"a"}})
		open(j, host)
		snap, sub := j.Subscribe(8)
		defer sub.Close()
		_ = snap
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%8, ops[i+1]
			id := fmt.Sprint(arg % 6)
			switch op {
			case 0:
				feed(j, host, reqEv(id, "http://x/", sourceproto.HTTPHeader{Name: "A", Value: "v"}))
			case 1:
				feed(j, host, respEv(id, "http://x/"+id, 200+int64(arg%3)*100))
			case 2, 3:
				feed(j, host, bodyEv(id, int64(arg)*100, string(make([]byte, int(arg)*100))))
			case 4:
				feed(j, host, finEv(id, int64(arg), arg%2 == 0))
			case 5:
				feed(j, host, failEv(id, "x", arg%2 == 0))
			case 6:
				j.SourceClosed(host, sourceproto.CloseGoingAway)
				open(j, host)
			case 7:
				j.Replaced(host, 0, &sourceproto.Replace{Reason: sourceproto.ReplaceRequested})
			}
			checkInvariants(t, j)
		}
	})
}

func checkInvariants(t *testing.T, j *Journal) {
	t.Helper()
	j.mu.Lock()
	sum := int64(0)
	for _, e := range j.order {
		sum += e.bytes
		if j.byID[e.requestID] != e || j.byKey[e.key] != e {
			t.Fatalf("maps out of step for %s", e.requestID)
		}
		if e.respBody.size != int64(len(e.respBody.bytes())) {
			t.Fatal("body size accounting")
		}
		ends := 0
		for _, s := range e.steps {
			if s.Kind == StepFinished || s.Kind == StepFailed {
				ends++
			}
		}
		if ends > 1 || (ends == 1) != e.ended {
			t.Fatalf("%s: %d ends, ended=%v", e.requestID, ends, e.ended)
		}
	}
	n, bytes, maxN := len(j.order), j.bytes, j.opts.MaxEntries
	ids := make([]string, 0, n)
	for _, e := range j.order {
		ids = append(ids, e.requestID)
	}
	j.mu.Unlock()
	if sum != bytes {
		t.Fatalf("accounting %d, entries sum to %d", bytes, sum)
	}
	if n > maxN || len(j.byID) != n {
		t.Fatalf("%d entries, budget %d", n, maxN)
	}
	for _, id := range ids {
		_, _ = j.Body(id, true)
		_, _ = j.Body(id, false)
	}
}
