package pagerealm

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/realm"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Client script sources are read from the page on demand (script.read →
// script.meta, script.chunk…, script.end) when a window asks
// Debugger.getScriptSource for a "c<n>" script id.

// maxClientScriptBytes bounds one client script source held while it is
// reassembled: the protocol's own bound.
const maxClientScriptBytes = sourceproto.MaxScriptBytes

// scriptReadTimeout answers a read the page never finishes with an error.
const scriptReadTimeout = 30 * time.Second

type scriptRead struct {
	ref   sourceproto.SourceRef
	sess  *Window
	reqID jsontext.Value
	buf   []byte
	timer *time.Timer
	field string // the answer's member: "" = the script handler's, "content" (Page.getResourceContent)
	// script answers a Debugger request from the source (the method
	// table's handler); params are the request's.
	script *Script
	params []byte
}

// Script is a page realm's handler for a Debugger method that reads a
// client script (the method table's AnswerScriptRead entries): the answer
// to the request, from its params and the script's source as the page sent
// it.
type Script struct {
	answer func(params, source []byte) ([]byte, error)
}

// GetScriptSource answers Debugger.getScriptSource.
var GetScriptSource = &Script{answer: func(_, source []byte) ([]byte, error) {
	return cdpproject.ScriptSource(source), nil
}}

// scriptReads are the reads in flight, by read id. Guarded by Hub.mu.
type scriptReads map[uint64]*scriptRead

// ScriptRequest answers the Debugger methods that address a client
// script ("c<n>" ids or a client script's URL). It reports whether it did.
//
// It decides under hub.mu and acts after releasing it: sending a
// script.read can end the page's connection on this goroutine, and the
// SourceClosed that follows takes hub.mu (docs/locks.md).
//
// Only requests the hub can answer take hub.mu: those whose method has a
// pages' column (rule) and that name a script id or URL, and those naming
// a "c<n>" script id. Any other Debugger request (resume, stepOver, pause,
// evaluateOnCallFrame, removeBreakpoint … — call frames and breakpoints
// are V8's, pages never pause) goes to the host without taking hub.mu, so
// a page flooding the hub cannot hold up a paused host's stepping.
func (h *Hub) ScriptRequest(s *Window, req Request, rule Rule) bool {
	p := scanScriptParams(req.Params)
	pageAnswers := rule.Answer != AnswerAbsent && rule.Answer != AnswerHost
	if !strings.HasPrefix(p.scriptID, "c") && (!pageAnswers || p.scriptID == "" && p.url == "") {
		return false
	}
	h.mu.Lock()
	act := h.scriptRequestLocked(s, req, p, rule)
	h.mu.Unlock()
	switch {
	case act.read != nil:
		h.sendRead(act.read)
	case act.refusal != nil:
		s.refuse(req, act.refusal)
		if act.tell {
			// An error makes the gutter marker vanish without a word, so
			// the reason also goes to the Console.
			s.enqueue(logEntry("warning", "[inspector-worker] "+act.refusal.Message, time.Now()))
		}
	case act.answer != nil:
		s.enqueue(act.answer)
	}
	return act.handled
}

// scriptAction is what ScriptRequest does once hub.mu is released:
// at most one of read, refusal and answer is set.
type scriptAction struct {
	handled bool
	read    *readStart // a script.read to send
	refusal *wireError // the request's error answer
	tell    bool       // the refusal also goes to the Console
	answer  []byte     // the request's answer, queued as is
}

// readStart is a script read registered under hub.mu whose script.read is
// still to be sent.
type readStart struct {
	reg *sourceproto.Registry
	id  uint64
	ref sourceproto.SourceRef
	url string
}

// scriptRequestLocked acts on the method's pages' column (rule) when the
// request names a client script.
func (h *Hub) scriptRequestLocked(s *Window, req request, p scriptParams, rule Rule) scriptAction {
	sc := h.scripts[p.scriptID]
	if sc == nil && strings.HasPrefix(p.scriptID, "c") {
		return scriptAction{handled: true, answer: appendError(nil, req.ID, "", &wireError{codeServerError, "No script for id: " + p.scriptID})}
	}
	switch rule.Answer {
	case AnswerScriptRead:
		if sc == nil {
			return scriptAction{}
		}
		if h.reg == nil {
			return scriptAction{handled: true, refusal: &wireError{codeServerError, "client script reads are not connected in this worker"}}
		}
		return scriptAction{handled: true, read: h.startReadLocked(s, req, sc, rule.Script)}
	case AnswerLiteral:
		if sc == nil {
			return scriptAction{}
		}
		return scriptAction{handled: true, answer: appendResult(nil, req.ID, []byte(rule.Result))}
	case AnswerRefusal:
		if sc == nil {
			sc = h.clientScriptByURLLocked(p.url)
		}
		if sc == nil {
			return scriptAction{}
		}
		// The refusal is the client realm's own, in its words.
		why := (&realm.UnsupportedError{Realm: sc.ctx.realm.ID, Method: req.Method, Reason: rule.Reason}).Error()
		return scriptAction{handled: true, tell: rule.Tell, refusal: &wireError{codeServerError, why + "; set breakpoints in host (Node) scripts"}}
	}
	return scriptAction{}
}

