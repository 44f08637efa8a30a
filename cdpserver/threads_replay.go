package cdpserver

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/coder/websocket"
)

// What a window's threads carry from one thread, and one host, to the next
// (docs/agent-note.md "Worker threads", "Breakpoints by URL in threads"):
//
//   - Auto-attach: the window's Target.setAutoAttach (flatten) is recorded;
//     `run --watch` replays it into the next host's Node session
//     (threadReplayOnRebind) before the host runs, so its threads attach,
//     and held for the window when it asked to wait.
//   - Breakpoints by URL: a breakpoint the window set with
//     Debugger.setBreakpointByUrl in a thread's session is the window's
//     for every thread attached afterwards, of this host or the next
//     (threadReplayBreakpoints): before the window hears of the thread,
//     its session gets Debugger.enable and each breakpoint. V8 names a
//     breakpoint by URL after its url, line and column, so the replay has
//     the id the window knows.

// maxThreadBreakpoints bounds the breakpoints by URL a window's threads
// carry. A window sets breakpoints one click at a time; past the bound a
// breakpoint is still set in its thread, only not carried to later
// threads (as --watch's maxWatchBreakpoints for the host's own).
const maxThreadBreakpoints = 10_000

// threadBreakpoint is a breakpoint by URL the window's threads carry.
type threadBreakpoint struct {
	id     string
	params []byte // the params as the thread got them (threadParams)
}

// nextIDLocked returns the next id of the relay range. tt.mu is held.
func (tt *threadTable) nextIDLocked() int64 {
	id := tt.nextID
	if tt.nextID++; tt.nextID > lastThreadRelayID {
		tt.nextID = firstThreadRelayID
	}
	return id
}

// nextInternalLocked returns the next relay id for a request of the
// worker's own on the window's Node session, registered so that Node's
// answer to it is dropped (relayAnswered). tt.mu is held.
func (tt *threadTable) nextInternalLocked() int64 {
	id := tt.nextIDLocked()
	tt.relays[id] = threadRelay{id: -1} // carries no window request
	return id
}

// internalToThreadLocked is a request of the worker's own for the thread
// of sessionID, inside NodeWorker.sendMessageToWorker. The inner id comes
// from the relay range too but is registered nowhere: the thread's answer
// to it is pending nowhere, so fromThread drops it. tt.mu is held.
func (tt *threadTable) internalToThreadLocked(sessionID, method string, params []byte) []byte {
	inner, _ := json.Marshal(struct {
		ID     int64           `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params,omitempty"`
	}{tt.nextIDLocked(), method, json.RawMessage(params)})
	return toWorkerEnvelope(tt.nextInternalLocked(), sessionID, inner)
}

// noteAutoAttach records what the window asked of Target.setAutoAttach, for
// threadReplayOnRebind.
func (sess *Session) noteAutoAttach(on, wait bool) {
	tt := sess.threads
	tt.mu.Lock()
	tt.autoAttach, tt.wait = on, on && wait
	tt.mu.Unlock()
}

// threadReplayOnRebind returns what the window's next Node session must be
// sent first for its threads (`run --watch`): NodeWorker.enable when the
// window had asked for auto-attach, after taking the window's hold on the
// new host's threads when it had asked to wait. Node answers in order, so
// the enable is in effect before the replayed state is answered and the
// host released (HostUp). Runs in hostLoop (replayInto).
func (sess *Session) threadReplayOnRebind() [][]byte {
	tt := sess.threads
	tt.mu.Lock()
	on, wait := tt.autoAttach, tt.wait
	tt.mu.Unlock()
	if !on {
		return nil
	}
	sess.holdThreads(wait)
	tt.mu.Lock()
	defer tt.mu.Unlock()
	id := tt.nextInternalLocked()
	return [][]byte{[]byte(`{"id":` + strconv.FormatInt(id, 10) +
		`,"method":"NodeWorker.enable","params":{"waitForDebuggerOnStart":false}}`)}
}

// threadReplayBreakpoints sets the window's carried breakpoints in the
// thread just attached as sessionID, before the window can send it
// anything: Debugger.enable (V8 sets no breakpoint without it), then each
// breakpoint by URL. Node's answers are dropped. Runs on hostLoop, once
// the thread is in the table.
func (sess *Session) threadReplayBreakpoints(sessionID string) {
	tt := sess.threads
	tt.mu.Lock()
	th := tt.byID[sessionID]
	if th == nil || len(tt.bps) == 0 {
		tt.mu.Unlock()
		return
	}
	msgs := [][]byte{tt.internalToThreadLocked(sessionID, "Debugger.enable", nil)}
	for _, bp := range tt.bps {
		msgs = append(msgs, tt.internalToThreadLocked(sessionID, "Debugger.setBreakpointByUrl", bp.params))
		th.replayed[string(bp.params)] = bp.id
	}
	tt.mu.Unlock()
	conn := sess.hostConn()
	if conn == nil {
		return
	}
	for _, m := range msgs {
		if conn.Write(context.Background(), websocket.MessageText, m) != nil {
			return // the session is broken: hostLoop's read ends too
		}
	}
}

// threadBreakpointRequest notes a breakpoint request of the window in the
// thread th (id is the window's request id, params as the thread gets
// them) and returns what must reach the thread before it: the removal of a
// replayed breakpoint the request sets again (V8 refuses a second
// breakpoint at the same url, line and column, and the stock frontend
// drops a breakpoint whose set failed: it sets its breakpoints in every
// new thread itself). tt.mu is held.
func (tt *threadTable) threadBreakpointRequestLocked(sessionID string, th *threadTarget, id int64, method string, params []byte) (before []byte) {
	switch method {
	case "Debugger.setBreakpointByUrl":
		th.bpParams[id] = params
		replayedID, ok := th.replayed[string(params)]
		if !ok {
			return nil
		}
		delete(th.replayed, string(params))
		p, _ := json.Marshal(map[string]string{"breakpointId": replayedID})
		return tt.internalToThreadLocked(sessionID, "Debugger.removeBreakpoint", p)
	case "Debugger.removeBreakpoint":
		var p struct {
			BreakpointID string `json:"breakpointId"`
		}
		if json.Unmarshal(params, &p) == nil && p.BreakpointID != "" {
			tt.forgetBreakpointLocked(p.BreakpointID)
		}
	}
	return nil
}

// forgetBreakpointLocked stops carrying the breakpoint id: the window
// removed it in one of its threads. tt.mu is held.
func (tt *threadTable) forgetBreakpointLocked(id string) {
	for i, bp := range tt.bps {
		if bp.id == id {
			tt.bps = append(tt.bps[:i:i], tt.bps[i+1:]...)
			break
		}
	}
	for _, th := range tt.byID {
		for k, v := range th.replayed {
			if v == id {
				delete(th.replayed, k)
			}
		}
	}
}

// threadAnsweredLocked commits a breakpoint by URL the thread accepted:
// the window's threads carry it from now on. tt.mu is held.
func (tt *threadTable) threadAnsweredLocked(th *threadTarget, id int64, answer []byte) {
	params, ok := th.bpParams[id]
	if !ok {
		return
	}
	delete(th.bpParams, id)
	var a struct {
		Result struct {
			BreakpointID string `json:"breakpointId"`
		} `json:"result"`
	}
	if json.Unmarshal(answer, &a) != nil || a.Result.BreakpointID == "" || len(tt.bps) >= maxThreadBreakpoints {
		return
	}
	for _, bp := range tt.bps {
		if bp.id == a.Result.BreakpointID {
			return
		}
	}
	tt.bps = append(tt.bps, threadBreakpoint{id: a.Result.BreakpointID, params: params})
}
