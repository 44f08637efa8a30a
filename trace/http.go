package trace

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"
)

const (
	// maxRequestBody bounds a start or stop body: a target, a cwd and up to
	// maxArgBytes of arguments, with room for JSON escaping.
	maxRequestBody = 4 * maxArgBytes
	// streamWriteTimeout bounds one stream message to a subscriber; a peer
	// that takes longer is gone for our purposes.
	streamWriteTimeout = 10 * time.Second
)

// Routes returns the trace API for cdpserver.Options.Mount. The patterns
// cover the prefix, so every /api/trace request (even a wrong one) gets a
// JSON answer from this package.
func Routes(e *Engine) map[string]http.Handler {
	h := Handler(e)
	return map[string]http.Handler{"/api/trace": h, "/api/trace/": h}
}

// known paths and their one method, for 404 vs 405.
var knownPaths = map[string]string{
	"/api/trace":          http.MethodGet,
	"/api/trace/status":   http.MethodGet,
	"/api/trace/start":    http.MethodPost,
	"/api/trace/stop":     http.MethodPost,
	"/api/trace/list":     http.MethodGet,
	"/api/trace/evidence": http.MethodGet,
	"/api/trace/stream":   http.MethodGet,
}

// Handler serves the trace API (docs/trace.md). It relies on the caller for
// the loopback listener and the Host-header check (cdpserver provides both)
// and adds its own Origin and Content-Type checks on the endpoints that
// start or stop processes.
func Handler(e *Engine) http.Handler {
	a := &api{e: e}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/trace", a.handleGet)
	mux.HandleFunc("GET /api/trace/status", a.handleStatus)
	mux.HandleFunc("POST /api/trace/start", a.handleStart)
	mux.HandleFunc("POST /api/trace/stop", a.handleStop)
	mux.HandleFunc("GET /api/trace/list", a.handleList)
	mux.HandleFunc("GET /api/trace/evidence", a.handleEvidence)
	mux.HandleFunc("GET /api/trace/stream", a.handleStream)
	mux.HandleFunc("/api/trace", a.handleOther)
	mux.HandleFunc("/api/trace/", a.handleOther)
	return recoverer(mux)
}

type api struct {
	e *Engine // Static after construction.
}

func (a *api) handleStatus(w http.ResponseWriter, r *http.Request) {
	if err := strictQuery(r.URL.Query()); err != nil {
		writeError(w, err, "")
		return
	}
	writeJSON(w, http.StatusOK, a.e.Status(r.Context()))
}

func (a *api) handleList(w http.ResponseWriter, r *http.Request) {
	if err := strictQuery(r.URL.Query()); err != nil {
		writeError(w, err, "")
		return
	}
	writeJSON(w, http.StatusOK, ListReport{SchemaVersion: SchemaVersion, Sessions: a.e.List()})
}

func (a *api) handleGet(w http.ResponseWriter, r *http.Request) {
	id, err := queryID(r.URL.Query(), true)
	if err == nil {
		var d SessionDetail
		if d, err = a.e.Get(id); err == nil {
			writeJSON(w, http.StatusOK, d)
			return
		}
	}
	writeError(w, err, "")
}

func (a *api) handleEvidence(w http.ResponseWriter, r *http.Request) {
	id, err := queryID(r.URL.Query(), true)
	if err == nil {
		var rep EvidenceReport
		if rep, err = a.e.Evidence(id); err == nil {
			writeJSON(w, http.StatusOK, rep)
			return
		}
	}
	writeError(w, err, "")
}

func (a *api) handleStart(w http.ResponseWriter, r *http.Request) {
	var req StartRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, err, "")
		return
	}
	s, err := a.e.Start(r.Context(), req)
	if err != nil {
		writeError(w, err, s.ID)
		return
	}
	writeJSON(w, http.StatusOK, SessionReport{SchemaVersion: SchemaVersion, Session: s})
}

func (a *api) handleStop(w http.ResponseWriter, r *http.Request) {
	var req StopRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, err, "")
		return
	}
	s, err := a.e.Stop(r.Context(), req.ID)
	if err != nil {
		writeError(w, err, "")
		return
	}
	writeJSON(w, http.StatusOK, SessionReport{SchemaVersion: SchemaVersion, Session: s})
}

// handleOther answers paths under the prefix that no route took: 405 for a
// known path with the wrong method, 404 otherwise.
func (a *api) handleOther(w http.ResponseWriter, r *http.Request) {
	if method, ok := knownPaths[r.URL.Path]; ok {
		w.Header().Set("Allow", method)
		writeErrorCode(w, http.StatusMethodNotAllowed, "method_not_allowed",
			fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, method), "")
		return
	}
	writeErrorCode(w, http.StatusNotFound, "not_found", "no trace endpoint at "+r.URL.Path+" (see docs/trace.md)", "")
}