type scriptParams struct {
	scriptID string
	url      string
}

func scanScriptParams(params []byte) scriptParams {
	var p struct {
		ScriptID string `json:"scriptId"`
		URL      string `json:"url"`
		Location struct {
			ScriptID string `json:"scriptId"`
		} `json:"location"`
		Start struct {
			ScriptID string `json:"scriptId"`
		} `json:"start"`
	}
	if len(params) > 0 {
		_ = json.Unmarshal(params, &p)
	}
	out := scriptParams{scriptID: p.ScriptID, url: p.URL}
	for _, id := range []string{p.Location.ScriptID, p.Start.ScriptID} {
		if out.scriptID == "" {
			out.scriptID = id
		}
	}
	return out
}

// startReadLocked registers a read before its script.read is sent, so an
// answer (or the page's close) that comes back at once finds it; the
// timeout answers a read the page never finishes.
func (h *Hub) startReadLocked(s *Window, req request, sc *clientScript, script *Script) *readStart {
	h.nextRead++
	id := h.nextRead
	r := &scriptRead{ref: sc.ctx.ref, sess: s, reqID: req.ID, script: script, params: req.Params}
	r.timer = time.AfterFunc(scriptReadTimeout, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.reads.finish(id, nil, fmt.Sprintf("the page did not send %s within %v", sc.url, scriptReadTimeout))
	})
	h.reads[id] = r
	return &readStart{reg: h.reg, id: id, ref: sc.ctx.ref, url: sc.url}
}

// sendRead sends a registered read's script.read; it runs without hub.mu.
// When the page's outbox is full its carrier ends the connection right
// here, and SourceClosed answers the read, before Send returns or (when
// the page's read loop is delivering its calls) soon after: whichever of
// it and finish comes first answers, the other is a no-op, so the request
// gets exactly one answer either way.
func (h *Hub) sendRead(rs *readStart) {
	err := rs.reg.Send(rs.ref, &sourceproto.ScriptRead{ID: rs.id, URL: rs.url, Content: true})
	if err == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reads.finish(rs.id, nil, "cannot ask the page for "+rs.url+": "+err.Error())
}

// response consumes script.meta/chunk/end answers.
func (rs scriptReads) response(ref sourceproto.SourceRef, b sourceproto.Body) {
	switch m := b.(type) {
	case *sourceproto.ScriptChunk:
		r := rs[m.ID]
		if r == nil || r.ref != ref {
			return
		}
		if int64(len(r.buf)) != m.Offset || len(r.buf)+len(m.Data) > maxClientScriptBytes {
			rs.finish(m.ID, nil, "the page sent the script out of order or over the size bound")
			return
		}
		r.buf = append(r.buf, m.Data...)
	case *sourceproto.ScriptEnd:
		r := rs[m.ID]
		if r == nil || r.ref != ref {
			return
		}
		if m.Error != nil {
			rs.finish(m.ID, nil, "the page could not read the script: "+m.Error.Message)
			return
		}
		rs.finish(m.ID, r.buf, "")
	}
}

// finish answers the read's request exactly once.
func (rs scriptReads) finish(id uint64, source []byte, failure string) {
	r := rs[id]
	if r == nil {
		return
	}
	delete(rs, id)
	r.timer.Stop()
	if failure != "" {
		r.sess.enqueue(appendError(nil, r.reqID, "", &wireError{codeServerError, failure}))
		return
	}
	if r.field == "content" {
		r.sess.enqueue(appendResult(nil, r.reqID, cdpproject.ResourceContent(source)))
		return
	}
	answer, err := r.script.answer(r.params, source)
	if err != nil {
		r.sess.enqueue(appendError(nil, r.reqID, "", &wireError{codeServerError, err.Error()}))
		return
	}
	r.sess.enqueue(appendResult(nil, r.reqID, answer))
}

// failRef ends every read of a source generation that went away.
func (rs scriptReads) failRef(ref sourceproto.SourceRef, why string) {
	for id, r := range rs {
		if r.ref == ref {
			rs.finish(id, nil, why)
		}
	}
}
