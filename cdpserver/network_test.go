package cdpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
	"github.com/inspector-worker/inspector-worker/sourceproto/sourceprototest"
)

// The Network domain over real sockets: a real worker (and node host), a
// fake host preload writing fetch items over the real host pipe
// (carrier.ServeHostPipe on a socketpair), and scripted DevTools windows.

// hostFeed plays the host preload on the child end of a real host pipe.
type hostFeed struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
	p    *sourceprototest.Producer
}

func networkWorker(t *testing.T, opts Options) (*worker, *sourceproto.Registry, *hostFeed) {
	t.Helper()
	w := startWorker(t, hostScript, opts)
	reg := sourceproto.NewRegistry(w.srv.ClientConsumer(), w.srv.FetchConsumer())
	w.srv.SetSourceRegistry(reg)
	child, workerEnd, err := carrier.NewHostChannel()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.FileConn(child)
	child.Close()
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(5 * time.Minute)) // hang bound
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = carrier.ServeHostPipe(ctx, workerEnd, reg, t.Logf) }()
	t.Cleanup(func() { conn.Close(); cancel(); <-done })
	p := sourceprototest.New("host", "")
	p.Role = sourceproto.RoleHost
	h := &hostFeed{t: t, conn: conn, r: bufio.NewReaderSize(conn, 1<<20), p: p}
	h.write(p.Hello(t, 0, sourceproto.TopicFetch))
	p.Welcomed(t, h.read())
	h.write(p.Replace(t, sourceproto.ReplaceInitial))
	sourceprototest.ExpectAck(t, h.read(), 0)
	return w, reg, h
}

func (h *hostFeed) write(frame []byte) {
	h.t.Helper()
	if _, err := h.conn.Write(append(frame, '\n')); err != nil {
		h.t.Fatalf("host write: %v", err)
	}
}

func (h *hostFeed) read() []byte {
	h.t.Helper()
	line, err := h.r.ReadBytes('\n')
	if err != nil {
		h.t.Fatalf("host read: %v", err)
	}
	return bytes.TrimSuffix(line, []byte("\n"))
}

// send appends items as one batch and waits for its ack (the preload keeps
// one batch in flight).
func (h *hostFeed) send(items ...sourceproto.Item) {
	h.t.Helper()
	h.write(h.p.Append(h.t, items...))
	sourceprototest.Expect(h.t, h.read(), sourceproto.FrameAck)
}

func fetchItem(ev *sourceproto.FetchEvent) sourceproto.Item {
	return sourceproto.Item{Topic: sourceproto.TopicFetch, Fetch: ev}
}

func reqItem(id, url string, at float64) sourceproto.Item {
	return fetchItem(&sourceproto.FetchEvent{ID: id, Phase: sourceproto.PhaseRequest, Timestamp: at,
		Request: &sourceproto.FetchRequest{URL: url, Method: "GET", Headers: []sourceproto.HTTPHeader{{Name: "authorization", Value: "Bearer s3cret"}},
			StackTrace: &sourceproto.StackTrace{CallFrames: []sourceproto.CallFrame{{FunctionName: "poll", URL: "/srv/app.js", LineNumber: 9, ColumnNumber: 2}}}}})
}

func respItem(id, url string, status int64, ctype string, at float64) sourceproto.Item {
	return fetchItem(&sourceproto.FetchEvent{ID: id, Phase: sourceproto.PhaseResponse, Timestamp: at,
		Response: &sourceproto.FetchResponse{URL: url, Status: status, StatusText: "X", Headers: []sourceproto.HTTPHeader{{Name: "content-type", Value: ctype}}}})
}

func bodyItems(id string, part sourceproto.BodyPart, data []byte, at float64) []sourceproto.Item {
	var out []sourceproto.Item
	for off := 0; off < len(data); off += sourceproto.MaxChunkBytes {
		end := min(off+sourceproto.MaxChunkBytes, len(data))
		out = append(out, fetchItem(&sourceproto.FetchEvent{ID: id, Phase: sourceproto.PhaseBody, Timestamp: at,
			Body: &sourceproto.FetchBody{Part: part, Offset: int64(off), Data: data[off:end]}}))
	}
	return out
}

