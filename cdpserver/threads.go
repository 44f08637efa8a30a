package cdpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/hostrealm"
	"github.com/inspector-worker/inspector-worker/internal/cdpwire"
)

// The host's worker threads as child targets of the window, the way
// Chromium presents a page's dedicated workers: Target.setAutoAttach with
// flatten enables Node's NodeWorker domain on the window's own Node
// session; each NodeWorker.attachedToWorker becomes a Target.attachedToTarget
// whose sessionId is Node's; a request carrying that sessionId is sent to the
// thread inside NodeWorker.sendMessageToWorker, and what the thread sends
// back (NodeWorker.receivedMessageFromWorker) goes to the window with the
// sessionId added. docs/agent-note.md "Worker threads" has the decisions.

// threadTargetType is the targetInfo.type of a thread: the type of a page's
// dedicated worker, which the stock frontend makes a JavaScript target
// (Runtime, Debugger, Profiler) under the page and lists in Sources and in
// the Console's context selector.
const threadTargetType = "worker"

// maxThreadPending bounds the requests one thread may have unanswered. The
// frontend sends a few dozen on attach and one per user action; a thread
// paused at a breakpoint answers only Debugger and Runtime requests of the
// pause. Past the bound a request is refused at once (-32000, naming the
// thread) rather than queued: the table stays bounded whatever the window
// sends, and the window learns why.
const maxThreadPending = 1024

// Ids of the NodeWorker.sendMessageToWorker requests the worker sends on a
// window's Node session. They must not meet the window's own ids (answered
// through Session.pending) nor --watch's replayed requests (from 1<<30 up,
// hostrealm.WatchState), and Node reads ids as 32-bit integers: the top
// quarter of that range, wrapping within it.
const (
	firstThreadRelayID = 3 << 29
	lastThreadRelayID  = math.MaxInt32
)

// threadTable is one window's worker threads.
type threadTable struct {
	mu      sync.Mutex               // Leaf: see docs/locks.md.
	byID    map[string]*threadTarget // Guarded by mu: by Node's NodeWorker sessionId.
	relays  map[int64]threadRelay    // Guarded by mu: relay id → the request it carries.
	nextID  int64                    // Guarded by mu: the next relay id.
	closed  bool                     // Guarded by mu: the Node session ended; nothing more is attached.
	closeBy string                   // Guarded by mu: why.
	endHold func()                   // Guarded by mu: ends the window's hold on new threads (threadHolder), nil if none.

	// What the window's threads carry to later threads and hosts
	// (threads_replay.go).
	autoAttach, wait bool               // Guarded by mu: the window's Target.setAutoAttach (flatten).
	bps              []threadBreakpoint // Guarded by mu: breakpoints by URL, in the order set.
}

// threadHolder is a Host whose watcher can keep new threads waiting for a
// window (hostnode.Host.HoldThreads). A Host without it releases every
// thread: waitForDebuggerOnStart then has no effect.
type threadHolder interface {
	HoldThreads() (end func())
}

// holdThreads makes the window's hold on new threads match want: taken
// once, ended once. The hold is taken before Node is asked to attach, so
// no thread that starts after the answer is released by the watcher first.
func (sess *Session) holdThreads(want bool) {
	tt := sess.threads
	tt.mu.Lock()
	has := tt.endHold != nil
	var end func()
	if !want && has {
		end, tt.endHold = tt.endHold, nil
	}
	tt.mu.Unlock()
	if end != nil {
		end() // writes the releases on the watcher's session: outside mu
		return
	}
	if !want || has {
		return
	}
	h, _ := sess.srv.currentHost()
	holder, ok := h.(threadHolder)
	if !ok {
		return
	}
	end = holder.HoldThreads()
	tt.mu.Lock()
	if tt.closed || tt.endHold != nil {
		tt.mu.Unlock()
		end()
		return
	}
	tt.endHold = end
	tt.mu.Unlock()
}

// threadTarget is one attached thread.
type threadTarget struct {
	targetID string
	pending  map[int64]string  // request id → method, sent and not yet answered
	bpParams map[int64][]byte  // request id → params of a pending Debugger.setBreakpointByUrl
	replayed map[string]string // params → id of a breakpoint threadReplayBreakpoints set here
}

func newThreadTarget(targetID string) *threadTarget {
	return &threadTarget{targetID: targetID, pending: map[int64]string{}, bpParams: map[int64][]byte{}, replayed: map[string]string{}}
}

// threadRelay is the window request one NodeWorker.sendMessageToWorker
// carries.
type threadRelay struct {
	session string
	id      int64
}