// handleStream serves ws /api/trace/stream[?id=SESSION]: one StreamMessage
// per captured event, live (no replay of stored events: GET /api/trace has
// those). coder/websocket's Accept refuses cross-origin browser pages.
func (a *api) handleStream(w http.ResponseWriter, r *http.Request) {
	id, err := queryID(r.URL.Query(), false)
	if err == nil && id != "" {
		_, err = a.e.lookup(id)
	}
	if err != nil {
		writeError(w, err, "")
		return
	}
	sub, err := a.e.hub.subscribe(id)
	if err != nil {
		writeError(w, err, "")
		return
	}
	defer a.e.hub.unsubscribe(sub)
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return // Accept has answered the request
	}
	defer conn.CloseNow()
	ctx := conn.CloseRead(context.Background()) // the stream is one-way; a data message from the peer closes it
	for {
		select {
		case msg := <-sub.ch:
			wctx, cancel := context.WithTimeout(ctx, streamWriteTimeout)
			err := conn.Write(wctx, websocket.MessageText, msg)
			cancel()
			if err != nil {
				return
			}
		case <-sub.gone:
			if a.e.hub.wasSlow(sub) {
				_ = conn.Close(websocket.StatusPolicyViolation, fmt.Sprintf("too slow: more than %d events queued", subscriberQueue))
			} else {
				_ = conn.Close(websocket.StatusGoingAway, "the trace engine shut down")
			}
			return
		case <-ctx.Done():
			return
		}
	}
}

// strictQuery refuses any query parameter outside allowed.
func strictQuery(q url.Values, allowed ...string) error {
	for k, v := range q {
		if !contains(allowed, k) {
			return fmt.Errorf("%w: unknown query parameter %q", ErrBadRequest, k)
		}
		if len(v) != 1 {
			return fmt.Errorf("%w: query parameter %q given %d times", ErrBadRequest, k, len(v))
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func queryID(q url.Values, required bool) (string, error) {
	if err := strictQuery(q, "id"); err != nil {
		return "", err
	}
	id := q.Get("id")
	if required && id == "" {
		return "", fmt.Errorf("%w: give the session id as ?id=", ErrBadRequest)
	}
	return id, nil
}

// decodeBody decodes a JSON body strictly: JSON media type, a loopback or
// absent Origin, bounded size, no unknown or duplicate members, nothing
// after the value. The media type matters: a web page can POST text/plain
// to 127.0.0.1 without a CORS preflight, but not application/json.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	if problem := originProblem(r.Header.Get("Origin")); problem != "" {
		return fmt.Errorf("%w: %s", errForbiddenOrigin, problem)
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return fmt.Errorf("%w: Content-Type must be application/json", ErrBadRequest)
	}
	body := http.MaxBytesReader(w, r.Body, maxRequestBody)
	if err := json.UnmarshalRead(body, v, json.RejectUnknownMembers(true)); err != nil {
		return fmt.Errorf("%w: body: %v", ErrBadRequest, err)
	}
	return nil
}

// errForbiddenOrigin: a browser page that is not served from loopback tried
// to start or stop a process.
var errForbiddenOrigin = errors.New("trace: origin not allowed")

func originProblem(origin string) string {
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		h := u.Hostname()
		if strings.EqualFold(h, "localhost") {
			return ""
		}
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			return ""
		}
	}
	return "requests from the web page at " + origin + " are refused: only loopback pages and non-browser clients may start or stop traces"
}

// statusFor maps an engine error to its HTTP status and stable code.
func statusFor(err error) (int, string) {
	switch {
	case errors.Is(err, ErrOutsideWorkspace):
		return http.StatusBadRequest, "outside_workspace"
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest, "bad_request"
	case errors.Is(err, errForbiddenOrigin):
		return http.StatusForbidden, "forbidden_origin"
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound, "not_found"
	case errors.Is(err, ErrTooManySessions):
		return http.StatusTooManyRequests, "too_many_sessions"
	case errors.Is(err, ErrStart):
		return http.StatusBadGateway, "start_failed"
	case errors.Is(err, ErrNodeUnavailable):
		return http.StatusServiceUnavailable, "node_unavailable"
	case errors.Is(err, ErrWorkspace):
		return http.StatusServiceUnavailable, "workspace_unavailable"
	case errors.Is(err, ErrClosed):
		return http.StatusServiceUnavailable, "shutting_down"
	}
	return http.StatusInternalServerError, "internal"
}

func writeError(w http.ResponseWriter, err error, sessionID string) {
	status, code := statusFor(err)
	writeErrorCode(w, status, code, err.Error(), sessionID)
}

func writeErrorCode(w http.ResponseWriter, status int, code, msg, sessionID string) {
	msg, _ = capText(msg, stderrTailChars)
	writeJSON(w, status, ErrorReport{SchemaVersion: SchemaVersion,
		Error: ErrorBody{Code: code, Message: msg, SessionID: sessionID}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"schemaVersion":` + strconv.Itoa(SchemaVersion) + `,"error":{"code":"internal","message":"cannot encode the answer"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// recoverer answers a panic in one request with a 500 instead of letting it
// take the worker down.
func recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				writeErrorCode(w, http.StatusInternalServerError, "internal", fmt.Sprintf("internal error: %v", v), "")
			}
		}()
		next.ServeHTTP(w, r)
	})
}
