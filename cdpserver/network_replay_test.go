package cdpserver

import (
	"fmt"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// replayIngestBound: one page frame is ingested in well under a
// millisecond; a replay of replayRequests takes tens to hundreds of them.
// An ingest that waited for the whole replay would come near or past it.
const (
	replayRequests    = 1000
	replayIngestBound = time.Second
)

// TestNetworkEnableReplayDoesNotStallIngest: a window enabling Network
// while the journal holds replayRequests page requests (each replayed step
// names its initiator's script through the client hub) must not hold up
// the pages' ingest: a page keeps sending frames during the replay, and
// each is ingested promptly.
func TestNetworkEnableReplayDoesNotStallIngest(t *testing.T) {
	w, reg, _ := networkWorker(t, Options{JournalMaxEntries: 4 * replayRequests})
	token, _ := sourceproto.NewToken()
	pg := openFetchPage(t, reg, token, "page-1", "http://127.0.0.1:3000/")
	const batch = 25
	for i := 0; i < replayRequests; i += batch {
		var items []sourceproto.Item
		for k := i; k < i+batch; k++ {
			items = append(items, simpleFetch(fmt.Sprint(k))...)
		}
		pg.ingest(pg.p.Append(t, items...))
	}
	a := w.dial("A")
	a.SetTimeout(2 * time.Minute) // hang bound under -race
	answered := make(chan time.Duration, 1)
	start := time.Now()
	go func() {
		a.MustCall("Network.enable", nil)
		answered <- time.Since(start)
	}()
	var worst time.Duration
	frames := 0
	var replay time.Duration
	for n := 0; ; n++ {
		select {
		case replay = <-answered:
		default:
		}
		if replay > 0 {
			break
		}
		id := fmt.Sprintf("live-%d", n)
		f := pg.p.Append(t, reqItem(id, "http://127.0.0.1:9/api/"+id, 2e12))
		t0 := time.Now()
		pg.ingest(f)
		worst = max(worst, time.Since(t0))
		frames++
	}
	t.Logf("Network.enable replaying %d requests answered in %v; %d page frames ingested meanwhile, the slowest in %v",
		replayRequests, replay, frames, worst)
	if worst > replayIngestBound {
		t.Errorf("a page frame took %v to ingest during the replay (bound %v): ingest waited for the replay", worst, replayIngestBound)
	}
	last := lastRequestID(t, a, "/api/live-0\"")
	a.ExpectAnyEvent("Network.requestWillBeSent", func(m cdptest.Msg) bool { return params(t, m).RequestID == last })
}