func newThreadTable() *threadTable {
	return &threadTable{byID: map[string]*threadTarget{}, relays: map[int64]threadRelay{}, nextID: firstThreadRelayID}
}

// isRelayID says whether a host answer's id is one of the table's relays.
func isRelayID(id int64) bool { return id >= firstThreadRelayID && id <= lastThreadRelayID }

// targetSetAutoAttach answers Target.setAutoAttach. With flatten the
// window's Node session enables NodeWorker (autoAttach false disables it);
// Node's answer, {}, is the window's. Without flatten there are no child
// sessions the worker can carry: the answer is {} and no thread is
// announced, as before threads were targets.
//
// With waitForDebuggerOnStart the window holds the host watcher's release
// of threads that start from now on (holdThreads): each waits until the
// window sends Runtime.runIfWaitingForDebugger in its session, or until
// the window lets go (closes, or asks again without the flag), when the
// watcher releases it (docs/agent-note.md "Worker threads").
func targetSetAutoAttach(sess *Session, req request) {
	var p struct {
		AutoAttach bool `json:"autoAttach"`
		Flatten    bool `json:"flatten"`
		Wait       bool `json:"waitForDebuggerOnStart"`
	}
	if req.Params != nil {
		if err := json.Unmarshal(req.Params, &p); err != nil {
			sess.refuse(req, &wireError{codeInvalidParams, "Target.setAutoAttach: " + err.Error()})
			return
		}
	}
	sess.noteAutoAttach(p.Flatten && p.AutoAttach, p.Wait)
	if !p.Flatten {
		sess.holdThreads(false)
		sess.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
		return
	}
	// Node's own waitForDebuggerOnStart stays false: with it Node pauses a
	// released thread on its first statement ("Break on start"), which a
	// page's worker never does. The thread waits anyway: it inherited the
	// host's --inspect-wait, and the watcher holds back its release.
	sess.holdThreads(p.AutoAttach && p.Wait)
	if p.AutoAttach {
		sess.watchChildren(p.Wait) // children.go
		sess.watchNative()         // native.go
	}
	method := `"NodeWorker.enable","params":{"waitForDebuggerOnStart":false}`
	if !p.AutoAttach {
		method = `"NodeWorker.disable"`
	}
	sess.relay(req, []byte(`{"id":`+string(req.ID)+`,"method":`+method+`}`))
}

// toThread sends a request carrying a sessionId to its thread. It is
// answered exactly once: by the thread, or here, or by threadGone/closeThreads.
func (sess *Session) toThread(req request) {
	id, err := strconv.ParseInt(string(req.ID), 10, 64)
	if err != nil {
		sess.refuse(req, &wireError{codeInvalidRequest, "Message must have integer 'id' property"})
		return
	}
	params, werr := threadParams(req)
	if werr != nil {
		sess.refuse(req, werr)
		return
	}
	inner, _ := json.Marshal(struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params,omitempty"`
	}{json.RawMessage(req.ID), req.Method, json.RawMessage(params)})
	tt := sess.threads
	tt.mu.Lock()
	th := tt.byID[req.SessionID]
	var refusal *wireError
	switch {
	case tt.closed:
		refusal = &wireError{codeServerError, "the Node host session is closed: " + tt.closeBy}
	case th == nil:
		refusal = &wireError{codeSessionUnknown, "Session with given id not found."}
	case len(th.pending) >= maxThreadPending:
		refusal = &wireError{codeServerError, fmt.Sprintf("thread %s has %d requests unanswered (is it paused or busy?); "+
			"this one was not sent", th.targetID, len(th.pending))}
	case th.pending[id] != "":
		refusal = &wireError{codeInvalidRequest, fmt.Sprintf("request id %d is already in flight; ids must be unique", id)}
	}
	if refusal != nil {
		tt.mu.Unlock()
		sess.refuse(req, refusal)
		return
	}
	if result, ok := threadLiteral(req.Method); ok {
		tt.mu.Unlock()
		sess.enqueue(threadResult(req, result))
		return
	}
	th.pending[id] = req.Method
	before := tt.threadBreakpointRequestLocked(req.SessionID, th, id, req.Method, params)
	relayID := tt.nextIDLocked()
	tt.relays[relayID] = threadRelay{req.SessionID, id}
	tt.mu.Unlock()
	msg := toWorkerEnvelope(relayID, req.SessionID, inner)
	sess.hostMu.Lock()
	conn := sess.host
	sess.hostMu.Unlock()
	if conn == nil {
		sess.threadRelayFailed(relayID, "the Node host is not running", sess.enqueue)
		return
	}
	if before != nil {
		if err := conn.Write(context.Background(), websocket.MessageText, before); err != nil {
			sess.closeHost() // as below
			return
		}
	}
	if err := conn.Write(context.Background(), websocket.MessageText, msg); err != nil {
		sess.closeHost() // hostLoop sees it too; closeThreads answers what is pending
	}
}

