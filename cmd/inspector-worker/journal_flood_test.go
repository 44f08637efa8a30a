//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/sourceprototest"
)

// journalFloodHost serves one body and fetches it once, so the preload
// captures it into the journal before any page floods; then it prints its
// pid and the page bootstrap (endpoint and token) and idles.
const journalFloodHost = `
const http = require('http');
const body = 'host body ' + 'h'.repeat(200 << 10);
const server = http.createServer((req, res) => { res.setHeader('content-type', 'text/plain'); res.end(body); });
server.listen(0, '127.0.0.1', async () => {
  const r = await fetch('http://127.0.0.1:' + server.address().port + '/host-body');
  const t = await r.text();
  console.log('pid ' + process.pid + ' fetched ' + t.length + ' snippet ' + globalThis.inspectorWorker.bootstrapSnippet());
});
setInterval(() => {}, 1000);
`

// Bounds of TestJournalFloodMemory, against the worker's resident set
// before the flood (idle, the host body captured). The journal's budget is
// 64 MiB (fetchcapture.DefaultMaxBytes; pages may hold half of it); the
// headroom is what the worker needs beside the journal while a page sends
// 1 MiB frames: the frame being read and decoded, the garbage of the ones
// before it (the soft memory limit makes the collector run often, never
// at once) and the allocator's pages not yet returned (README "journal
// budgets"). After the page leaves, what it held must be returned: its
// unfinished requests are reduced to their request line and failure, and
// the worker hands the memory back at once (fetchcapture returnMemory),
// so the bound is half the pages' share.
const (
	floodJournalBudgetMiB = 64
	floodHeadroomMiB      = 48
	floodAfterLeaveMiB    = 16
	// floodSettle bounds the wait for the resident set to fall after the
	// page left. A hang detector, far above the measured < 0.1 s.
	floodSettle = 20 * time.Second
)