func finItem(id string, n int64, truncated bool, at float64) sourceproto.Item {
	return fetchItem(&sourceproto.FetchEvent{ID: id, Phase: sourceproto.PhaseFinished, Timestamp: at,
		Finished: &sourceproto.FetchFinished{ResponseBytes: n, ResponseTruncated: truncated}})
}

func failItem(id, msg string, aborted bool, at float64) sourceproto.Item {
	return fetchItem(&sourceproto.FetchEvent{ID: id, Phase: sourceproto.PhaseFailed, Timestamp: at,
		Failed: &sourceproto.FetchFailure{Message: msg, Aborted: aborted}})
}

// simpleFetch is one complete fetch: request, 200, a small body, finished.
func simpleFetch(id string) []sourceproto.Item {
	items := []sourceproto.Item{reqItem(id, "http://127.0.0.1:9/api/"+id, 1e12), respItem(id, "http://127.0.0.1:9/api/"+id, 200, "text/plain", 1e12+5)}
	items = append(items, bodyItems(id, sourceproto.PartResponse, []byte("ok "+id), 1e12+6)...)
	return append(items, finItem(id, int64(len("ok "+id)), false, 1e12+7))
}

type netParams struct {
	RequestID        string          `json:"requestId"`
	FrameID          string          `json:"frameId"`
	Type             string          `json:"type"`
	Request          json.RawMessage `json:"request"`
	RedirectResponse *struct {
		Status     int    `json:"status"`
		StatusText string `json:"statusText"`
		URL        string `json:"url"`
	} `json:"redirectResponse"`
	Initiator struct {
		Type  string `json:"type"`
		Stack struct {
			CallFrames []struct {
				URL string `json:"url"`
			} `json:"callFrames"`
		} `json:"stack"`
	} `json:"initiator"`
	Response struct {
		Status int `json:"status"`
	} `json:"response"`
	ErrorText string `json:"errorText"`
	Canceled  bool   `json:"canceled"`
}

func params(t *testing.T, m cdptest.Msg) netParams {
	t.Helper()
	var p netParams
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// countBy counts a window's events of method by requestId.
func countBy(t *testing.T, c *cdptest.Client, method string) map[string]int {
	n := map[string]int{}
	for _, m := range c.Events(method) {
		n[params(t, m).RequestID]++
	}
	return n
}

func lastRequestID(t *testing.T, c *cdptest.Client, url string) string {
	t.Helper()
	m := c.ExpectAnyEvent("Network.requestWillBeSent", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), url) })
	return params(t, m).RequestID
}

// A request made before Network.enable is replayed once; one made after
// arrives live once; the host's entries carry the host frame and its
// initiator; a page's entries carry the page's frame.
func TestNetworkReplayLiveAndFrames(t *testing.T) {
	w, reg, h := networkWorker(t, Options{RedactHeaders: []string{"Authorization"}})
	h.send(simpleFetch("before")...)
	a := w.dial("A")
	a.MustCall("Network.enable", nil)
	h.send(simpleFetch("after")...)

	token, _ := sourceproto.NewToken()
	pg := openFetchPage(t, reg, token, "page-1", "http://127.0.0.1:3000/")
	pg.ingest(pg.p.Append(t, simpleFetch("p1")...))

	for _, u := range []string{"/api/before", "/api/after"} {
		id := lastRequestID(t, a, u)
		a.ExpectAnyEvent("Network.loadingFinished", func(m cdptest.Msg) bool { return params(t, m).RequestID == id })
	}
	pageID := lastRequestID(t, a, "/api/p1")
	a.ExpectAnyEvent("Network.loadingFinished", func(m cdptest.Msg) bool { return params(t, m).RequestID == pageID })
	for id, n := range countBy(t, a, "Network.requestWillBeSent") {
		if n != 1 {
			t.Fatalf("%s: %d requestWillBeSent", id, n)
		}
	}
	for _, m := range a.Events("Network.requestWillBeSent") {
		p := params(t, m)
		isPage := p.RequestID == pageID
		if isPage == (p.FrameID == w.srv.TargetID()) || (isPage && !strings.HasPrefix(p.FrameID, w.srv.TargetID()+".client-")) {
			t.Fatalf("frame %q for %s (page %v)", p.FrameID, p.RequestID, isPage)
		}
		if p.Type != "Fetch" || p.Initiator.Type != "script" {
			t.Fatalf("type/initiator: %s", m.Raw)
		}
		if !isPage && p.Initiator.Stack.CallFrames[0].URL != "file:///srv/app.js" {
			t.Fatalf("host initiator url: %s", m.Raw)
		}
		if !strings.Contains(string(p.Request), `"authorization":"[redacted by inspector-worker]"`) {
			t.Fatalf("not redacted: %s", p.Request)
		}
	}
	if n := w.srv.Journal().Stats().Entries; n != 3 {
		t.Fatalf("journal has %d entries", n)
	}
}

