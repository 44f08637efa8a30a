package cdpserver

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// sessionState is what the hub knows of one DevTools session. Guarded by
// clientHub.mu.
type sessionState struct {
	pageEnabled     bool
	runtimeEnabled  bool
	debuggerEnabled bool
}

// broadcastLocked enqueues what build returns for each session.
func (h *clientHub) broadcastLocked(build func(*sessionState) [][]byte) {
	h.srv.mu.Lock()
	sessions := make([]*Session, 0, len(h.srv.sessions))
	for s := range h.srv.sessions {
		sessions = append(sessions, s)
	}
	h.srv.mu.Unlock()
	for _, s := range sessions {
		for _, m := range build(&s.client) {
			s.enqueue(m)
		}
	}
}

func (h *clientHub) frameJSON(f *clientFrame, c *clientContext) frame {
	loader := f.id
	if c != nil {
		loader = fmt.Sprintf("%s.%d", f.id, c.ref.Gen)
	}
	return frame{
		ID: f.id, ParentID: h.srv.targetID, LoaderID: loader, Name: f.displayName(),
		URL: f.url, SecurityOrigin: f.origin(), MimeType: "text/html",
	}
}

func (h *clientHub) frameAttached(f *clientFrame) []byte {
	return fmt.Appendf(nil, `{"method":"Page.frameAttached","params":{"frameId":%q,"parentFrameId":%q}}`, f.id, h.srv.targetID)
}

func (h *clientHub) frameNavigated(f *clientFrame, c *clientContext) []byte {
	b, _ := json.Marshal(map[string]any{"method": "Page.frameNavigated", "params": map[string]any{
		"frame": h.frameJSON(f, c), "type": "Navigation"}})
	return b
}

func (h *clientHub) contextCreated(c *clientContext) []byte {
	b, _ := json.Marshal(map[string]any{"method": "Runtime.executionContextCreated", "params": map[string]any{
		"context": map[string]any{
			"id": c.id, "uniqueId": c.uniqueID, "origin": c.frame.origin(), "name": c.frame.displayName(),
			"auxData": map[string]any{"isDefault": true, "type": "default", "frameId": c.frame.id},
		}}})
	return b
}

// childFramesLocked lists the client frames for Page.getResourceTree.
func (h *clientHub) childFramesLocked() []frameTree {
	var out []frameTree
	for _, id := range h.order {
		f := h.frames[id]
		out = append(out, frameTree{Frame: h.frameJSON(f, f.ctx), Resources: []struct{}{}})
	}
	return out
}

// cdpRemoteObject is CDP's Runtime.RemoteObject as projected from a client
// value: the producer's handle is not exposed (object handles come with the
// client Runtime backend), so objects show their description and preview.
type cdpRemoteObject struct {
	Type                string                     `json:"type"`
	Subtype             string                     `json:"subtype,omitempty"`
	ClassName           string                     `json:"className,omitempty"`
	Value               json.RawMessage            `json:"value,omitempty"`
	UnserializableValue string                     `json:"unserializableValue,omitempty"`
	Description         string                     `json:"description,omitempty"`
	Preview             *sourceproto.ObjectPreview `json:"preview,omitempty"`
}

type cdpCallFrame struct {
	FunctionName string `json:"functionName"`
	ScriptID     string `json:"scriptId"`
	URL          string `json:"url"`
	LineNumber   int64  `json:"lineNumber"`
	ColumnNumber int64  `json:"columnNumber"`
}

type cdpConsoleParams struct {
	Type               string            `json:"type"`
	Args               []cdpRemoteObject `json:"args"`
	ExecutionContextID int               `json:"executionContextId"`
	Timestamp          float64           `json:"timestamp"`
	StackTrace         *struct {
		CallFrames []cdpCallFrame `json:"callFrames"`
	} `json:"stackTrace,omitempty"`
	Context string `json:"context,omitempty"`
}

// consoleLocked projects one client console call, keeps it for replay and
// sends it to every window with Runtime enabled.
func (h *clientHub) consoleLocked(c *clientContext, ev *sourceproto.ConsoleEvent) {
	p := cdpConsoleParams{Type: string(ev.Type), ExecutionContextID: c.id, Timestamp: ev.Timestamp, Context: ev.Context}
	p.Args = make([]cdpRemoteObject, len(ev.Args))
	for i, a := range ev.Args {
		p.Args[i] = cdpRemoteObject{
			Type: string(a.Type), Subtype: string(a.Subtype), ClassName: a.ClassName,
			UnserializableValue: a.UnserializableValue, Description: a.Description, Preview: a.Preview,
		}
		switch {
		case len(a.Value) > 0:
			p.Args[i].Value = json.RawMessage(a.Value)
		case a.Type == "object" && a.Subtype == "null":
			// The decoder reads "value":null as absent; CDP's null carries it.
			p.Args[i].Value = json.RawMessage("null")
		}
	}
	if ev.StackTrace != nil {
		p.StackTrace = &struct {
			CallFrames []cdpCallFrame `json:"callFrames"`
		}{CallFrames: make([]cdpCallFrame, len(ev.StackTrace.CallFrames))}
		for i, f := range ev.StackTrace.CallFrames {
			p.StackTrace.CallFrames[i] = cdpCallFrame{
				FunctionName: f.FunctionName, ScriptID: c.scriptIDFor(f.URL), URL: f.URL,
				LineNumber: f.LineNumber, ColumnNumber: f.ColumnNumber,
			}
		}
	}
	params, err := json.Marshal(p)
	if err != nil {
		return
	}
	if len(c.console) == maxReplayPerContext {
		c.console = c.console[1:]
		c.dropped++
	}
	c.console = append(c.console, params)
	msg := consoleMessage(params)
	h.broadcastLocked(func(ss *sessionState) [][]byte {
		if !ss.runtimeEnabled {
			return nil
		}
		return [][]byte{msg}
	})
}

