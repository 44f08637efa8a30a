package cdpserver

import (
	"fmt"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// A page frame is ingested in well under a millisecond; under -race on a
// loaded machine the slowest one during a replay of replayRequests took up
// to a ninth of the replay (20 runs: 25–724 ms, replays 0.7–6.8 s). An
// ingest that waited for the replay would take about all of it, so the
// bound is half the replay, and never below replayIngestFloor.
const (
	replayRequests    = 1000
	replayIngestFloor = time.Second
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
	if bound := max(replay/2, replayIngestFloor); worst > bound {
		t.Errorf("a page frame took %v to ingest during a replay of %v (bound %v): ingest waited for the replay", worst, replay, bound)
	}
	last := lastRequestID(t, a, "/api/live-0\"")
	a.ExpectAnyEvent("Network.requestWillBeSent", func(m cdptest.Msg) bool { return params(t, m).RequestID == last })
}