// threadParams is req's params as the thread gets them: a thread is a Node
// realm like the host, so the host's column of the method table applies —
// its param rewrite (a file:// breakpoint url also matches the bare path
// Node names a CommonJS script by, as in the host's session) and the
// object table's rule that a page's objectId never reaches Node.
func threadParams(req request) ([]byte, *wireError) {
	if req.Params == nil {
		return nil, nil
	}
	if bytes.Contains(req.Params, clientObjectRef) {
		return nil, &wireError{codeServerError, fmt.Sprintf("%s names an object of a client page; page objects "+
			"cannot be passed to a worker thread (evaluate in the page's context instead)", req.Method)}
	}
	if e, ok := lookupMethod(req.Method); ok && e.kind == answerRouted && e.hostParams != nil {
		return e.hostParams(req.Params), nil
	}
	return req.Params, nil
}

// threadRelayFailed answers the request relayID carries with an error, if
// it is still unanswered, through emit (enqueueFromHost on hostLoop,
// enqueue elsewhere).
func (sess *Session) threadRelayFailed(relayID int64, why string, emit func([]byte)) {
	tt := sess.threads
	tt.mu.Lock()
	r, ok := tt.relays[relayID]
	delete(tt.relays, relayID)
	var method string
	if th := tt.byID[r.session]; ok && th != nil {
		method = th.pending[r.id]
		delete(th.pending, r.id)
	}
	tt.mu.Unlock()
	if method != "" {
		emit(threadError(r.session, r.id, method, why))
	}
}

// threadResult renders the answer to a request in a thread's session.
func threadResult(req request, result string) []byte {
	b := appendResult(nil, req.ID, []byte(result))
	b = append(b[:len(b)-1], `,"sessionId":`...)
	b, _ = jsontext.AppendQuote(b, req.SessionID)
	return append(b, '}')
}

func threadError(sessionID string, id int64, method, why string) []byte {
	return appendError(nil, []byte(strconv.FormatInt(id, 10)), sessionID,
		&wireError{codeServerError, fmt.Sprintf("'%s' was not answered: %s", method, why)})
}

// relayAnswered takes Node's answer to a NodeWorker.sendMessageToWorker
// and reports whether relayID was one: an error (the thread's session is
// gone) answers the request it carried; success says nothing, the thread
// answers. Runs on hostLoop.
func (sess *Session) relayAnswered(relayID int64, answer []byte) bool {
	tt := sess.threads
	tt.mu.Lock()
	_, ok := tt.relays[relayID]
	tt.mu.Unlock()
	if !ok {
		return false
	}
	s, e, isError := cdpwire.FindMember(answer, "error")
	if !isError {
		tt.mu.Lock()
		delete(tt.relays, relayID)
		tt.mu.Unlock()
		return true
	}
	sess.threadRelayFailed(relayID, "Node refused to pass it to the thread: "+string(answer[s:e]), sess.enqueueFromHost)
	return true
}