func consoleMessage(params []byte) []byte {
	b := make([]byte, 0, len(params)+48)
	b = append(b, `{"method":"Runtime.consoleAPICalled","params":`...)
	b = append(b, params...)
	return append(b, '}')
}

func (c *clientContext) scriptIDFor(u string) string {
	for _, s := range c.scripts {
		if s.url == u {
			return s.id
		}
	}
	return ""
}

// scriptLocked registers a page script and announces it to windows with the
// Debugger enabled, so console source links and Sources can open it.
func (h *clientHub) scriptLocked(c *clientContext, si *sourceproto.ScriptInfo) {
	if c.scriptIDFor(si.URL) != "" || si.URL == "" {
		return
	}
	h.nextScript++
	s := &clientScript{id: fmt.Sprintf("c%d", h.nextScript), url: si.URL, ctx: c}
	c.scripts = append(c.scripts, s)
	h.scripts[s.id] = s
	msg := h.scriptParsed(s)
	h.broadcastLocked(func(ss *sessionState) [][]byte {
		if !ss.debuggerEnabled {
			return nil
		}
		return [][]byte{msg}
	})
}

func (h *clientHub) scriptParsed(s *clientScript) []byte {
	b, _ := json.Marshal(map[string]any{"method": "Debugger.scriptParsed", "params": map[string]any{
		"scriptId": s.id, "url": s.url, "startLine": 0, "startColumn": 0, "endLine": 0, "endColumn": 0,
		"executionContextId": s.ctx.id, "hash": s.id, "isLiveEdit": false, "sourceMapURL": "",
		"hasSourceURL": false, "isModule": false, "length": 0,
		"executionContextAuxData": map[string]any{"isDefault": true, "frameId": s.ctx.frame.id},
	}})
	return b
}

// logEntry renders a Log.entryAdded the worker itself says.
func logEntry(level, text string, at time.Time) []byte {
	b, _ := json.Marshal(map[string]any{"method": "Log.entryAdded", "params": map[string]any{"entry": map[string]any{
		"source": "other", "level": level, "text": text, "timestamp": float64(at.UnixNano()) / 1e6}}})
	return b
}

// runtimeEnabling runs when a session's Runtime.enable succeeded, before its
// answer is queued: the client contexts and their console replay come first,
// as V8 does for the host.
func (h *clientHub) runtimeEnabling(s *Session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.client.runtimeEnabled {
		return
	}
	s.client.runtimeEnabled = true
	for _, id := range h.order {
		c := h.frames[id].ctx
		if c == nil {
			continue
		}
		s.enqueue(h.contextCreated(c))
		if c.dropped > 0 {
			s.enqueue(logEntry("warning", fmt.Sprintf("[inspector-worker] %d older console messages of %s are not replayed (the replay keeps the last %d)",
				c.dropped, c.frame.displayName(), maxReplayPerContext), time.Now()))
		}
		for _, p := range c.console {
			s.enqueue(consoleMessage(p))
		}
	}
}

// debuggerEnabling announces the client scripts before Debugger.enable's answer.
func (h *clientHub) debuggerEnabling(s *Session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.client.debuggerEnabled {
		return
	}
	s.client.debuggerEnabled = true
	for _, id := range h.order {
		if c := h.frames[id].ctx; c != nil {
			for _, sc := range c.scripts {
				s.enqueue(h.scriptParsed(sc))
			}
		}
	}
}

func (h *clientHub) setFlag(s *Session, method string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch method {
	case "Runtime.disable":
		s.client.runtimeEnabled = false
	case "Debugger.disable":
		s.client.debuggerEnabled = false
	case "Page.disable":
		s.client.pageEnabled = false
	}
}

// discardConsole forgets the replay buffers (Runtime.discardConsoleEntries:
// V8 does the same for the host, for every session).
func (h *clientHub) discardConsole() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.frames {
		if f.ctx != nil {
			f.ctx.console, f.ctx.dropped = nil, 0
		}
	}
}

// pageEnable answers Page.enable and Page.getResourceTree under the hub's
// lock, so frame events and the tree agree.
func (h *clientHub) pageRequest(s *Session, req request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch req.Method {
	case "Page.enable":
		s.client.pageEnabled = true
		s.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
	case "Page.getResourceTree":
		s.enqueue(appendResult(nil, req.ID, h.srv.resourceTree(h.childFramesLocked())))
	}
}