// A hostile page (a real ws /client connection speaking the page protocol)
// floods the fetch journal three ways; each runs against its own real
// worker with a real node host whose own fetch body was captured first.
// The worker's peak resident set stays under the journal's budget plus
// the headroom, falls back after the page disconnects, and the host's body
// stays readable through a real window all along.
func TestJournalFloodMemory(t *testing.T) {
	bigHeaders := func() []sourceproto.HTTPHeader {
		// 15 × 64,000 B: ~1 MiB of header values, the most one frame holds.
		h := make([]sourceproto.HTTPHeader, 15)
		for i := range h {
			h[i] = sourceproto.HTTPHeader{Name: fmt.Sprintf("x-flood-%d", i), Value: strings.Repeat("v", 64000)}
		}
		return h
	}
	floods := []struct {
		name string
		run  func(t *testing.T, p *floodPage)
	}{
		{"hops_with_1MiB_headers", func(t *testing.T, p *floodPage) {
			// One request that never finishes, then 150 redirect hops of
			// ~1 MiB headers each, one per frame (the old journal kept
			// them all: ~150 MiB).
			p.send(t, fetchItem(&sourceproto.FetchEvent{ID: "r", Phase: sourceproto.PhaseRequest, Timestamp: 1,
				Request: &sourceproto.FetchRequest{URL: "http://flood/", Method: "GET", Headers: []sourceproto.HTTPHeader{}}}))
			h := bigHeaders()
			for i := range 150 {
				p.send(t, hopItem("r", i, h))
			}
		}},
		{"600k_empty_hops", func(t *testing.T, p *floodPage) {
			p.send(t, fetchItem(&sourceproto.FetchEvent{ID: "r", Phase: sourceproto.PhaseRequest, Timestamp: 1,
				Request: &sourceproto.FetchRequest{URL: "http://flood/", Method: "GET", Headers: []sourceproto.HTTPHeader{}}}))
			const hops = 600_000 // the old journal held ~175 MB for these
			batch := make([]sourceproto.Item, 0, sourceproto.MaxBatchItems)
			for i := range hops {
				batch = append(batch, hopItem("r", i, []sourceproto.HTTPHeader{}))
				if len(batch) == cap(batch) || i == hops-1 {
					p.send(t, batch...)
					batch = batch[:0]
				}
			}
		}},
		{"unfinished_requests_with_1MiB_headers", func(t *testing.T, p *floodPage) {
			h := bigHeaders() // 150 requests: the old journal kept them all, ~150 MiB
			for i := range 150 {
				p.send(t, fetchItem(&sourceproto.FetchEvent{ID: fmt.Sprint("u", i), Phase: sourceproto.PhaseRequest, Timestamp: 1,
					Request: &sourceproto.FetchRequest{URL: "http://flood/" + fmt.Sprint(i), Method: "GET", Headers: h}}))
			}
		}},
	}
	for _, fl := range floods {
		t.Run(fl.name, func(t *testing.T) {
			dir, script := writeScript(t, journalFloodHost)
			w := startBenchProc(t, dir, nil, plainWorker(t), "run", "--port", "0", "--", "node", script)
			pid := w.cmd.Process.Pid
			snippet := w.waitFor(w.stdout, `fetched \d+ snippet (<script[^\n]*)`)
			m := regexp.MustCompile(`data-endpoint="([^"]+)" data-token="([^"]+)"`).FindStringSubmatch(snippet)
			if m == nil {
				t.Fatalf("no endpoint and token in %q", snippet)
			}
			win := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
			hostID := hostBodyID(t, win)
			// The window stops recording before the flood: its own queue
			// has its own budget (README limits); this measures the journal.
			win.MustCall("Network.disable", nil)
			readHostBody(t, win, hostID, "before the flood")
			time.Sleep(300 * time.Millisecond)
			base := procKiB(t, pid, "VmRSS")

			start := time.Now()
			p := dialFloodPage(t, m[1], m[2])
			fl.run(t, p)
			took := time.Since(start)
			peak := procKiB(t, pid, "VmHWM")
			during := procKiB(t, pid, "VmRSS")
			readHostBody(t, win, hostID, "after the flood")

			p.c.Close(websocket.StatusNormalClosure, "")
			left := time.Now()
			after := procKiB(t, pid, "VmRSS")
			for deadline := time.Now().Add(floodSettle); mib(after-base) >= floodAfterLeaveMiB && time.Now().Before(deadline); {
				time.Sleep(100 * time.Millisecond)
				after = procKiB(t, pid, "VmRSS")
			}
			settled := time.Since(left)
			readHostBody(t, win, hostID, "after the page left")
			t.Logf("%s: flood sent in %v; worker RSS %.1f MiB before, peak %.1f MiB (+%.1f; bound +%d), %.1f MiB at the end of the flood, %.1f MiB %v after the page left (+%.1f; bound +%d)",
				fl.name, took.Round(time.Millisecond), mib(base), mib(peak), mib(peak-base), floodJournalBudgetMiB+floodHeadroomMiB,
				mib(during), mib(after), settled.Round(time.Millisecond), mib(after-base), floodAfterLeaveMiB)
			if mib(peak-base) >= floodJournalBudgetMiB+floodHeadroomMiB {
				t.Errorf("the worker's peak RSS grew by %.1f MiB under the flood: more than the journal's budget (%d MiB) plus headroom (%d MiB)",
					mib(peak-base), floodJournalBudgetMiB, floodHeadroomMiB)
			}
			if mib(after-base) >= floodAfterLeaveMiB {
				t.Errorf("%.1f MiB above the idle RSS still held %v after the page left (bound %d MiB)", mib(after-base), floodSettle, floodAfterLeaveMiB)
			}
		})
	}
}

var (
	plainOnce sync.Once
	plainBin  string
	plainErr  error
)

// plainWorker is a worker binary built without the race detector: its
// shadow memory (several times the heap, never returned) would measure
// the detector, not the worker. Under -race it is built once, next to
// workerBin; otherwise it is workerBin.
func plainWorker(t *testing.T) string {
	t.Helper()
	if !raceEnabled {
		return workerBin
	}
	plainOnce.Do(func() {
		plainBin = filepath.Join(filepath.Dir(workerBin), "inspector-worker-norace")
		if out, err := exec.Command("go", "build", "-o", plainBin, ".").CombinedOutput(); err != nil {
			plainErr = fmt.Errorf("building inspector-worker without -race: %v\n%s", err, out)
		}
	})
	if plainErr != nil {
		t.Fatal(plainErr)
	}
	return plainBin
}

