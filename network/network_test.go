package network

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/fetchcapture"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// out is an in-memory Output (unit tests only; the socket tests are in
// cdpserver). limit > 0 makes Event refuse past that many messages.
type out struct {
	mu      sync.Mutex
	msgs    []map[string]any
	notices []string
	limit   int
}

func (o *out) Event(m []byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.limit > 0 && len(o.msgs) >= o.limit {
		return false
	}
	var v map[string]any
	if err := json.Unmarshal(m, &v); err != nil {
		panic(err)
	}
	o.msgs = append(o.msgs, v)
	return true
}

func (o *out) Notice(m []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.notices = append(o.notices, string(m))
}

// hasURL reports whether a Network.requestWillBeSent for url arrived.
func (o *out) hasURL(url string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, m := range o.msgs {
		if m["method"] != "Network.requestWillBeSent" {
			continue
		}
		if r, _ := m["params"].(map[string]any)["request"].(map[string]any); r != nil && r["url"] == url {
			return true
		}
	}
	return false
}

func (o *out) methods(id string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var r []string
	for _, m := range o.msgs {
		p := m["params"].(map[string]any)
		if id == "" || p["requestId"] == id {
			r = append(r, strings.TrimPrefix(m["method"].(string), "Network."))
		}
	}
	return r
}

var host = sourceproto.SourceRef{ID: "host", Gen: 1, Role: sourceproto.RoleHost}
var page = sourceproto.SourceRef{ID: "p1", Gen: 2, Role: sourceproto.RoleClient}

func newJournal(opts fetchcapture.Options) *fetchcapture.Journal {
	opts.Describe = func(info sourceproto.SourceInfo) fetchcapture.Origin {
		if info.Ref.Role == sourceproto.RoleHost {
			return fetchcapture.Origin{FrameID: "T", LoaderID: "T", DocumentURL: "file:///app/"}
		}
		return fetchcapture.Origin{FrameID: "T.client-1", LoaderID: "T.client-1.2", DocumentURL: "http://127.0.0.1/"}
	}
	j := fetchcapture.New(opts)
	j.SourceOpened(sourceproto.SourceInfo{Ref: host})
	j.SourceOpened(sourceproto.SourceInfo{Ref: page})
	return j
}

func feed(j *fetchcapture.Journal, ref sourceproto.SourceRef, evs ...*sourceproto.FetchEvent) {
	a := &sourceproto.Append{}
	for _, ev := range evs {
		a.Items = append(a.Items, sourceproto.Item{Topic: sourceproto.TopicFetch, Fetch: ev})
	}
	j.Appended(ref, 0, a)
}

