package trace

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"

	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// apiServer serves the engine's routes the way cdpserver mounts them.
func apiServer(t *testing.T, e *Engine) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	for pattern, h := range Routes(e) {
		mux.Handle(pattern, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

type httpResult struct {
	status int
	body   []byte
}

func call(t *testing.T, srv *httptest.Server, method, path, contentType, body string, header ...string) httpResult {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return httpResult{resp.StatusCode, data}
}

func decode[T any](t *testing.T, r httpResult) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v, json.RejectUnknownMembers(true)); err != nil {
		t.Fatalf("decode %T from %s: %v", v, r.body, err)
	}
	return v
}

const jsonType = "application/json"

func TestHTTPFlow(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"app.js": logThenThrowJS})
	e := newEngine(t, Options{Workspace: ws})
	srv := apiServer(t, e)

	st := decode[Status](t, call(t, srv, "GET", "/api/trace/status", "", ""))
	if st.SchemaVersion != SchemaVersion || st.Workspace != ws || st.Capabilities.Replay != "timeline" || !st.Capabilities.Available {
		t.Errorf("status = %+v", st)
	}
	r := call(t, srv, "POST", "/api/trace/start", "application/json; charset=utf-8", `{"target":"app.js","args":["x"]}`)
	if r.status != http.StatusOK {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	started := decode[SessionReport](t, r).Session
	if started.Status != StatusRunning && started.Status != StatusExited {
		t.Errorf("started = %+v", started)
	}
	if _, err := e.Wait(ctx, started.ID); err != nil {
		t.Fatal(err)
	}
	d := decode[SessionDetail](t, call(t, srv, "GET", "/api/trace?id="+started.ID, "", ""))
	if d.Session.ID != started.ID || d.Session.Status != StatusExited || len(d.Events) == 0 || d.Session.Args[0] != "x" {
		t.Errorf("detail = %+v", d.Session)
	}
	rep := decode[EvidenceReport](t, call(t, srv, "GET", "/api/trace/evidence?id="+started.ID, "", ""))
	if rep.Evidence == nil || rep.Evidence.Confidence != ConfidenceHigh || rep.Caveat == "" || rep.SessionID != started.ID {
		t.Errorf("evidence = %+v", rep)
	}
	list := decode[ListReport](t, call(t, srv, "GET", "/api/trace/list", "", ""))
	if len(list.Sessions) != 1 || list.Sessions[0].ID != started.ID {
		t.Errorf("list = %+v", list)
	}
	proctest.AssertGone(t, started.PID)
}

// TestHTTPClientMistakes: every client mistake is a 4xx with a JSON body,
// never a 500, and never starts a process.
func TestHTTPClientMistakes(t *testing.T) {
	outside := workspace(t, map[string]string{"evil.js": `0;`})
	ws := workspace(t, map[string]string{"app.js": `0;`})
	must(t, os.Symlink(filepath.Join(outside, "evil.js"), filepath.Join(ws, "link.js")))
	e := newEngine(t, Options{Workspace: ws})
	srv := apiServer(t, e)
	big := `{"target":"app.js","args":["` + strings.Repeat("a", maxRequestBody) + `"]}`
	for _, tc := range []struct {
		method, path, ctype, body string
		header                    []string
		status                    int
		code                      string
	}{
		{"GET", "/api/trace?id=tr-nope", "", "", nil, 404, "not_found"},
		{"GET", "/api/trace/evidence?id=tr-nope", "", "", nil, 404, "not_found"},
		{"POST", "/api/trace/stop", jsonType, `{"id":"tr-nope"}`, nil, 404, "not_found"},
		{"GET", "/api/trace/stream?id=tr-nope", "", "", nil, 404, "not_found"},
		{"GET", "/api/trace", "", "", nil, 400, "bad_request"},
		{"GET", "/api/trace?id=a&id=b", "", "", nil, 400, "bad_request"},
		{"GET", "/api/trace/evidence?id=a&x=1", "", "", nil, 400, "bad_request"},
		{"GET", "/api/trace/status?verbose=1", "", "", nil, 400, "bad_request"},
		{"POST", "/api/trace/start", jsonType, `{"target":"app.js","extra":1}`, nil, 400, "bad_request"},
		{"POST", "/api/trace/start", jsonType, `{"target":"app.js","target":"app.js"}`, nil, 400, "bad_request"},
		{"POST", "/api/trace/start", jsonType, `{"target":"app.js"} {}`, nil, 400, "bad_request"},
		{"POST", "/api/trace/start", jsonType, `{"target":`, nil, 400, "bad_request"},
		{"POST", "/api/trace/start", jsonType, ``, nil, 400, "bad_request"},
		{"POST", "/api/trace/start", jsonType, `{"target":1}`, nil, 400, "bad_request"},
		{"POST", "/api/trace/start", jsonType, `{}`, nil, 400, "bad_request"},
		{"POST", "/api/trace/start", jsonType, big, nil, 400, "bad_request"},
		{"POST", "/api/trace/start", "text/plain", `{"target":"app.js"}`, nil, 400, "bad_request"},
		{"POST", "/api/trace/start", "", `{"target":"app.js"}`, nil, 400, "bad_request"},
		{"POST", "/api/trace/start", jsonType, `{"target":"missing.js"}`, nil, 400, "bad_request"},
		{"POST", "/api/trace/start", jsonType, `{"target":"../` + filepath.Base(outside) + `/evil.js"}`, nil, 400, "outside_workspace"},
		{"POST", "/api/trace/start", jsonType, `{"target":"` + filepath.Join(outside, "evil.js") + `"}`, nil, 400, "outside_workspace"},
		{"POST", "/api/trace/start", jsonType, `{"target":"link.js"}`, nil, 400, "outside_workspace"},
		{"POST", "/api/trace/start", jsonType, `{"target":"app.js","cwd":"/"}`, nil, 400, "outside_workspace"},
		{"POST", "/api/trace/start", jsonType, `{"target":"app.js"}`, []string{"Origin", "https://evil.example"}, 403, "forbidden_origin"},
		{"POST", "/api/trace/stop", jsonType, `{}`, nil, 400, "bad_request"},
		{"POST", "/api/trace/stop", jsonType, `{"id":"x","why":1}`, nil, 400, "bad_request"},
		{"GET", "/api/trace/start", "", "", nil, 405, "method_not_allowed"},
		{"POST", "/api/trace/status", jsonType, `{}`, nil, 405, "method_not_allowed"},
		{"DELETE", "/api/trace", "", "", nil, 405, "method_not_allowed"},
		{"GET", "/api/trace/nope", "", "", nil, 404, "not_found"},
	} {
		r := call(t, srv, tc.method, tc.path, tc.ctype, tc.body, tc.header...)
		var got ErrorReport
		err := json.Unmarshal(r.body, &got, json.RejectUnknownMembers(true))
		if r.status != tc.status || err != nil || got.Error.Code != tc.code || got.Error.Message == "" {
			t.Errorf("%s %s %.60s: %d %.200s; want %d %s", tc.method, tc.path, tc.body, r.status, r.body, tc.status, tc.code)
		}
	}
	if n := len(e.List()); n != 0 {
		t.Errorf("%d sessions started by refused requests", n)
	}
}