// openFetchPage is a page source that declares the fetch topic.
func openFetchPage(t *testing.T, reg *sourceproto.Registry, token sourceproto.Token, id, url string) *clientPage {
	t.Helper()
	p := sourceprototest.New(id, token.Reveal())
	hello, err := sourceproto.Marshal(sourceproto.Header{Source: id}, &sourceproto.Hello{
		Role: sourceproto.RoleClient, Token: sourceproto.Secret(token.Reveal()),
		Topics: sourceproto.TopicConsole | sourceproto.TopicPage | sourceproto.TopicFetch,
		Agent:  sourceproto.Agent{Name: "test", Version: "1"}, Page: &sourceproto.PageInfo{URL: url, Title: "t"},
	})
	if err != nil {
		t.Fatal(err)
	}
	src, res := reg.Open(hello, sourceproto.OpenOptions{Role: sourceproto.RoleClient, Token: token, Outbox: make(outbox, 64)})
	if src == nil {
		t.Fatalf("open refused: %s", res.Replies)
	}
	p.Welcomed(t, res.Replies[0])
	pg := &clientPage{t: t, p: p, src: src}
	pg.ingest(p.Replace(t, sourceproto.ReplaceInitial))
	return pg
}

// 10,000 requests while one window streams and a second one enables in the
// middle (the cut-over): each window sees every request exactly once, and
// each ends exactly once. Counted by requestId.
func TestNetworkTenThousandRequestsTwoWindows(t *testing.T) {
	const total, batch = 10000, 25
	w, _, h := networkWorker(t, Options{JournalMaxEntries: 2 * total})
	a, b := w.dial("A"), w.dial("B")
	a.MustCall("Network.enable", nil)
	enabled := make(chan struct{})
	for i := 0; i < total; i += batch {
		var items []sourceproto.Item
		for k := i; k < i+batch; k++ {
			items = append(items, simpleFetch(fmt.Sprint(k))...)
		}
		h.send(items...)
		if i == total/2 {
			// B enables while the host keeps sending (no wait for its answer).
			go func() { defer close(enabled); b.Send("Network.enable", nil) }()
		}
	}
	<-enabled
	last := fmt.Sprintf("/api/%d\"", total-1)
	for _, c := range []*cdptest.Client{a, b} {
		c.SetTimeout(3 * time.Minute) // hang bound under -race
		id := lastRequestID(t, c, last)
		c.ExpectAnyEvent("Network.loadingFinished", func(m cdptest.Msg) bool { return params(t, m).RequestID == id })
		if c == b {
			// Where the cut-over fell: replayed requests precede the answer
			// to Network.enable, live ones follow it (timing, so logged).
			before, answered := 0, false
			for _, m := range c.All() {
				switch {
				case m.ID != nil:
					answered = true
				case m.Method == "Network.requestWillBeSent" && !answered:
					before++
				}
			}
			t.Logf("window B: %d requests replayed, %d live", before, total-before)
		}
		if warnings := c.Events("Log.entryAdded"); len(warnings) > 0 {
			t.Fatalf("window lost events: %s", warnings[0].Raw)
		}
		for _, method := range []string{"Network.requestWillBeSent", "Network.responseReceived", "Network.loadingFinished"} {
			n := countBy(t, c, method)
			if len(n) != total {
				t.Fatalf("%s: %d distinct requests in %s, want %d", method, len(n), method, total)
			}
			for id, k := range n {
				if k != 1 {
					t.Fatalf("%s: %s %d times", method, id, k)
				}
			}
		}
	}
}

