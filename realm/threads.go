package realm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Worker threads of the host.
//
// A worker_threads Worker inherits its parent's debug options, so under the
// --inspect-wait (or --inspect-brk) the worker starts its host with, every
// thread waits for a debugger of its own before its first line — forever,
// since no DevTools window attaches to threads. Plain `node` and `node
// --inspect` run it at once. The watcher session therefore enables Node's
// NodeWorker domain (waitForDebuggerOnStart false: no thread is made to
// wait by it) and, for every thread Node reports (NodeWorker.attachedToWorker,
// also for threads started before the watcher attached), enables NodeWorker
// inside that thread too (its own threads inherit the wait the same way) and
// sends it Runtime.runIfWaitingForDebugger, repeated on releaseResends'
// schedule until the thread answers or ends. Threads stay attached to the
// watcher: it never enables Runtime there, so they send it nothing but
// NodeWorker events.
//
// Passing the worker a cleaned execArgv from the preload was rejected: a
// Worker's execArgv refuses V8 and per-process flags (--max-old-space-size,
// --title …) with ERR_WORKER_INVALID_EXEC_ARGV, so an app started with one
// would break, and explicit execArgv drops the options a Worker inherits.

// Request ids the watcher uses on its own session, past watcherRequestID and
// the release ids (watcherRequestID+1 …).
const (
	nodeWorkerEnableID = 100 // NodeWorker.enable on the watcher session
	threadForwardID    = 101 // every NodeWorker.sendMessageToWorker; answers ignored
)

// Request ids inside a thread's session (ids are per session).
const (
	threadEnableID  = 1 // NodeWorker.enable, for the thread's own threads
	threadReleaseID = 2 // Runtime.runIfWaitingForDebugger; its answer ends the resends
)

// maxThreadDepth bounds how deeply nested thread messages are unwrapped (a
// thread of a thread of …): each level is one more JSON decode of the
// message string. Threads nested deeper are not released (they wait as
// under plain node --inspect-wait).
const maxThreadDepth = 8

var (
	nodeWorkerEnableMsg = fmt.Sprintf(`{"id":%d,"method":"NodeWorker.enable","params":{"waitForDebuggerOnStart":false}}`, nodeWorkerEnableID)
	threadEnableMsg     = fmt.Sprintf(`{"id":%d,"method":"NodeWorker.enable","params":{"waitForDebuggerOnStart":false}}`, threadEnableID)
	threadReleaseMsg    = fmt.Sprintf(`{"id":%d,"method":"Runtime.runIfWaitingForDebugger"}`, threadReleaseID)
)

// threads tracks the host's threads still to be released. Owned by
// watchLoop; the resend goroutines only wait on a pending channel.
type threads struct {
	pending map[string]chan struct{} // by thread path; closed and removed when answered or gone
}

// forThread wraps msg, a message for the thread at path (session ids from
// the main thread down), in one NodeWorker.sendMessageToWorker per level.
func forThread(path []string, msg string) string {
	for i := len(path) - 1; i >= 0; i-- {
		inner, _ := json.Marshal(msg) // a string always marshals
		msg = fmt.Sprintf(`{"id":%d,"method":"NodeWorker.sendMessageToWorker","params":{"sessionId":%q,"message":%s}}`,
			threadForwardID, path[i], inner)
	}
	return msg
}

// nodeWorkerEvent is what the watcher reads of a NodeWorker event or of an
// answer inside a thread's session.
type nodeWorkerEvent struct {
	ID     int    `json:"id"`
	Method string `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
		Message   string `json:"message"`
	} `json:"params"`
}

// threadEvent handles one NodeWorker event seen in the session of the
// thread at path (nil: the watcher's own session, the main thread).
func (h *Host) threadEvent(path []string, ev *nodeWorkerEvent) {
	switch ev.Method {
	case "NodeWorker.attachedToWorker":
		h.attachedThread(append(path[:len(path):len(path)], ev.Params.SessionID))
	case "NodeWorker.detachedFromWorker":
		h.threads.forget(append(path[:len(path):len(path)], ev.Params.SessionID))
	case "NodeWorker.receivedMessageFromWorker":
		child := append(path[:len(path):len(path)], ev.Params.SessionID)
		if len(child) > maxThreadDepth {
			return
		}
		var inner nodeWorkerEvent
		if json.Unmarshal([]byte(ev.Params.Message), &inner) != nil {
			return
		}
		if inner.Method == "" && inner.ID == threadReleaseID {
			h.threads.forget(child)
			return
		}
		h.threadEvent(child, &inner)
	}
}

// attachedThread releases a thread Node just reported.
func (h *Host) attachedThread(path []string) {
	if len(path) > maxThreadDepth {
		return
	}
	answered := h.threads.add(path)
	msgs := []string{forThread(path, threadEnableMsg), forThread(path, threadReleaseMsg)}
	for _, m := range msgs {
		if h.write(m) != nil {
			return
		}
	}
	// The release is repeated until the thread answers it: Node 20
	// sometimes drops a session's first message, and a thread that missed
	// it would wait forever. A repeat is ignored by a running thread.
	go h.resend(answered, func(int) string { return msgs[1] })
}

func threadKey(path []string) string { return strings.Join(path, "/") }

// add registers the thread at path and returns the channel closed when it
// is answered or gone.
func (t *threads) add(path []string) <-chan struct{} {
	if t.pending == nil {
		t.pending = make(map[string]chan struct{})
	}
	key := threadKey(path)
	if ch, ok := t.pending[key]; ok {
		return ch
	}
	ch := make(chan struct{})
	t.pending[key] = ch
	return ch
}

// forget ends the resends for the thread at path and for the threads it
// started (a thread that exits takes its own threads with it).
func (t *threads) forget(path []string) {
	key := threadKey(path)
	for k, ch := range t.pending {
		if k == key || strings.HasPrefix(k, key+"/") {
			close(ch)
			delete(t.pending, k)
		}
	}
}