// hostBodyID enables Network on win and returns the request id of the
// host's /host-body fetch once the window saw it finish.
func hostBodyID(t *testing.T, win *cdptest.Client) string {
	t.Helper()
	win.MustCall("Network.enable", nil)
	m := win.ExpectAnyEvent("Network.requestWillBeSent", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "/host-body") })
	var p struct {
		RequestID string `json:"requestId"`
	}
	json.Unmarshal(m.Params, &p)
	win.ExpectAnyEvent("Network.loadingFinished", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `"`+p.RequestID+`"`) })
	return p.RequestID
}

// readHostBody reads the host's body through the window and fails unless
// it is whole.
func readHostBody(t *testing.T, win *cdptest.Client, id, when string) {
	t.Helper()
	m := win.Call("Network.getResponseBody", map[string]any{"requestId": id})
	var b struct {
		Body string `json:"body"`
	}
	json.Unmarshal(m.Result, &b)
	if want := len("host body ") + 200<<10; len(b.Body) != want || !strings.HasPrefix(b.Body, "host body hhh") {
		t.Errorf("%s, the host's captured body is not readable (%d bytes, want %d): %.300s", when, len(b.Body), want, m.Raw)
	}
}

func fetchItem(ev *sourceproto.FetchEvent) sourceproto.Item {
	return sourceproto.Item{Topic: sourceproto.TopicFetch, Fetch: ev}
}

// hopItem is the i-th redirect response of request id: a 302 to the next URL.
func hopItem(id string, i int, h []sourceproto.HTTPHeader) sourceproto.Item {
	return fetchItem(&sourceproto.FetchEvent{ID: id, Phase: sourceproto.PhaseResponse, Timestamp: 2,
		Response: &sourceproto.FetchResponse{URL: "http://flood/" + fmt.Sprint(i), Status: 302, StatusText: "Found", Headers: h}})
}

// floodPage is a hostile page: a real ws /client connection speaking the
// page protocol (sourceprototest builds the frames), one append in flight.
type floodPage struct {
	c *websocket.Conn
	p *sourceprototest.Producer
}

func dialFloodPage(t *testing.T, endpoint, token string) *floodPage {
	t.Helper()
	c, _, err := websocket.Dial(context.Background(), endpoint, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://127.0.0.1:1"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	c.SetReadLimit(16 << 20)
	f := &floodPage{c: c, p: sourceprototest.New("flood", token)}
	f.write(t, f.p.Hello(t, 0, sourceproto.TopicFetch|sourceproto.TopicPage))
	f.p.Welcomed(t, f.read(t))
	f.write(t, f.p.Replace(t, sourceproto.ReplaceInitial,
		sourceproto.Item{Topic: sourceproto.TopicPage, Page: &sourceproto.PageInfo{URL: "http://127.0.0.1:1/flood", Title: "flood"}}))
	f.untilAck(t)
	return f
}

func (f *floodPage) write(t *testing.T, frame []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cdptest.Timeout)
	defer cancel()
	if err := f.c.Write(ctx, websocket.MessageText, frame); err != nil {
		t.Fatal(err)
	}
}

func (f *floodPage) read(t *testing.T) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cdptest.Timeout)
	defer cancel()
	_, msg, err := f.c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// untilAck reads until the worker acks (other frames, commands to the
// page, are not answered: this page serves nothing).
func (f *floodPage) untilAck(t *testing.T) {
	t.Helper()
	for {
		msg := f.read(t)
		fr, err := sourceproto.Decode(msg)
		if err != nil {
			t.Fatalf("undecodable frame from the worker: %v", err)
		}
		switch fr.Type {
		case sourceproto.FrameAck:
			return
		case sourceproto.FrameReject:
			t.Fatalf("the worker rejected the flood: %s", msg)
		}
	}
}

// send appends items as one frame and waits for its ack: the worker has
// consumed them (the journal included) when it acks.
func (f *floodPage) send(t *testing.T, items ...sourceproto.Item) {
	t.Helper()
	f.write(t, f.p.Append(t, items...))
	f.untilAck(t)
}