// Response bodies: text, binary (all 256 byte values, base64), truncated
// (prefix and one Console warning per request), node:http (not read),
// request post data; redirect hops, refused and aborted requests.
func TestNetworkBodiesAndEndings(t *testing.T) {
	w, _, h := networkWorker(t, Options{})
	a := w.dial("A")
	a.MustCall("Network.enable", nil)
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	big := bytes.Repeat([]byte("0123456789"), 12000) // 120,000 bytes: three chunks
	send := func(items ...[]sourceproto.Item) {
		var flat []sourceproto.Item
		for _, x := range items {
			flat = append(flat, x...)
		}
		h.send(flat...)
	}
	t0 := 1.7e12
	send([]sourceproto.Item{reqItem("text", "http://h/text", t0), respItem("text", "http://h/text", 200, "text/plain; charset=utf-8", t0+10)},
		bodyItems("text", sourceproto.PartResponse, []byte("héllo wörld"), t0+11), []sourceproto.Item{finItem("text", 13, false, t0+12)})
	send([]sourceproto.Item{reqItem("bin", "http://h/bin", t0), respItem("bin", "http://h/bin", 200, "application/octet-stream", t0+1)},
		bodyItems("bin", sourceproto.PartResponse, all, t0+2), []sourceproto.Item{finItem("bin", 256, false, t0+3)})
	send([]sourceproto.Item{reqItem("cut", "http://h/cut", t0), respItem("cut", "http://h/cut", 200, "text/plain", t0+1)},
		bodyItems("cut", sourceproto.PartResponse, big, t0+2), []sourceproto.Item{finItem("cut", 5<<20, true, t0+3)})
	post := reqItem("post", "http://h/post", t0)
	post.Fetch.Request.Method, post.Fetch.Request.HasBody = "POST", true
	send([]sourceproto.Item{post}, bodyItems("post", sourceproto.PartRequest, []byte(`{"q":1}`), t0),
		[]sourceproto.Item{respItem("post", "http://h/post", 201, "application/json", t0+1), finItem("post", 0, false, t0+2)})
	nh := reqItem("nh", "http://h/nodehttp", t0)
	nh.Fetch.Request.Kind, nh.Fetch.Request.BodiesNotRead = sourceproto.KindHTTP, true
	send([]sourceproto.Item{nh, respItem("nh", "http://h/nodehttp", 200, "text/plain", t0+1), finItem("nh", 10, false, t0+2)})
	send([]sourceproto.Item{reqItem("redir", "http://h/old", t0), respItem("redir", "http://h/old", 302, "text/html", t0+1),
		respItem("redir", "http://h/new", 200, "text/plain", t0+2), finItem("redir", 0, false, t0+3)})
	send([]sourceproto.Item{reqItem("refused", "http://127.0.0.1:9/", t0), failItem("refused", "fetch failed: connect ECONNREFUSED 127.0.0.1:9", false, t0+1)})
	send([]sourceproto.Item{reqItem("abort", "http://h/slow", t0), respItem("abort", "http://h/slow", 200, "text/plain", t0+1),
		failItem("abort", "This operation was aborted", true, t0+2)})

	ids := map[string]string{}
	for _, u := range []string{"/text", "/bin", "/cut", "/post", "/nodehttp", "/old", "/\"", "/slow"} {
		ids[u] = lastRequestID(t, a, "http://"+map[bool]string{true: "127.0.0.1:9", false: "h"}[u == "/\""]+u)
	}
	a.ExpectAnyEvent("Network.loadingFailed", func(m cdptest.Msg) bool { return params(t, m).RequestID == ids["/slow"] })

	body := func(id string) (string, bool) {
		t.Helper()
		m := a.MustCall("Network.getResponseBody", map[string]any{"requestId": id})
		var r struct {
			Body          string `json:"body"`
			Base64Encoded bool   `json:"base64Encoded"`
		}
		json.Unmarshal(m.Result, &r)
		return r.Body, r.Base64Encoded
	}
	if s, b64 := body(ids["/text"]); s != "héllo wörld" || b64 {
		t.Fatalf("text body %q %v", s, b64)
	}
	if s, b64 := body(ids["/bin"]); !b64 || s != base64.StdEncoding.EncodeToString(all) {
		t.Fatalf("binary body %q %v", s, b64)
	}
	if s, b64 := body(ids["/cut"]); b64 || s != string(big) {
		t.Fatalf("truncated body: %d bytes, base64 %v", len(s), b64)
	}
	warn := a.ExpectAnyEvent("Log.entryAdded", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "truncated at 120000 bytes") })
	if !strings.Contains(string(warn.Params), "5242880 bytes of it reached the capture") {
		t.Fatalf("warning without the whole size: %s", warn.Raw)
	}
	body(ids["/cut"])
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "1"}) // a round trip after the second answer
	if n := len(a.Events("Log.entryAdded")); n != 1 {
		t.Fatalf("%d truncation warnings, want 1", n)
	}
	m := a.MustCall("Network.getRequestPostData", map[string]any{"requestId": ids["/post"]})
	if string(m.Result) != `{"postData":"{\"q\":1}","base64Encoded":false}` {
		t.Fatalf("post data %s", m.Result)
	}
	m = a.Call("Network.getResponseBody", map[string]any{"requestId": ids["/nodehttp"]})
	if m.Error == nil || m.Error.Code != codeServerError || !strings.Contains(m.Error.Message, "node:http") {
		t.Fatalf("node:http body: %s", m.Raw)
	}
	m = a.Call("Network.getResponseBody", map[string]any{"requestId": ids["/\""]})
	if m.Error == nil || !strings.Contains(m.Error.Message, "failed before a response") {
		t.Fatalf("refused body: %s", m.Raw)
	}
	m = a.Call("Network.getResponseBody", map[string]any{"requestId": "iw-net.999999"})
	if m.Error == nil || !strings.Contains(m.Error.Message, "evicted") {
		t.Fatalf("unknown id: %s", m.Raw)
	}

	var hops, redirects int
	for _, m := range a.Events("Network.requestWillBeSent") {
		p := params(t, m)
		if p.RequestID != ids["/old"] {
			continue
		}
		hops++
		if p.RedirectResponse != nil {
			redirects++
			if p.RedirectResponse.Status != 302 || p.RedirectResponse.URL != "http://h/old" || !strings.Contains(string(p.Request), "http://h/new") {
				t.Fatalf("redirect hop: %s", m.Raw)
			}
		}
	}
	if hops != 2 || redirects != 1 {
		t.Fatalf("redirect: %d requestWillBeSent, %d with redirectResponse", hops, redirects)
	}
	for _, m := range a.Events("Network.loadingFailed") {
		p := params(t, m)
		switch p.RequestID {
		case ids["/\""]:
			if p.Canceled || !strings.Contains(p.ErrorText, "ECONNREFUSED") {
				t.Fatalf("refused: %s", m.Raw)
			}
		case ids["/slow"]:
			if !p.Canceled {
				t.Fatalf("aborted: %s", m.Raw)
			}
		default:
			t.Fatalf("unexpected failure: %s", m.Raw)
		}
	}
	if nh := params(t, a.ExpectAnyEvent("Network.requestWillBeSent", func(m cdptest.Msg) bool { return params(t, m).RequestID == ids["/nodehttp"] })); nh.Type != "Other" {
		t.Fatalf("node:http type %q", nh.Type)
	}
}