// threadEvent handles one NodeWorker event of the window's Node session.
func (sess *Session) threadEvent(method string, msg []byte) {
	if method == "NodeWorker.receivedMessageFromWorker" {
		if sessionID, inner, ok := workerMessage(msg); ok {
			sess.fromThread(sessionID, inner)
			return
		}
	}
	var ev struct {
		Params struct {
			SessionID  string `json:"sessionId"`
			Message    string `json:"message"`
			WorkerInfo struct {
				WorkerID string `json:"workerId"`
				Title    string `json:"title"`
				URL      string `json:"url"`
			} `json:"workerInfo"`
			WaitingForDebugger bool `json:"waitingForDebugger"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg, &ev); err != nil {
		sess.srv.logf("DevTools connection %d: dropped an unreadable %s: %v", sess.id, method, err)
		return
	}
	p := ev.Params
	switch method {
	case "NodeWorker.attachedToWorker":
		sess.threadAttached(p.SessionID, p.WorkerInfo.WorkerID, p.WorkerInfo.Title, p.WorkerInfo.URL, p.WaitingForDebugger)
	case "NodeWorker.detachedFromWorker":
		sess.threadGone(p.SessionID, "the thread exited")
	case "NodeWorker.receivedMessageFromWorker":
		sess.fromThread(p.SessionID, []byte(p.Message))
	}
}

func (sess *Session) threadAttached(sessionID, workerID, title, url string, waiting bool) {
	// Node's workerId numbers the threads in the order they were attached
	// to this Node session (so per window), not by threadId, which only
	// the thread itself can be asked for.
	if url != "" {
		title = fmt.Sprintf("%s (worker %s)", path.Base(url), workerID)
	}
	targetID := "node-worker-" + workerID
	tt := sess.threads
	tt.mu.Lock()
	if tt.closed {
		tt.mu.Unlock()
		return
	}
	tt.byID[sessionID] = newThreadTarget(targetID)
	// Node says false (the window's NodeWorker.enable asks no wait of
	// Node): a thread that starts while the window holds waits for it.
	// Threads already running when the window asked are said to wait too;
	// their runIfWaitingForDebugger does nothing.
	waiting = waiting || tt.endHold != nil
	tt.mu.Unlock()
	// Written to Node before the window hears of the thread, so that the
	// replay precedes any request of the window there; what Node sends
	// back is read by this goroutine, after the event below is queued.
	sess.threadReplayBreakpoints(sessionID)
	ev, _ := json.Marshal(map[string]any{"method": "Target.attachedToTarget", "params": map[string]any{
		"sessionId": sessionID,
		"targetInfo": map[string]any{"targetId": targetID, "type": threadTargetType, "title": title, "url": url,
			"attached": true, "canAccessOpener": false},
		"waitingForDebugger": waiting,
	}})
	sess.enqueueFromHost(hostrealm.RewriteFileURLs(ev))
}

// threadGone answers what the thread left unanswered, then detaches it.
// Runs on hostLoop.
func (sess *Session) threadGone(sessionID, why string) {
	tt := sess.threads
	tt.mu.Lock()
	th := tt.byID[sessionID]
	delete(tt.byID, sessionID)
	tt.mu.Unlock()
	if th != nil {
		sess.detachThread(sessionID, th, why, sess.enqueueFromHost)
	}
}

// detachThread answers th's unanswered requests with why, then tells the
// window it is detached, through emit.
func (sess *Session) detachThread(sessionID string, th *threadTarget, why string, emit func([]byte)) {
	for _, id := range sortedIDs(th.pending) {
		emit(threadError(sessionID, id, th.pending[id], why))
	}
	ev, _ := json.Marshal(map[string]any{"method": "Target.detachedFromTarget",
		"params": map[string]any{"sessionId": sessionID, "targetId": th.targetID}})
	emit(ev)
}

// closeThreads detaches every thread when the window's Node session ends
// (the host exited, or --watch swaps it): their requests are answered with
// why. With reopen false (the window is closing) nothing is attached again
// and requests in a thread's session are refused with why.
func (sess *Session) closeThreads(why string, reopen bool) {
	tt := sess.threads
	tt.mu.Lock()
	gone := tt.byID
	tt.byID = map[string]*threadTarget{}
	tt.relays = map[int64]threadRelay{}
	tt.closed, tt.closeBy = !reopen, why
	end := tt.endHold
	tt.endHold = nil
	tt.mu.Unlock()
	if end != nil {
		end() // the threads of a host this window no longer sees are not its to hold
	}
	ids := make([]string, 0, len(gone))
	for id := range gone {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		sess.detachThread(id, gone[id], why, sess.enqueue)
	}
}

// toWorkerEnvelope is the NodeWorker.sendMessageToWorker request (id
// relayID) that carries inner to the thread of sessionID: every message to
// a thread, the window's and the worker's own, is built here, so each is
// escaped to ASCII (asciiJSON) once.
func toWorkerEnvelope(relayID int64, sessionID string, inner []byte) []byte {
	wrapper, _ := json.Marshal(struct {
		SessionID string `json:"sessionId"`
		Message   string `json:"message"`
	}{sessionID, string(asciiJSON(inner))})
	return []byte(`{"id":` + strconv.FormatInt(relayID, 10) + `,"method":"NodeWorker.sendMessageToWorker","params":` + string(wrapper) + `}`)
}

// asciiJSON returns the JSON text b with every character beyond ASCII
// written as a \u escape (invalid UTF-8 as U+FFFD). Node 20's
// NodeWorker.sendMessageToWorker answers a message with raw UTF-8 in it
// with "Message must be a valid JSON" and no id, so the request it carried
// was never answered (TestThreadNonASCIIRequest). Outside its strings JSON
// text is ASCII, so escaping wherever a byte is not is safe.
func asciiJSON(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] < utf8.RuneSelf {
		i++
	}
	if i == len(b) {
		return b
	}
	out := append(make([]byte, 0, len(b)+32), b[:i]...)
	for _, r := range string(b[i:]) { // an invalid byte ranges as U+FFFD
		switch {
		case r < utf8.RuneSelf:
			out = append(out, byte(r))
		case r <= 0xffff:
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		}
	}
	return out
}

// workerMessage decodes a NodeWorker.receivedMessageFromWorker of the
// shape Node writes (TestWorkerMessageNodeShape): the thread's sessionId,
// and its message unquoted into a buffer of its own with room for the
// sessionId fromThread appends. One pass over the bytes, where
// encoding/json validated them, unquoted the message into a string and
// copied it back: 28% of the process's CPU while threads flooded the
// console (BenchmarkThreadsConsole); ~1.3 µs against ~10 µs per console
// event on a shared machine (BenchmarkWorkerMessage). ok is false for
// any other shape (members reordered, whitespace, a sessionId not plain
// ASCII, invalid UTF-8): threadEvent then decodes it with encoding/json.
func workerMessage(msg []byte) (sessionID string, inner []byte, ok bool) {
	rest, ok := bytes.CutPrefix(msg, []byte(`{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"`))
	if !ok {
		return "", nil, false
	}
	end := bytes.IndexByte(rest, '"')
	if end <= 0 {
		return "", nil, false
	}
	id := rest[:end]
	for _, c := range id {
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return "", nil, false // not what Node writes (a number)
		}
	}
	raw, ok := bytes.CutPrefix(rest[end:], []byte(`","message":`))
	if !ok {
		return "", nil, false
	}
	if raw, ok = bytes.CutSuffix(raw, []byte(`}}`)); !ok {
		return "", nil, false
	}
	// AppendUnquote refuses anything but one string literal: an unescaped
	// quote inside would leave trailing bytes.
	inner, err := jsontext.AppendUnquote(make([]byte, 0, len(raw)+len(id)+16), raw)
	if err != nil {
		return "", nil, false
	}
	return string(id), inner, true
}

// fromThread relays one message of a thread to the window, in its session.
// msg is the caller's to give: the sessionId is appended to it in place.
func (sess *Session) fromThread(sessionID string, msg []byte) {
	msg = bytes.TrimSpace(msg)
	if len(msg) < 2 || msg[0] != '{' {
		return
	}
	hm, err := parseHostMessage(msg)
	if err != nil {
		sess.srv.logf("DevTools connection %d: dropped an unparseable thread message: %v", sess.id, err)
		return
	}
	tt := sess.threads
	tt.mu.Lock()
	th := tt.byID[sessionID]
	answered := false
	if th != nil && hm.IsResponse {
		_, answered = th.pending[hm.ID]
		delete(th.pending, hm.ID)
		if answered {
			tt.threadAnsweredLocked(th, hm.ID, msg)
		}
	}
	tt.mu.Unlock()
	if th == nil || (hm.IsResponse && !answered) {
		return // a detached thread's, or an answer already given (threadGone)
	}
	if hm.Method == "Debugger.scriptParsed" && sess.srv.hidden(msg) {
		return // the run preload runs in every thread too (Options.HideScripts)
	}
	empty := len(msg) == 2
	out := msg[:len(msg)-1]
	if !empty {
		out = append(out, ',')
	}
	out, _ = jsontext.AppendQuote(append(out, `"sessionId":`...), sessionID)
	sess.enqueueFromHost(hostrealm.RewriteFileURLs(append(out, '}')))
}

func sortedIDs(m map[int64]string) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// detachThreadsInNode asks Node to detach each of the window's threads
// (NodeWorker.detach) before the window's Node session is closed. Closing
// the session alone left a thread the window had paused at a breakpoint
// paused for good (Node 20: TestThreadWaitsForWindow, 60 s and more);
// detaching its session resumes it, as closing the window resumes the main
// thread. Runs on readLoop, the host connection's only writer; the answers
// are dropped (relayAnswered).
func (sess *Session) detachThreadsInNode() {
	tt := sess.threads
	tt.mu.Lock()
	var msgs [][]byte
	for id := range tt.byID {
		relayID := tt.nextInternalLocked()
		params, _ := json.Marshal(map[string]string{"sessionId": id})
		msgs = append(msgs, []byte(`{"id":`+strconv.FormatInt(relayID, 10)+`,"method":"NodeWorker.detach","params":`+string(params)+`}`))
	}
	tt.mu.Unlock()
	if len(msgs) == 0 {
		return
	}
	conn := sess.hostConn()
	if conn == nil {
		return
	}
	for _, m := range msgs {
		if conn.Write(context.Background(), websocket.MessageText, m) != nil {
			return
		}
	}
}
