package cdpserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
)

// Refusal logging (INSPECTOR_WORKER_DEBUG=1, i.e. Options.Logf set): someone
// connecting a new client needs to see which of its methods the worker or
// Node refused, and why. Each method is logged once per window, with the code
// and the reason; never params (they can carry source text, expressions or
// the page token).

// maxLoggedMethods bounds the per-window set of methods already logged: a
// client that sends ever new method names must not grow the worker's memory.
// Past it, refusals are no longer logged for that window, and one line says so.
const maxLoggedMethods = 256

// refusalLog remembers which methods were logged for one window.
type refusalLog struct {
	mu     sync.Mutex          // Lock order: see docs/locks.md.
	logged map[string]struct{} // Guarded by mu; at most maxLoggedMethods entries.
	full   bool                // Guarded by mu.
}

// first reports whether method has not been logged yet, and records it.
func (l *refusalLog) first(method string) (first, nowFull bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.logged[method]; ok || l.full {
		return false, false
	}
	if len(l.logged) == maxLoggedMethods {
		l.full = true
		return false, true
	}
	if l.logged == nil {
		l.logged = map[string]struct{}{}
	}
	l.logged[method] = struct{}{}
	return true, false
}

// refuse answers req with e, and logs the refusal.
func (sess *Session) refuse(req request, e *wireError) {
	sess.logRefusal(req.Method, "inspector-worker", e.Code, e.Message)
	sess.enqueue(appendError(nil, req.ID, req.SessionID, e))
}

// logRefusal logs one refused method the first time a window gets it
// refused. by names who refused it: "inspector-worker" or "the Node host".
func (sess *Session) logRefusal(method, by string, code int, message string) {
	if !sess.srv.debug {
		return
	}
	if method == "" {
		method = "(no method: malformed request)"
	}
	first, full := sess.refusals.first(method)
	switch {
	case full:
		sess.srv.logf("DevTools connection %d: %d methods refused; not logging further refusals for this window",
			sess.id, maxLoggedMethods)
	case first:
		sess.srv.logf("DevTools connection %d: %s refused by %s: %d %s (logged once per window)",
			sess.id, quoteMethod(method), by, code, message)
	}
}

// logHostRefusal logs an error answer from Node to a relayed request. Only
// called when debugging: it parses the answer a second time.
func (sess *Session) logHostRefusal(method string, answer []byte) {
	if !sess.srv.debug || !mayBeError(answer) {
		return
	}
	var msg struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(answer, &msg) != nil || msg.Error == nil {
		return
	}
	sess.logRefusal(method, "the Node host", msg.Error.Code, msg.Error.Message)
}

// mayBeError reports whether a host answer may be an error answer. V8 writes
// {"id":N,"error":… or {"id":N,"result":…, so the member after the id
// decides without scanning the answer (a 5 MB result spent 12% of its relay
// CPU in a bytes.Contains here); other shapes fall back to the scan.
func mayBeError(answer []byte) bool {
	if rest, ok := bytes.CutPrefix(answer, []byte(`{"id":`)); ok {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i > 0 && i < len(rest) && rest[i] == ',' {
			return bytes.HasPrefix(rest[i+1:], []byte(`"error":`))
		}
	}
	return bytes.Contains(answer, []byte(`"error":`))
}

// quoteMethod quotes a method name for a log line: escaped, at most 100
// bytes, since it comes from the client.
func quoteMethod(m string) string {
	if len(m) > 100 {
		m = truncate(m, 100) + "…"
	}
	return strconv.Quote(m)
}
