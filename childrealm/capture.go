package childrealm

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// CaptureUpgrade is the Upgrade token of a child's capture channel: after
// the 101 the connection carries the observation protocol's lines, as the
// host's pipe does (docs/protocol.md). Not a WebSocket: Node 20 has no
// WebSocket client, and its http.request hands over an upgraded socket.
const CaptureUpgrade = "inspector-worker-lines"

// Lookup returns the followed child with that pid.
func (r *Registry) Lookup(pid int) (*Child, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.byPID[pid]
	return c, c != nil
}

// CaptureHandler serves GET /child/capture?pid=N for reg: a followed
// child's preload opens it, with "Authorization: Bearer <child token>" and
// "Upgrade: inspector-worker-lines", to send its fetch capture. serve runs
// the upgraded connection (it owns conn and returns when the channel
// ends). Answers before the upgrade: 401 bad token; 400 not an upgrade or
// no pid; 404 no followed child with that pid (refused past the limit, or
// already ended).
func CaptureHandler(reg *Registry, token sourceproto.Token, serve func(conn net.Conn, c *Child)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		if !ok || !token.Matches(sourceproto.Secret(got)) {
			http.Error(w, "bad child token", http.StatusUnauthorized)
			return
		}
		if !strings.EqualFold(req.Header.Get("Upgrade"), CaptureUpgrade) {
			http.Error(w, "the capture channel needs Upgrade: "+CaptureUpgrade, http.StatusBadRequest)
			return
		}
		pid, err := strconv.Atoi(req.URL.Query().Get("pid"))
		if err != nil || pid <= 0 {
			http.Error(w, "the capture channel needs ?pid=<the child's pid>", http.StatusBadRequest)
			return
		}
		c, ok := reg.Lookup(pid)
		if !ok {
			http.Error(w, "child pid "+strconv.Itoa(pid)+" is not followed", http.StatusNotFound)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			http.Error(w, "cannot take over the connection: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, err = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: " + CaptureUpgrade + "\r\nConnection: Upgrade\r\n\r\n")
		if err == nil {
			err = brw.Flush()
		}
		if err != nil {
			conn.Close()
			return
		}
		if brw.Reader.Buffered() > 0 { // the hello may have come with the request
			conn = &bufferedConn{Conn: conn, r: brw.Reader}
		}
		serve(conn, c)
	})
}

// bufferedConn reads what the HTTP server had buffered past the request
// before the connection itself.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }
