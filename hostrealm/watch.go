package hostrealm

import (
	"encoding/json"
	"strings"
	"sync"

	cdpdebugger "github.com/chromedp/cdproto/debugger"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/internal/cdpwire"
)

// WatchRule says whether `run --watch` records a method in the window's
// Node session and replays it into the next host: the method table's watch
// column (cdpserver/methods.go).
type WatchRule uint8

const (
	// WatchNo: not recorded.
	WatchNo WatchRule = iota
	// WatchEnable: an enable or disable; the replay enables what is on.
	WatchEnable
	// WatchSetting: a setting whose last params are replayed after the
	// enables, in the table's order.
	WatchSetting
	// WatchBreakpoint: a breakpoint set or removed; replayed by URL.
	WatchBreakpoint
)

// WatchTable is what a WatchState needs of the method table: the watch
// column, and its WatchSetting methods in the order they are replayed. The
// table lives with the transport (cdpserver), which hands it over, so that
// this package does not import cdpserver.
type WatchTable struct {
	Rule     func(method string) WatchRule
	Settings []string
}

// WatchState is what one window set in its Node session, recorded so that
// `run --watch` can replay it into the window's session to the next host
// (cdpserver/watch.go swaps the sessions), and the breakpoint id map that
// keeps the ids the window knows.
// Only Node's answers commit a change: a request Node refused changes
// nothing.
//
// Bounds: the recorded settings are one entry per method; breakpoints and
// scripts are bounded by maxWatchBreakpoints and maxWatchScripts (beyond them
// a breakpoint is not replayed, a script's breakpoints by location do not
// map), because a window sets breakpoints one click at a time and a host
// that parses more scripts than that is generating them.
type WatchState struct {
	table *WatchTable // Static.

	mu sync.Mutex // A leaf lock. Lock order: see docs/locks.md.

	inflight map[int64]trackedReq   // Guarded by mu: tracked requests Node has not answered.
	internal map[int64]func([]byte) // Guarded by mu: replayed requests' answer handlers.
	nextID   int64                  // Guarded by mu: the next replayed request's id.

	runtime, debugger, profiler bool              // Guarded by mu.
	debuggerParams              []byte            // Guarded by mu: Debugger.enable's params.
	settings                    map[string][]byte // Guarded by mu: replayed setting → its last params.

	bps       map[string]*bpRecord // Guarded by mu: window breakpoint id → record.
	bpOrder   []string             // Guarded by mu: window ids in the order set (replay order).
	hostToWin map[string]string    // Guarded by mu: host id → window id, where they differ.

	scripts  map[string]string // Guarded by mu: this host's script id → url as Node named it.
	contexts map[int]string    // Guarded by mu: this host's context id → uniqueId.
	paused   bool              // Guarded by mu: the window's host is paused.
}

type trackedReq struct {
	method string
	params []byte // the params as sent to Node (setBreakpoint: already the byUrl form, or nil)
}

type bpRecord struct {
	params []byte // Debugger.setBreakpointByUrl params for Node
	hostID string // the id of the current host's breakpoint; "" until replayed
}

const (
	maxWatchBreakpoints = 10_000
	maxWatchScripts     = 100_000
	// firstReplayID numbers replayed requests far above the ids DevTools
	// uses (it counts from 1) and within int32: Node refuses any other id
	// ("Message must have integer 'id' property"). 2^30 replayed requests
	// per window fit before that.
	firstReplayID = 1 << 30
)

// NewWatchState is an empty record of one window, kept by table's rules.
// table must be complete before the first Request (cdpserver fills its
// Settings in init).
func NewWatchState(table *WatchTable) *WatchState {
	return &WatchState{
		table:    table,
		inflight: map[int64]trackedReq{}, internal: map[int64]func([]byte){}, nextID: firstReplayID,
		settings: map[string][]byte{}, bps: map[string]*bpRecord{}, hostToWin: map[string]string{},
		scripts: map[string]string{}, contexts: map[int]string{},
	}
}

