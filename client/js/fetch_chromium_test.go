//go:build linux

package clientjs_test

// Page fetch and XMLHttpRequest capture in a real browser: headless
// Chromium runs a page twice, once plain and once with client.js; the page
// reports what it saw (statuses, bodies' SHA-256, errors, XHR event
// sequences) to the server, and both reports must be equal. The client's
// frames go to a minimal recording worker (welcome, acks) rather than the
// Registry, so this test checks the items' wire shape by itself: the
// optional members of a fetch item (kind, stackTrace; docs/protocol.md
// "Items and topics") are decoded by sourceproto, not by this package.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	clientjs "github.com/inspector-worker/inspector-worker/client/js"
)

// pageFetchJS runs the page's calls one after another and POSTs the
// results to /report. Every XHR records its readyState changes and events.
const pageFetchJS = `
const hex = async (buf) => Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', buf)), (b) => b.toString(16).padStart(2, '0')).join('');
const errOf = (e) => ({ ctor: e && e.constructor && e.constructor.name, name: e && e.name, message: e && e.message });
function xhr(method, url, o = {}) {
  return new Promise((resolve) => {
    const x = new XMLHttpRequest();
    const seen = [];
    x.onreadystatechange = () => seen.push('rs' + x.readyState + ':' + x.status);
    for (const ev of ['loadstart', 'progress', 'load', 'error', 'abort', 'timeout', 'loadend']) x.addEventListener(ev, () => seen.push(ev));
    x.open(method, url);
    if (o.type) x.responseType = o.type;
    if (o.header) x.setRequestHeader(o.header[0], o.header[1]);
    x.onloadend = async () => {
      const out = { seen, status: x.status, statusText: x.statusText, responseURL: x.responseURL, type: x.responseType };
      if (x.status) {
        if (!x.responseType || x.responseType === 'text') out.text = x.responseText;
        else if (x.responseType === 'arraybuffer') out.sha = await hex(x.response);
        else if (x.responseType === 'json') out.json = x.response;
        else if (x.responseType === 'blob') out.sha = await hex(await x.response.arrayBuffer());
      }
      resolve(out);
    };
    if (o.abortAfter) setTimeout(() => x.abort(), o.abortAfter);
    x.send(o.body === undefined ? null : o.body);
  });
}
async function f(url, init, read) {
  try {
    const r = await fetch(url, init);
    const out = { status: r.status, statusText: r.statusText, url: r.url, redirected: r.redirected, type: r.type };
    try { out.sha = await hex(await r.arrayBuffer()); } catch (e) { out.bodyError = errOf(e); }
    return out;
  } catch (e) {
    return { error: errOf(e) };
  }
}
async function fByob(url) {
  const r = await fetch(url);
  const rd = r.body.getReader({ mode: 'byob' });
  const parts = [];
  let buf = new ArrayBuffer(100);
  for (;;) {
    const { done, value } = await rd.read(new Uint8Array(buf));
    if (done) break;
    parts.push(...value);
    buf = value.buffer;
  }
  return { status: r.status, sha: await hex(new Uint8Array(parts).buffer) };
}
async function fClone(url) {
  const r = await fetch(url);
  const k = r.clone();
  const forIn = [];
  for (const x in r) forIn.push(x);
  return { url: k.url, type: k.type, redirected: k.redirected, status: k.status, keys: Object.keys(r), json: JSON.stringify(r),
    forIn: forIn.join(), isResponse: r instanceof Response && r.constructor === Response, tag: Object.prototype.toString.call(r),
    sha: await hex(await k.arrayBuffer()), sha2: await hex(await r.arrayBuffer()), bodyUsed: r.bodyUsed };
}
async function main() {
  const res = {};
  res.text = await f('/api/text');
  res.binary = await f('/api/binary');
  res.redirect = await f('/api/redirect');
  res.post = await f('/api/echo', { method: 'POST', body: 'fetch-body', headers: { 'x-test': 'fetch' } });
  res.refused = await f(REFUSED);
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 100);
  res.aborted = await f('/api/never', { signal: ac.signal });
  res.xText = await xhr('GET', '/api/text');
  res.xBuf = await xhr('GET', '/api/binary', { type: 'arraybuffer' });
  res.xJSON = await xhr('GET', '/api/json', { type: 'json' });
  res.xBlob = await xhr('GET', '/api/binary', { type: 'blob' });
  res.xPost = await xhr('POST', '/api/echo', { body: 'xhr-body', header: ['X-Test', 'xhr'] });
  res.xRefused = await xhr('GET', REFUSED);
  res.xAbort = await xhr('GET', '/api/never', { abortAfter: 100 });
  res.byob = await fByob('/api/binary');
  res.clone = await fClone('/api/redirect');
  res.captured = typeof window.__inspectorWorkerClient === 'object';
  await fetch('/report', { method: 'POST', body: JSON.stringify(res) });
}
main();
`