// A window closed or a host gone: the host source's unfinished entries end
// as failed, and a window with Network disabled gets nothing.
func TestNetworkDisableAndHostGone(t *testing.T) {
	w, _, h := networkWorker(t, Options{})
	a := w.dial("A")
	a.MustCall("Network.enable", nil)
	h.send(reqItem("open", "http://h/pending", 1e12))
	id := lastRequestID(t, a, "/pending")
	a.MustCall("Network.disable", nil)
	h.send(simpleFetch("unseen")...)
	a.MustCall("Network.enable", nil) // replays: pending (unfinished) and unseen
	h.conn.Close()                    // the host goes away
	fail := a.ExpectAnyEvent("Network.loadingFailed", func(m cdptest.Msg) bool { return params(t, m).RequestID == id })
	if !strings.Contains(params(t, fail).ErrorText, "host disconnected") {
		t.Fatalf("failure text: %s", fail.Raw)
	}
	if n := countBy(t, a, "Network.requestWillBeSent")[id]; n != 2 {
		t.Fatalf("pending request announced %d times over two enables, want 2", n)
	}
	uid := lastRequestID(t, a, "/api/unseen")
	if n := countBy(t, a, "Network.requestWillBeSent")[uid]; n != 1 {
		t.Fatalf("request made while disabled announced %d times, want 1 (the replay)", n)
	}
}

