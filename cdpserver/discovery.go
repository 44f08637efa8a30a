package cdpserver

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Version is reported by /json/version.
const Version = "0.1.0"

// protocolVersion is the CDP version the frontend negotiates against (Chrome's).
const protocolVersion = "1.3"

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	s.mux = mux
	// Each discovery path also answers with a trailing slash, as Node's and
	// Chrome's do: Playwright asks for /json/version/.
	for path, h := range map[string]http.HandlerFunc{
		"/json/version": s.handleVersion, "/json": s.handleList,
		"/json/list": s.handleList, "/json/protocol": s.handleProtocol,
	} {
		mux.HandleFunc("GET "+path, h)
		mux.HandleFunc("GET "+path+"/{$}", h)
	}
	mux.HandleFunc("/json/new", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "inspector-worker serves exactly one page target and cannot open new ones", http.StatusForbidden)
	})
	mux.HandleFunc("GET /devtools/page/{id}", s.handleDevTools)
	mux.HandleFunc("GET /devtools/browser/{id}", s.handleBrowser)
	for pattern, h := range s.opts.Mount {
		mux.Handle(pattern, h)
	}
	mux.HandleFunc("/", s.handleNotFound)
	return s.checkHost(mux)
}

// handleNotFound answers a path nothing serves, and logs it when debugging
// (INSPECTOR_WORKER_DEBUG): a client that guesses a discovery path the
// worker lacks is then visible. The query is not logged (it may carry a
// token).
func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	s.logf("404 for %s %s: the worker serves /json, /json/list, /json/version, /json/protocol, /devtools/page/<id> and /devtools/browser/<id>",
		r.Method, r.URL.Path)
	http.NotFound(w, r)
}

// checkHost refuses requests whose Host header is a DNS name other than
// localhost, as Node's inspector does: a web page that rebinds its own name
// to 127.0.0.1 must not reach the endpoint.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reason := hostHeaderProblem(r.Host); reason != "" {
			s.logf("refused %s %s: %s", r.Method, r.URL.Path, reason)
			http.Error(w, reason, http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostHeaderProblem returns why a Host header is refused, or "".
func hostHeaderProblem(host string) string {
	if host == "" {
		return ""
	}
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") || net.ParseIP(h) != nil {
		return ""
	}
	return "Host header " + quoteShort(host) + " is refused: inspector-worker only answers requests addressed to " +
		"localhost or an IP address (protection against DNS rebinding); use http://127.0.0.1:PORT"
}

// originProblem returns why an Origin is refused on the DevTools route, or "".
// Allowed: no Origin (CLI tools, libraries), the DevTools frontend
// (devtools://, chrome-devtools://) and pages served from loopback (the
// frontend Chromium serves on its own debugging port). Any other web page
// could otherwise drive the host from the user's browser.
func originProblem(origin string) string {
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err == nil {
		switch u.Scheme {
		case "devtools", "chrome-devtools":
			return ""
		case "http", "https":
			h := u.Hostname()
			if strings.EqualFold(h, "localhost") {
				return ""
			}
			if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
				return ""
			}
		}
	}
	return "Origin " + quoteShort(origin) + " may not open a DevTools session: only the DevTools frontend, " +
		"pages on loopback and tools that send no Origin may"
}

func quoteShort(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return "\"" + s + "\""
}

type targetJSON struct {
	Description          string `json:"description"`
	DevtoolsFrontendURL  string `json:"devtoolsFrontendUrl"`
	FaviconURL           string `json:"faviconUrl"`
	ID                   string `json:"id"`
	Title                string `json:"title"`
	Type                 string `json:"type"`
	URL                  string `json:"url"`
	WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
}

// advertisedHost is the host:port that discovery answers put into their
// URLs: the request's own Host header, as Node does, so a client that reached
// the worker through a forwarded port (ssh -L 9441:127.0.0.1:9229) is sent
// back through it. checkHost has already refused names other than localhost
// and IP literals; without a Host header (HTTP/1.0) it is the listening
// address.
func (s *Server) advertisedHost(r *http.Request) string {
	if r.Host == "" {
		return s.addr
	}
	if _, _, err := net.SplitHostPort(r.Host); err != nil {
		return net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(r.Host, "["), "]"), "80")
	}
	return r.Host
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	hostport := s.advertisedHost(r)
	t := targetJSON{
		Description:          "inspector-worker: Node.js host " + s.hostInfo.Title,
		DevtoolsFrontendURL:  s.frontendURL(hostport),
		ID:                   s.targetID,
		Title:                s.hostInfo.Title,
		Type:                 "page",
		URL:                  s.hostInfo.URL,
		WebSocketDebuggerURL: s.pageWebSocketURL(hostport),
	}
	// The combined target first, as ever; then each page on its own
	// (pagetarget.go), as Chrome lists its tabs.
	list := []targetJSON{t}
	for _, p := range s.pageTargets() {
		list = append(list, s.pageTargetJSON(hostport, p))
	}
	writeJSON(w, list)
}

// handleVersion answers /json/version. webSocketDebuggerUrl is the browser
// endpoint (browser.go), at the request's Host as /json/list's URLs are:
// Puppeteer, Playwright, chromedp and chrome-devtools-mcp connect there, and
// VS Code's node attach takes it to reach the target (session-less
// commands there act on the combined target).
func (s *Server) handleVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]string{
		"Browser":              "inspector-worker/" + Version,
		"Protocol-Version":     protocolVersion,
		"User-Agent":           s.userAgent(),
		"V8-Version":           "",
		"webSocketDebuggerUrl": s.browser.webSocketURL(s.advertisedHost(r)),
	})
}

// userAgent is what /json/version and Browser.getVersion report.
func (s *Server) userAgent() string {
	return "inspector-worker/" + Version + " (" + s.hostInfo.NodeVersion + ")"
}

func writeJSON(w http.ResponseWriter, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Write(buf.Bytes())
}