func fetchOK(id, url string, body []byte, truncated bool) []*sourceproto.FetchEvent {
	evs := []*sourceproto.FetchEvent{
		{ID: id, Phase: "request", Timestamp: 1000, Request: &sourceproto.FetchRequest{URL: url, Method: "GET", Headers: []sourceproto.HTTPHeader{},
			StackTrace: &sourceproto.StackTrace{CallFrames: []sourceproto.CallFrame{{FunctionName: "load", URL: "/app/main.js", LineNumber: 3, ColumnNumber: 4, ScriptID: "7"}}}}},
		{ID: id, Phase: "response", Timestamp: 1250, Response: &sourceproto.FetchResponse{URL: url, Status: 200, StatusText: "OK",
			Headers: []sourceproto.HTTPHeader{{Name: "content-type", Value: "text/plain; charset=utf-8"}, {Name: "set-cookie", Value: "a=1"}, {Name: "set-cookie", Value: "b=2"}}}},
	}
	for off := 0; off < len(body); off += sourceproto.MaxChunkBytes {
		end := min(off+sourceproto.MaxChunkBytes, len(body))
		evs = append(evs, &sourceproto.FetchEvent{ID: id, Phase: "body", Timestamp: 1300, Body: &sourceproto.FetchBody{Part: "response", Offset: int64(off), Data: body[off:end]}})
	}
	return append(evs, &sourceproto.FetchEvent{ID: id, Phase: "finished", Timestamp: 1400,
		Finished: &sourceproto.FetchFinished{ResponseBytes: int64(len(body)) * map[bool]int64{true: 3, false: 1}[truncated], ResponseTruncated: truncated}})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // hang bound
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestReplayThenLiveOnce(t *testing.T) {
	j := newJournal(fetchcapture.Options{})
	feed(j, host, fetchOK("a", "http://x/a", []byte("hello"), false)...)
	o := &out{}
	n := New(j, nil)
	w := n.NewWindow(o)
	w.Enable()
	w.Enable() // a second enable does not replay again
	feed(j, page, fetchOK("b", "http://x/b#frag", nil, false)...)
	waitFor(t, "live entry", func() bool { return len(o.methods("iw-net.2")) == 3 })
	if got := strings.Join(o.methods("iw-net.1"), ","); got != "requestWillBeSent,responseReceived,dataReceived,loadingFinished" {
		t.Fatalf("replayed: %s", got)
	}
	if got := strings.Join(o.methods("iw-net.2"), ","); got != "requestWillBeSent,responseReceived,loadingFinished" {
		t.Fatalf("live: %s", got)
	}
	m := o.msgs[0]["params"].(map[string]any)
	init := m["initiator"].(map[string]any)
	cf := init["stack"].(map[string]any)["callFrames"].([]any)[0].(map[string]any)
	if m["frameId"] != "T" || m["type"] != "Fetch" || init["type"] != "script" || cf["url"] != "file:///app/main.js" || cf["scriptId"] != "7" {
		t.Fatalf("host request: %v", m)
	}
	resp := o.msgs[1]["params"].(map[string]any)["response"].(map[string]any)
	timing := resp["timing"].(map[string]any)
	if resp["mimeType"] != "text/plain" || resp["headers"].(map[string]any)["set-cookie"] != "a=1\nb=2" ||
		timing["requestTime"] != 1.0 || timing["receiveHeadersEnd"] != 250.0 {
		t.Fatalf("response: %v", resp)
	}
	live := o.msgs[4]["params"].(map[string]any)
	if live["frameId"] != "T.client-1" || live["request"].(map[string]any)["urlFragment"] != "#frag" {
		t.Fatalf("page request: %v", live)
	}
	w.Disable()
	// A second, enabled window shows when "c" was delivered: by then the
	// disabled one must have nothing of it.
	o2 := &out{}
	w2 := n.NewWindow(o2)
	w2.Enable()
	defer w2.Close()
	feed(j, host, fetchOK("c", "http://x/c", nil, false)...)
	waitFor(t, "c in the enabled window", func() bool { return len(o2.methods("iw-net.3")) == 3 })
	if n := len(o.methods("iw-net.3")); n != 0 {
		t.Fatalf("disabled window got %d events", n)
	}
	w.Close()
}

func TestRedirectFailureAndKinds(t *testing.T) {
	j := newJournal(fetchcapture.Options{})
	o := &out{}
	w := New(j, nil).NewWindow(o)
	w.Enable()
	defer w.Close()
	feed(j, host,
		&sourceproto.FetchEvent{ID: "r", Phase: "request", Timestamp: 1, Request: &sourceproto.FetchRequest{URL: "http://x/1", Method: "GET", Headers: []sourceproto.HTTPHeader{}, Kind: "xhr"}},
		&sourceproto.FetchEvent{ID: "r", Phase: "response", Timestamp: 2, Response: &sourceproto.FetchResponse{URL: "http://x/1", Status: 302, StatusText: "Found", Headers: []sourceproto.HTTPHeader{}}},
		&sourceproto.FetchEvent{ID: "r", Phase: "response", Timestamp: 3, Response: &sourceproto.FetchResponse{URL: "http://x/2", Status: 200, StatusText: "OK", Headers: []sourceproto.HTTPHeader{}}},
		&sourceproto.FetchEvent{ID: "r", Phase: "failed", Timestamp: 4, Failed: &sourceproto.FetchFailure{Message: "This operation was aborted", Aborted: true}},
		&sourceproto.FetchEvent{ID: "h", Phase: "request", Timestamp: 1, Request: &sourceproto.FetchRequest{URL: "http://x/h", Method: "GET", Headers: []sourceproto.HTTPHeader{}, Kind: "http", BodiesNotRead: true}},
		&sourceproto.FetchEvent{ID: "h", Phase: "failed", Timestamp: 4, Failed: &sourceproto.FetchFailure{Message: "connect ECONNREFUSED 127.0.0.1:9"}},
	)
	waitFor(t, "events", func() bool { return len(o.methods("")) == 6 })
	if got := strings.Join(o.methods("iw-net.1"), ","); got != "requestWillBeSent,requestWillBeSent,responseReceived,loadingFailed" {
		t.Fatalf("redirect: %s", got)
	}
	hop := o.msgs[1]["params"].(map[string]any)
	if hop["redirectResponse"].(map[string]any)["status"] != 302.0 || hop["request"].(map[string]any)["url"] != "http://x/2" || hop["type"] != "XHR" {
		t.Fatalf("hop: %v", hop)
	}
	if f := o.msgs[3]["params"].(map[string]any); f["canceled"] != true {
		t.Fatalf("abort: %v", f)
	}
	if f := o.msgs[5]["params"].(map[string]any); f["canceled"] != false || f["type"] != "Other" || !strings.Contains(f["errorText"].(string), "ECONNREFUSED") {
		t.Fatalf("refused: %v", f)
	}
	if _, _, err := w.ResponseBody([]byte(`{"requestId":"iw-net.2"}`)); err == nil || !strings.Contains(err.Error(), "node:http") {
		t.Fatalf("bodiesNotRead: %v", err)
	}
}

func TestBodies(t *testing.T) {
	j := newJournal(fetchcapture.Options{})
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	feed(j, host, fetchOK("t", "http://x/t", []byte("héllo"), false)...)
	feed(j, host, fetchOK("b", "http://x/b", all, false)...)
	cut := []byte(strings.Repeat("a", 99) + "é")[:100] // ends inside a character
	feed(j, host, fetchOK("c", "http://x/c", cut, true)...)
	w := New(j, nil).NewWindow(&out{})
	ask := func(id string) (bodyAnswer, []byte) {
		t.Helper()
		a, notice, err := w.ResponseBody(fmt.Appendf(nil, `{"requestId":%q}`, id))
		if err != nil {
			t.Fatal(err)
		}
		var b bodyAnswer
		if err := json.Unmarshal(a, &b); err != nil {
			t.Fatal(err)
		}
		return b, notice
	}
	if b, n := ask("iw-net.1"); b.Body != "héllo" || b.Base64Encoded || n != nil {
		t.Fatalf("text: %+v %s", b, n)
	}
	if b, _ := ask("iw-net.2"); !b.Base64Encoded || b.Body != base64.StdEncoding.EncodeToString(all) {
		t.Fatalf("binary: %+v", b)
	}
	b, n := ask("iw-net.3")
	if b.Base64Encoded || b.Body != strings.Repeat("a", 99) || !strings.Contains(string(n), "truncated at 100 bytes") || !strings.Contains(string(n), "300 bytes of it reached the capture") {
		t.Fatalf("truncated: %+v %s", b, n)
	}
	if _, n := ask("iw-net.3"); n != nil {
		t.Fatalf("warned twice: %s", n)
	}
	if _, _, err := w.ResponseBody([]byte(`{"requestId":"nope"}`)); err == nil || !strings.Contains(err.Error(), "evicted") {
		t.Fatalf("unknown: %v", err)
	}
	if _, _, err := w.ResponseBody([]byte(`{}`)); err == nil {
		t.Fatal("no requestId accepted")
	}
	feed(j, host, &sourceproto.FetchEvent{ID: "p", Phase: "request", Timestamp: 1, Request: &sourceproto.FetchRequest{URL: "http://x/p", Method: "POST", Headers: []sourceproto.HTTPHeader{}, HasBody: true}},
		&sourceproto.FetchEvent{ID: "p", Phase: "body", Timestamp: 1, Body: &sourceproto.FetchBody{Part: "request", Data: []byte(`{"a":1}`)}},
		&sourceproto.FetchEvent{ID: "p", Phase: "response", Timestamp: 2, Response: &sourceproto.FetchResponse{URL: "http://x/p", Status: 201, Headers: []sourceproto.HTTPHeader{}}})
	pd, err := w.RequestPostData([]byte(`{"requestId":"iw-net.4"}`))
	if err != nil || string(pd) != `{"postData":"{\"a\":1}","base64Encoded":false}` {
		t.Fatalf("post data: %s %v", pd, err)
	}
}

func TestBehindWindowIsToldHowMany(t *testing.T) {
	j := newJournal(fetchcapture.Options{})
	o := &out{limit: 10}
	w := New(j, nil).NewWindow(o)
	w.Enable()
	defer w.Close()
	for i := range 5 {
		feed(j, host, fetchOK(fmt.Sprint(i), "http://x/", nil, false)...)
	}
	waitFor(t, "the notice", func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		total := 0
		for _, n := range o.notices {
			var k int
			if i := strings.Index(n, "] "); i > 0 {
				fmt.Sscanf(n[i+2:], "%d", &k)
			}
			total += k
		}
		return len(o.msgs)+total == 15
	})
}