// --no-capture: the journal stays empty, Network.enable still answers.
func TestNetworkNoCapture(t *testing.T) {
	w, _, h := networkWorker(t, Options{NoCapture: true})
	a := w.dial("A")
	a.MustCall("Network.enable", nil)
	h.send(simpleFetch("x")...)
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
	if n := len(a.Events("Network.requestWillBeSent")); n != 0 || w.srv.Journal().Stats().Entries != 0 {
		t.Fatalf("captured with NoCapture: %d events, %d entries", n, w.srv.Journal().Stats().Entries)
	}
}

// 1 MB responses over the real pipe keep the journal within its byte
// budget (its own accounting, checked after every batch), and a window
// still sees every response's full data length.
func TestNetworkJournalByteBudget(t *testing.T) {
	const responses, size, budget = 100, 1 << 20, 8 << 20
	w, _, h := networkWorker(t, Options{JournalMaxBytes: budget})
	a := w.dial("A")
	a.MustCall("Network.enable", nil)
	data := bytes.Repeat([]byte{'z'}, size)
	for i := range responses {
		id := fmt.Sprint(i)
		h.send(reqItem(id, "http://h/mb/"+id, 1e12), respItem(id, "http://h/mb/"+id, 200, "text/plain", 1e12+1))
		chunks := bodyItems(id, sourceproto.PartResponse, data, 1e12+2)
		for len(chunks) > 0 { // a frame holds at most MaxFrameBytes: 8 base64 chunks fit
			n := min(8, len(chunks))
			h.send(chunks[:n]...)
			chunks = chunks[n:]
		}
		h.send(finItem(id, size, false, 1e12+3))
		if st := w.srv.Journal().Stats(); st.Bytes > budget {
			t.Fatalf("after %d responses the journal holds %d bytes, budget %d", i+1, st.Bytes, budget)
		}
	}
	last := lastRequestID(t, a, fmt.Sprintf("/mb/%d\"", responses-1))
	a.ExpectAnyEvent("Network.loadingFinished", func(m cdptest.Msg) bool { return params(t, m).RequestID == last })
	got := map[string]int64{}
	for _, m := range a.Events("Network.dataReceived") {
		var p struct {
			RequestID  string `json:"requestId"`
			DataLength int64  `json:"dataLength"`
		}
		json.Unmarshal(m.Params, &p)
		got[p.RequestID] += p.DataLength
	}
	if len(got) != responses {
		t.Fatalf("data for %d responses, want %d", len(got), responses)
	}
	for id, n := range got {
		if n != size {
			t.Fatalf("%s: %d bytes of data announced", id, n)
		}
	}
	st := w.srv.Journal().Stats()
	t.Logf("journal after %d × 1 MiB: %d entries, %d bytes (budget %d), %d evicted", responses, st.Entries, st.Bytes, budget, st.Evicted)
	if st.Evicted == 0 {
		t.Fatal("nothing evicted")
	}
}