func TestHTTPStop(t *testing.T) {
	ws := workspace(t, map[string]string{"wait.js": `setInterval(() => {}, 1000);`})
	e := newEngine(t, Options{Workspace: ws})
	srv := apiServer(t, e)
	r := call(t, srv, "POST", "/api/trace/start", jsonType, `{"target":"wait.js"}`)
	s := decode[SessionReport](t, r).Session
	r = call(t, srv, "POST", "/api/trace/stop", jsonType, `{"id":"`+s.ID+`"}`)
	stopped := decode[SessionReport](t, r).Session
	if r.status != 200 || stopped.Status != StatusStopped {
		t.Errorf("stop: %d %+v", r.status, stopped)
	}
	proctest.AssertGone(t, s.PID)
}

// TestHTTPStream: a subscriber sees {sessionId, event} for every event in
// Seq order, ending with the exit; the engine's shutdown closes it.
func TestHTTPStream(t *testing.T) {
	ctx := testCtx(t)
	ws := workspace(t, map[string]string{"app.js": logThenThrowJS})
	e := newEngine(t, Options{Workspace: ws})
	srv := apiServer(t, e)
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + "/api/trace/stream"

	if _, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": {"https://evil.example"}}}); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin stream: %v", err)
	}
	conn, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	s := decode[SessionReport](t, call(t, srv, "POST", "/api/trace/start", jsonType, `{"target":"app.js"}`)).Session
	var seqs []int64
	var kinds []string
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("stream read: %v (got %v)", err, kinds)
		}
		var m StreamMessage
		if err := json.Unmarshal(data, &m, json.RejectUnknownMembers(true)); err != nil {
			t.Fatalf("stream message %s: %v", data, err)
		}
		if m.SessionID != s.ID {
			t.Fatalf("message for %q", m.SessionID)
		}
		seqs, kinds = append(seqs, m.Event.Seq), append(kinds, m.Event.Kind)
		if m.Event.Kind == KindExit {
			break
		}
	}
	for i, seq := range seqs {
		if seq != int64(i+1) {
			t.Fatalf("stream seqs = %v, want 1..n", seqs)
		}
	}
	if !strings.Contains(strings.Join(kinds, ","), "exception") {
		t.Errorf("stream kinds = %v", kinds)
	}
	closed := make(chan error, 1)
	go func() { // a live subscriber keeps reading, so it answers the close frame
		_, _, err := conn.Read(ctx)
		closed <- err
	}()
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("after shutdown: %v, want going away", err)
	}
	r := call(t, srv, "GET", "/api/trace/stream", "", "")
	if r.status != http.StatusServiceUnavailable {
		t.Errorf("stream after shutdown: %d %s", r.status, r.body)
	}
}

// TestHTTPPanicIsRecovered: one bad request never takes the worker down.
func TestHTTPPanicIsRecovered(t *testing.T) {
	h := recoverer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/trace/status", nil))
	if rec.Code != 500 || !bytes.Contains(rec.Body.Bytes(), []byte(`"internal"`)) {
		t.Errorf("panic answer: %d %s", rec.Code, rec.Body)
	}
}

func TestStatusFor(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{ErrBadRequest, 400}, {ErrOutsideWorkspace, 400}, {ErrNotFound, 404}, {ErrTooManySessions, 429},
		{ErrStart, 502}, {ErrNodeUnavailable, 503}, {ErrWorkspace, 503}, {ErrClosed, 503},
		{errors.New("other"), 500}, {context.Canceled, 500},
	} {
		if got, _ := statusFor(tc.err); got != tc.want {
			t.Errorf("statusFor(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func FuzzDecodeStartRequest(f *testing.F) {
	for _, seed := range []string{`{"target":"app.js"}`, `{"target":"a","args":["x"],"cwd":"sub"}`, `{"target":"a","x":1}`, `{`, `null`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest("POST", "/api/trace/start", strings.NewReader(body))
		req.Header.Set("Content-Type", jsonType)
		var sr StartRequest
		if err := decodeBody(httptest.NewRecorder(), req, &sr); err != nil && !errors.Is(err, ErrBadRequest) {
			t.Fatalf("decodeBody error %v is not ErrBadRequest", err)
		}
	})
}