// The frontend links an initiator stack's top frame by scriptId and shows
// an empty cell without one: frames get the windows' scriptIds from the
// resolver, and a top frame still without one becomes a location by URL.
func TestInitiatorScriptIDs(t *testing.T) {
	r := &fetchcapture.Request{Origin: fetchcapture.Origin{Role: sourceproto.RoleHost}, Stack: &sourceproto.StackTrace{
		CallFrames: []sourceproto.CallFrame{{FunctionName: "load", URL: "/srv/app.js", LineNumber: 4, ColumnNumber: 2}}}}
	loc := initiator(r, nil)
	if loc.Stack != nil || loc.URL != "file:///srv/app.js" || loc.LineNumber != 4 || loc.ColumnNumber != 2 {
		t.Fatalf("without a scriptId: %+v", loc)
	}
	var asked string
	st := initiator(r, func(_ *fetchcapture.Request, u string) string { asked = u; return "42" })
	if st.Stack == nil || st.Stack.CallFrames[0].ScriptID != "42" || asked != "file:///srv/app.js" {
		t.Fatalf("with the resolver: %+v (asked %q)", st, asked)
	}
}

// What the journal drops for its budgets reaches the window: a page whose
// requests were pushed out by another page's is named once in the
// Console; a request whose page left unfinished fails, and its body
// answers why it is gone.
func TestBudgetDropsAreAnnounced(t *testing.T) {
	j := newJournal(fetchcapture.Options{MaxBytes: 64 << 10})
	other := sourceproto.SourceRef{ID: "p2", Gen: 3, Role: sourceproto.RoleClient}
	j.SourceOpened(sourceproto.SourceInfo{Ref: other})
	o := &out{}
	w := New(j, nil).NewWindow(o)
	w.Enable()
	defer w.Close()
	for i := range 4 { // 7 KiB bodies: the page fills the pages' share (32 KiB) by itself
		feed(j, page, fetchOK(fmt.Sprint("b", i), "http://x/b", make([]byte, 7<<10), false)...)
	}
	for i := range 20 { // the other page's unfinished requests push the first page's out
		feed(j, other, &sourceproto.FetchEvent{ID: fmt.Sprint("u", i), Phase: "request", Timestamp: 1, Request: &sourceproto.FetchRequest{
			URL: "http://x/u", Method: "GET", Headers: []sourceproto.HTTPHeader{{Name: "x-pad", Value: strings.Repeat("p", 2000)}}}})
	}
	j.SourceClosed(other, sourceproto.CloseGoingAway)
	logs := func() []string {
		o.mu.Lock()
		defer o.mu.Unlock()
		var r []string
		for _, m := range o.msgs {
			if m["method"] == "Log.entryAdded" {
				r = append(r, m["params"].(map[string]any)["entry"].(map[string]any)["text"].(string))
			}
		}
		return r
	}
	waitFor(t, "the notice", func() bool { return len(logs()) > 0 })
	// The window takes the journal's steps in order: once a later request
	// shows, a second notice would have shown before it.
	feed(j, host, &sourceproto.FetchEvent{ID: "sentinel", Phase: "request", Timestamp: 2, Request: &sourceproto.FetchRequest{
		URL: "http://x/sentinel", Method: "GET", Headers: []sourceproto.HTTPHeader{}}})
	waitFor(t, "the later request", func() bool { return o.hasURL("http://x/sentinel") })
	if l := logs(); len(l) != 1 || !strings.Contains(l[0], "of the page http://127.0.0.1/ were dropped") {
		t.Fatalf("notices: %q", l)
	}
	last := fmt.Sprintf(`{"requestId":"iw-net.%d"}`, 4+20)
	_, _, err := w.ResponseBody([]byte(last))
	if err == nil || !strings.Contains(err.Error(), "the body is gone: the page disconnected") || strings.Contains(err.Error(), "fetchcapture:") {
		t.Fatalf("released body: %v", err)
	}
}