// recordingWorker accepts client WebSockets, answers hello and acks, and
// keeps every item.
type recordingWorker struct {
	mu    sync.Mutex
	items []json.RawMessage
	hello map[string]any
}

func (rw *recordingWorker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 21)
	ctx := r.Context()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		var f struct {
			Type   string          `json:"type"`
			Source string          `json:"source"`
			Seq    int64           `json:"seq"`
			Body   json.RawMessage `json:"body"`
		}
		if json.Unmarshal(data, &f) != nil {
			return
		}
		var reply string
		switch f.Type {
		case "hello":
			var h map[string]any
			_ = json.Unmarshal(f.Body, &h)
			rw.mu.Lock()
			rw.hello = h
			rw.mu.Unlock()
			topics, _ := json.Marshal(h["topics"])
			reply = fmt.Sprintf(`{"v":1,"type":"welcome","source":%q,"gen":1,"body":{"capabilities":[],"topics":%s,"limits":{"maxFrameBytes":1048576,"maxBatchItems":512,"maxStringBytes":65536,"maxChunkBytes":49152,"maxValueBytes":262144}}}`, f.Source, topics)
		case "replace":
			reply = fmt.Sprintf(`{"v":1,"type":"ack","source":%q,"gen":1,"seq":%d,"body":{}}`, f.Source, f.Seq)
		case "append":
			var b struct {
				Items []json.RawMessage `json:"items"`
			}
			_ = json.Unmarshal(f.Body, &b)
			rw.mu.Lock()
			rw.items = append(rw.items, b.Items...)
			rw.mu.Unlock()
			reply = fmt.Sprintf(`{"v":1,"type":"ack","source":%q,"gen":1,"seq":%d,"body":{}}`, f.Source, f.Seq+int64(len(b.Items))-1)
		default:
			continue
		}
		if err := c.Write(ctx, websocket.MessageText, []byte(reply)); err != nil {
			return
		}
	}
}

// fetchEvent is the generic reading of one fetch item.
type fetchEvent struct {
	ID        string  `json:"id"`
	Phase     string  `json:"phase"`
	Timestamp float64 `json:"timestamp"`
	Request   *struct {
		URL           string              `json:"url"`
		Method        string              `json:"method"`
		Headers       []map[string]string `json:"headers"`
		HasBody       bool                `json:"hasBody"`
		Kind          string              `json:"kind"`
		BodiesNotRead bool                `json:"bodiesNotRead"`
		StackTrace    *struct {
			CallFrames []struct {
				FunctionName string `json:"functionName"`
				URL          string `json:"url"`
			} `json:"callFrames"`
		} `json:"stackTrace"`
	} `json:"request"`
	Response *struct {
		URL        string              `json:"url"`
		Status     int                 `json:"status"`
		StatusText string              `json:"statusText"`
		Headers    []map[string]string `json:"headers"`
		Redirected bool                `json:"redirected"`
	} `json:"response"`
	Body *struct {
		Part   string `json:"part"`
		Offset int    `json:"offset"`
		Data   string `json:"data"`
	} `json:"body"`
	Finished *struct {
		RequestBytes      int  `json:"requestBytes"`
		ResponseBytes     int  `json:"responseBytes"`
		RequestTruncated  bool `json:"requestTruncated"`
		ResponseTruncated bool `json:"responseTruncated"`
	} `json:"finished"`
	Failed *struct {
		Message string `json:"message"`
		Aborted bool   `json:"aborted"`
	} `json:"failed"`
}

// capturedFetch is one id's events put together.
type capturedFetch struct {
	raw          []string
	events       []fetchEvent
	phases       string
	reqBody      []byte
	respBody     []byte
	request      *fetchEvent
	response     *fetchEvent
	end          *fetchEvent
	responseSeen int
}

func assembleFetches(t *testing.T, items []json.RawMessage) []*capturedFetch {
	t.Helper()
	byID := map[string]*capturedFetch{}
	var order []*capturedFetch
	for _, raw := range items {
		var it struct {
			Fetch *fetchEvent `json:"fetch"`
		}
		if err := json.Unmarshal(raw, &it); err != nil {
			t.Fatal(err)
		}
		if it.Fetch == nil {
			continue
		}
		e := *it.Fetch
		cf := byID[e.ID]
		if cf == nil {
			cf = &capturedFetch{}
			byID[e.ID] = cf
			order = append(order, cf)
		}
		cf.events = append(cf.events, e)
		cf.raw = append(cf.raw, string(raw))
		p := e.Phase
		if e.Body != nil {
			p += ":" + e.Body.Part
			d, err := base64.StdEncoding.DecodeString(e.Body.Data)
			if err != nil {
				t.Fatal(err)
			}
			if e.Body.Part == "request" {
				if e.Body.Offset != len(cf.reqBody) {
					t.Fatalf("request body offset %d after %d bytes", e.Body.Offset, len(cf.reqBody))
				}
				cf.reqBody = append(cf.reqBody, d...)
			} else {
				if e.Body.Offset != len(cf.respBody) {
					t.Fatalf("response body offset %d after %d bytes", e.Body.Offset, len(cf.respBody))
				}
				cf.respBody = append(cf.respBody, d...)
			}
		}
		if cf.phases != "" {
			cf.phases += ","
		}
		cf.phases += p
		ev := &cf.events[len(cf.events)-1]
		switch e.Phase {
		case "request":
			cf.request = ev
		case "response":
			cf.response = ev
			cf.responseSeen++
		case "finished", "failed":
			if cf.end != nil {
				t.Fatalf("two ends for %s: %s", e.ID, cf.phases)
			}
			cf.end = ev
		}
	}
	return order
}