// Request notes a request about to be relayed and returns the message to
// send (removeBreakpoint names the host's id of a replayed breakpoint).
// Which methods are recorded is the method table's watch column.
func (w *WatchState) Request(id int64, method string, msg []byte) []byte {
	switch {
	case w.table.Rule(method) == WatchNo:
		return msg
	case method == "Debugger.setBreakpoint":
		w.mu.Lock()
		w.inflight[id] = trackedReq{method, w.byURLLocked(paramsOf(msg))}
		w.mu.Unlock()
		return msg
	case method == "Debugger.removeBreakpoint":
		return w.removeBreakpoint(msg)
	}
	w.mu.Lock()
	w.inflight[id] = trackedReq{method, paramsOf(msg)}
	w.mu.Unlock()
	return msg
}

// paramsOf is the raw params of a request, or {}.
func paramsOf(msg []byte) []byte {
	if s, e, ok := cdpwire.FindMember(msg, "params"); ok {
		return append([]byte(nil), msg[s:e]...)
	}
	return []byte("{}")
}

// byURLLocked turns Debugger.setBreakpoint params (a location in a script of
// this host) into setBreakpointByUrl params for the script's URL, so the
// breakpoint maps to the next host's script of the same file. nil when the
// script has no URL (eval code) or is unknown.
func (w *WatchState) byURLLocked(params []byte) []byte {
	var p struct {
		Location struct {
			ScriptID     string `json:"scriptId"`
			LineNumber   int    `json:"lineNumber"`
			ColumnNumber *int   `json:"columnNumber"`
		} `json:"location"`
		Condition string `json:"condition"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	u := w.scripts[p.Location.ScriptID]
	if u == "" {
		return nil
	}
	if strings.HasPrefix(u, "/") {
		u = pathToFileURL(u)
	}
	out := &cdpdebugger.SetBreakpointByURLParams{URL: u, LineNumber: int64(p.Location.LineNumber), Condition: p.Condition}
	if c := p.Location.ColumnNumber; c != nil {
		col := int64(*c)
		out.ColumnNumber = &col
	}
	b, err := cdpproject.Marshal(out)
	if err != nil {
		return nil
	}
	return MapBreakpointURL(b)
}

// removeBreakpoint forgets a breakpoint and names it to Node by the host's id.
func (w *WatchState) removeBreakpoint(msg []byte) []byte {
	var p struct {
		BreakpointID string `json:"breakpointId"`
	}
	if json.Unmarshal(paramsOf(msg), &p) != nil {
		return msg
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	rec, ok := w.bps[p.BreakpointID]
	if !ok {
		return msg
	}
	w.forgetBreakpointLocked(p.BreakpointID)
	if rec.hostID == "" || rec.hostID == p.BreakpointID {
		return msg
	}
	b, err := cdpproject.Marshal(&cdpdebugger.RemoveBreakpointParams{BreakpointID: cdpdebugger.BreakpointID(rec.hostID)})
	if err != nil {
		return msg
	}
	return cdpwire.ReplaceParams(msg, b)
}

func (w *WatchState) forgetBreakpointLocked(winID string) {
	rec := w.bps[winID]
	delete(w.bps, winID)
	if rec != nil && rec.hostID != "" {
		delete(w.hostToWin, rec.hostID)
	}
	for i, id := range w.bpOrder {
		if id == winID {
			w.bpOrder = append(w.bpOrder[:i], w.bpOrder[i+1:]...)
			break
		}
	}
}

// Answered commits a tracked request once Node accepted it.
func (w *WatchState) Answered(id int64, answer []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	req, ok := w.inflight[id]
	if !ok {
		return
	}
	delete(w.inflight, id)
	if _, _, isError := cdpwire.FindMember(answer, "error"); isError {
		return
	}
	switch req.method {
	case "Runtime.enable":
		w.runtime = true
	case "Runtime.disable":
		w.runtime = false
	case "Debugger.enable":
		w.debugger, w.debuggerParams = true, req.params
	case "Debugger.disable":
		// V8 removes every breakpoint of a session whose Debugger is disabled.
		w.debugger = false
		w.bps, w.bpOrder, w.hostToWin = map[string]*bpRecord{}, nil, map[string]string{}
	case "Profiler.enable":
		w.profiler = true
	case "Profiler.disable":
		w.profiler = false
	case "Debugger.setBreakpointByUrl", "Debugger.setBreakpoint":
		winID := breakpointIDOf(answer)
		if winID == "" || req.params == nil || len(w.bps) >= maxWatchBreakpoints {
			return
		}
		if _, dup := w.bps[winID]; !dup {
			w.bpOrder = append(w.bpOrder, winID)
		}
		w.bps[winID] = &bpRecord{params: req.params, hostID: winID}
	default:
		w.settings[req.method] = req.params
	}
}

// breakpointIDOf reads result.breakpointId of an answer.
func breakpointIDOf(answer []byte) string {
	var a struct {
		Result struct {
			BreakpointID string `json:"breakpointId"`
		} `json:"result"`
	}
	_ = json.Unmarshal(answer, &a)
	return a.Result.BreakpointID
}

// Event observes one host event and rewrites host breakpoint ids to the
// window's. It reports whether the event is to be relayed (always, today).
func (w *WatchState) Event(method string, msg *[]byte) bool {
	switch method {
	case "Runtime.executionContextCreated":
		var p struct {
			Params struct {
				Context struct {
					ID       int    `json:"id"`
					UniqueID string `json:"uniqueId"`
				} `json:"context"`
			} `json:"params"`
		}
		if json.Unmarshal(*msg, &p) == nil {
			w.mu.Lock()
			w.contexts[p.Params.Context.ID] = p.Params.Context.UniqueID
			w.mu.Unlock()
		}
	case "Runtime.executionContextDestroyed":
		var p struct {
			Params struct {
				ID int `json:"executionContextId"`
			} `json:"params"`
		}
		if json.Unmarshal(*msg, &p) == nil {
			w.mu.Lock()
			delete(w.contexts, p.Params.ID)
			w.mu.Unlock()
		}
	case "Runtime.executionContextsCleared":
		w.mu.Lock()
		clear(w.contexts)
		w.mu.Unlock()
	case "Debugger.scriptParsed":
		s, e, ok1 := cdpwire.FindMember(*msg, "params", "scriptId")
		us, ue, ok2 := cdpwire.FindMember(*msg, "params", "url")
		if ok1 && ok2 {
			id, u := cdpwire.Unquote((*msg)[s:e]), cdpwire.Unquote((*msg)[us:ue])
			w.mu.Lock()
			if len(w.scripts) < maxWatchScripts {
				w.scripts[id] = u
			}
			w.mu.Unlock()
		}
	case "Debugger.paused":
		w.mu.Lock()
		w.paused = true
		if len(w.hostToWin) > 0 {
			*msg = w.mapHitBreakpointsLocked(*msg)
		}
		w.mu.Unlock()
	case "Debugger.resumed":
		w.mu.Lock()
		w.paused = false
		w.mu.Unlock()
	case "Debugger.breakpointResolved":
		w.mu.Lock()
		if len(w.hostToWin) > 0 {
			if s, e, ok := cdpwire.FindMember(*msg, "params", "breakpointId"); ok {
				if win, ok := w.hostToWin[cdpwire.Unquote((*msg)[s:e])]; ok {
					q, _ := json.Marshal(win)
					*msg = splice(*msg, s, e, q)
				}
			}
		}
		w.mu.Unlock()
	}
	return true
}

// mapHitBreakpointsLocked rewrites Debugger.paused's hitBreakpoints.
func (w *WatchState) mapHitBreakpointsLocked(msg []byte) []byte {
	s, e, ok := cdpwire.FindMember(msg, "params", "hitBreakpoints")
	if !ok {
		return msg
	}
	var ids []string
	if json.Unmarshal(msg[s:e], &ids) != nil {
		return msg
	}
	for i, id := range ids {
		if win, ok := w.hostToWin[id]; ok {
			ids[i] = win
		}
	}
	b, _ := json.Marshal(ids)
	return splice(msg, s, e, b)
}

func splice(msg []byte, s, e int64, val []byte) []byte {
	out := make([]byte, 0, len(msg)-int(e-s)+len(val))
	out = append(out, msg[:s]...)
	out = append(out, val...)
	return append(out, msg[e:]...)
}

// HostGone forgets the host that went away and returns what tells the
// window (Debugger.resumed if it was paused, then
// Runtime.executionContextsCleared), and the answer handlers of replayed
// requests Node will now never answer.
func (w *WatchState) HostGone() (msgs [][]byte, unanswered []func([]byte)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, h := range w.internal {
		unanswered = append(unanswered, h)
	}
	var out [][]byte
	if w.paused {
		out = append(out, []byte(`{"method":"Debugger.resumed","params":{}}`))
	}
	if w.runtime {
		// A navigation's reset: the frontend drops every context and, with
		// them, every script (DebuggerModel.globalObjectCleared). Destroying
		// the host's contexts one by one was not enough: V8 numbers scripts
		// per process, so the new host reuses the old one's script ids, and
		// the frontend kept the old scripts of context 0 (Node's internals)
		// under ids that now name the new app's (a pause showed "VM126
		// streams:35" instead of host.js:35). The client pages' contexts
		// and scripts are announced again after it (pagerealm Hub.HostRestarted).
		out = append(out, []byte(`{"method":"Runtime.executionContextsCleared","params":{}}`))
	}
	w.paused = false
	clear(w.contexts)
	clear(w.scripts)
	clear(w.inflight)
	clear(w.internal)
	clear(w.hostToWin)
	for _, rec := range w.bps {
		rec.hostID = ""
	}
	return out, unanswered
}

// Replayed is one request of a replay and what to do with its answer.
type Replayed struct {
	Msg      []byte
	OnAnswer func(answer []byte) [][]byte // events for the window; may be nil
}

// Replay lists the requests that put the window's state into a new Node
// session, in order: enables, settings, breakpoints, Profiler. Each is sent
// under the id Register gives it; its answer reaches the handler given there
// (InternalAnswer) instead of the window.
func (w *WatchState) Replay() []Replayed {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Replayed
	add := func(method string, params []byte, on func([]byte) [][]byte) {
		if params == nil {
			params = []byte("{}")
		}
		out = append(out, Replayed{cdpproject.Event(method, cdpproject.Raw(params)), on})
	}
	if w.runtime {
		add("Runtime.enable", nil, nil)
	}
	if w.debugger {
		add("Debugger.enable", w.debuggerParams, nil)
		for _, m := range w.table.Settings { // the table's order
			if p, ok := w.settings[m]; ok && strings.HasPrefix(m, "Debugger.") {
				add(m, p, nil)
			}
		}
		for _, winID := range w.bpOrder {
			rec := w.bps[winID]
			add("Debugger.setBreakpointByUrl", rec.params, w.breakpointReplayed(winID))
		}
	}
	if p, ok := w.settings["Runtime.setAsyncCallStackDepth"]; ok && w.runtime {
		add("Runtime.setAsyncCallStackDepth", p, nil)
	}
	if w.profiler {
		add("Profiler.enable", nil, nil)
	}
	return out
}

// breakpointReplayed maps a replayed breakpoint's new host id to the window's
// and tells the window where it is bound now (breakpointResolved per
// location: V8 reports the locations of a new breakpoint in its answer only).
func (w *WatchState) breakpointReplayed(winID string) func([]byte) [][]byte {
	return func(answer []byte) [][]byte {
		var a struct {
			Result struct {
				BreakpointID string            `json:"breakpointId"`
				Locations    []json.RawMessage `json:"locations"`
			} `json:"result"`
		}
		if json.Unmarshal(answer, &a) != nil || a.Result.BreakpointID == "" {
			return nil
		}
		w.mu.Lock()
		if rec, ok := w.bps[winID]; ok {
			rec.hostID = a.Result.BreakpointID
			if rec.hostID != winID {
				w.hostToWin[rec.hostID] = winID
			}
		}
		w.mu.Unlock()
		var out [][]byte
		for _, loc := range a.Result.Locations {
			out = append(out, cdpproject.BreakpointResolved(winID, loc))
		}
		return out
	}
}

// Register gives a replayed request an id and an answer handler; it
// returns the message with the id.
func (w *WatchState) Register(r Replayed, handle func([]byte)) []byte {
	w.mu.Lock()
	id := w.nextID
	w.nextID++
	w.internal[id] = handle
	w.mu.Unlock()
	b, _ := json.Marshal(id)
	return append(append([]byte(`{"id":`), b...), append([]byte(","), r.Msg[1:]...)...)
}

// InternalAnswer runs the handler of a replayed request's answer, if id is
// one.
func (w *WatchState) InternalAnswer(id int64, answer []byte) bool {
	w.mu.Lock()
	h, ok := w.internal[id]
	delete(w.internal, id)
	w.mu.Unlock()
	if ok {
		h(answer)
	}
	return ok
}