func TestChromiumPageFetchCapture(t *testing.T) {
	bin := make([]byte, 256)
	for i := range bin {
		bin[i] = byte(i)
	}
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + refused.Addr().String() + "/gone"
	refused.Close()

	worker := &recordingWorker{}
	reports := make(chan map[string]any, 2)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	stop := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/client", worker)
	mux.HandleFunc("/client.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write(clientjs.ClientJS())
	})
	mux.HandleFunc("/app.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = io.WriteString(w, "const REFUSED = "+fmt.Sprintf("%q", refusedURL)+";\n"+pageFetchJS)
	})
	mux.HandleFunc("/api/text", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Api", "text")
		_, _ = io.WriteString(w, "héllo page")
	})
	mux.HandleFunc("/api/binary", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(bin)
	})
	mux.HandleFunc("/api/json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"a":[1,2],"b":"c"}`)
	})
	mux.HandleFunc("/api/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/api/text", http.StatusFound)
	})
	mux.HandleFunc("/api/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(b)
	})
	mux.HandleFunc("/api/never", func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	})
	mux.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err == nil {
			reports <- m
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		client := ""
		if r.URL.Path == "/captured" {
			client = `<script src="/client.js" data-endpoint="ws://` + addr + `/client" data-token="t"></script>`
		} else if r.URL.Path != "/plain" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<!doctype html><html><head><title>fetch page</title>`+client+`</head><body><script src="/app.js"></script></body></html>`)
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		close(stop)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	base := "http://" + addr

	wait := func(what string) map[string]any {
		select {
		case m := <-reports:
			return m
		case <-time.After(60 * time.Second):
			t.Fatalf("no report from the %s page", what)
			return nil
		}
	}
	openChromium(t, base+"/plain")
	plain := wait("plain")
	openChromium(t, base+"/captured")
	captured := wait("captured")

	if plain["captured"] != false || captured["captured"] != true {
		t.Fatalf("client.js loaded: plain %v, captured %v", plain["captured"], captured["captured"])
	}
	delete(plain, "captured")
	delete(captured, "captured")
	pj, _ := json.MarshalIndent(plain, "", " ")
	cj, _ := json.MarshalIndent(captured, "", " ")
	if string(pj) != string(cj) {
		t.Fatalf("the page saw different results with capture:\nplain:    %s\ncaptured: %s", pj, cj)
	}
	for _, k := range []string{"text", "binary", "xText", "xBuf", "xBlob", "xPost", "refused", "xAbort", "byob", "clone"} {
		if plain[k] == nil {
			t.Fatalf("no %s result: %s", k, pj)
		}
	}
	if e := plain["refused"].(map[string]any)["error"]; e == nil {
		t.Fatalf("refused fetch resolved: %s", pj)
	}

	// The items: wait until every call (and the report) has ended.
	var fetches []*capturedFetch
	deadline := time.Now().Add(30 * time.Second)
	for {
		worker.mu.Lock()
		items := append([]json.RawMessage(nil), worker.items...)
		worker.mu.Unlock()
		fetches = assembleFetches(t, items)
		ended := 0
		for _, f := range fetches {
			if f.end != nil {
				ended++
			}
		}
		if ended >= 14 && ended == len(fetches) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d fetches, %d ended", len(fetches), ended)
		}
		time.Sleep(50 * time.Millisecond)
	}
	worker.mu.Lock()
	topics := fmt.Sprint(worker.hello["topics"])
	worker.mu.Unlock()
	if !strings.Contains(topics, "fetch") {
		t.Fatalf("hello topics %s", topics)
	}
	find := func(kind, method, path string, nth int) *capturedFetch {
		t.Helper()
		n := 0
		for _, f := range fetches {
			r := f.request.Request
			k := r.Kind
			if k == "" {
				k = "fetch"
			}
			if k == kind && r.Method == method && (r.URL == base+path || r.URL == path) {
				if n == nth {
					return f
				}
				n++
			}
		}
		t.Fatalf("no %s %s %s #%d", kind, method, path, nth)
		return nil
	}
	checkOK := func(f *capturedFetch, status int, body []byte, phases string) {
		t.Helper()
		if f.phases != phases {
			t.Errorf("%s phases %s, want %s", f.request.Request.URL, f.phases, phases)
		}
		if f.response == nil || f.response.Response.Status != status || f.end.Finished == nil {
			t.Fatalf("%s: response %+v end %+v", f.request.Request.URL, f.response, f.end)
		}
		if string(f.respBody) != string(body) || f.end.Finished.ResponseBytes != len(body) {
			t.Errorf("%s: body %q (%d bytes said), want %q", f.request.Request.URL, f.respBody, f.end.Finished.ResponseBytes, body)
		}
		st := f.request.Request.StackTrace
		if st == nil || len(st.CallFrames) == 0 || st.CallFrames[0].URL != base+"/app.js" {
			t.Errorf("%s: stack %+v, want the page's /app.js first", f.request.Request.URL, st)
		}
		if !(f.request.Timestamp <= f.response.Timestamp && f.response.Timestamp <= f.end.Timestamp) {
			t.Errorf("%s: timestamps out of order", f.request.Request.URL)
		}
	}
	text := find("fetch", "GET", "/api/text", 0)
	checkOK(text, 200, []byte("héllo page"), "request,response,body:response,finished")
	if h := headerValue(text.response.Response.Headers, "x-api"); h != "text" {
		t.Errorf("x-api header %q in %v", h, text.response.Response.Headers)
	}
	checkOK(find("fetch", "GET", "/api/binary", 0), 200, bin, "request,response,body:response,finished")
	red := find("fetch", "GET", "/api/redirect", 0)
	checkOK(red, 200, []byte("héllo page"), "request,response,body:response,finished")
	if !red.response.Response.Redirected || red.response.Response.URL != base+"/api/text" {
		t.Errorf("redirect: %+v", red.response.Response)
	}
	post := find("fetch", "POST", "/api/echo", 0)
	checkOK(post, 201, []byte("fetch-body"), "request,body:request,response,body:response,finished")
	if string(post.reqBody) != "fetch-body" || !post.request.Request.HasBody || headerValue(post.request.Request.Headers, "x-test") != "fetch" {
		t.Errorf("fetch POST request: %q %+v", post.reqBody, post.request.Request)
	}
	ref := find("fetch", "GET", refusedURL, 0)
	if ref.phases != "request,failed" || ref.end.Failed.Aborted || ref.end.Failed.Message == "" {
		t.Errorf("refused fetch: %s %+v", ref.phases, ref.end.Failed)
	}
	ab := find("fetch", "GET", "/api/never", 0)
	if ab.end.Failed == nil || !ab.end.Failed.Aborted {
		t.Errorf("aborted fetch: %s %+v", ab.phases, ab.end)
	}

	checkOK(find("xhr", "GET", "/api/text", 0), 200, []byte("héllo page"), "request,response,body:response,finished")
	checkOK(find("xhr", "GET", "/api/binary", 0), 200, bin, "request,response,body:response,finished")
	checkOK(find("xhr", "GET", "/api/json", 0), 200, []byte(`{"a":[1,2],"b":"c"}`), "request,response,body:response,finished")
	checkOK(find("xhr", "GET", "/api/binary", 1), 200, bin, "request,response,body:response,finished")
	xpost := find("xhr", "POST", "/api/echo", 0)
	checkOK(xpost, 201, []byte("xhr-body"), "request,body:request,response,body:response,finished")
	if string(xpost.reqBody) != "xhr-body" || headerValue(xpost.request.Request.Headers, "x-test") != "xhr" {
		t.Errorf("xhr POST request: %q %+v", xpost.reqBody, xpost.request.Request)
	}
	xref := find("xhr", "GET", refusedURL, 0)
	if xref.phases != "request,failed" || xref.end.Failed.Aborted {
		t.Errorf("refused xhr: %s %+v", xref.phases, xref.end.Failed)
	}
	xab := find("xhr", "GET", "/api/never", 0)
	if xab.end.Failed == nil || !xab.end.Failed.Aborted {
		t.Errorf("aborted xhr: %s %+v", xab.phases, xab.end)
	}
	for _, f := range fetches {
		if f.responseSeen > 1 {
			t.Errorf("%s: %d response phases", f.request.Request.URL, f.responseSeen)
		}
	}
	t.Logf("page fetch GET /api/text, as sent:\n%s", strings.Join(text.raw, "\n"))
	t.Logf("page XHR POST /api/echo, as sent:\n%s", strings.Join(xpost.raw, "\n"))
}

func headerValue(hs []map[string]string, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h["name"], name) {
			return h["value"]
		}
	}
	return ""
}
