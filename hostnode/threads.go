package hostnode

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/inspector-worker/inspector-worker/cdpproject"
)

// Worker threads of an inspected Node process.
//
// A worker_threads Worker inherits its parent's debug options, so under the
// --inspect-wait or --inspect-brk that run and trace start node with, every
// thread waits for a debugger of its own before its first line — forever,
// since nothing attaches to threads. Plain `node` runs it at once. Threads
// therefore releases them: the session enables Node's NodeWorker domain
// (ThreadsEnable; waitForDebuggerOnStart false, so it makes no thread wait)
// and, for every thread Node reports (NodeWorker.attachedToWorker, also for
// threads started before the session attached), Threads enables NodeWorker
// inside that thread (its own threads inherit the wait the same way) and
// sends it Runtime.runIfWaitingForDebugger, repeated on ThreadResends'
// schedule until the thread answers or ends. Threads stay attached to the
// session, which never enables Runtime there, so they send it nothing but
// NodeWorker events.
//
// Passing the worker a cleaned execArgv from the preload was rejected: a
// Worker's execArgv refuses V8 and per-process flags (--max-old-space-size,
// --title …) with ERR_WORKER_INVALID_EXEC_ARGV, so an app started with one
// would break, and an explicit execArgv drops the options a Worker inherits.

// Request ids inside a thread's session (ids are per session).
const (
	threadEnableID  = 1 // NodeWorker.enable, for the thread's own threads
	threadReleaseID = 2 // Runtime.runIfWaitingForDebugger; its answer ends the resends
	threadForwardID = 3 // NodeWorker.sendMessageToWorker to a thread's own thread
)

// maxThreadDepth bounds how deeply nested thread messages are unwrapped (a
// thread of a thread of …): each level is one more JSON decode of the
// message string. Threads nested deeper are not released (they wait as
// under plain node --inspect-wait).
const maxThreadDepth = 8

// ThreadResends are when a thread's release is repeated after the first
// one until the thread answers: Node 20 sometimes drops a session's first
// message, and a thread that missed it would wait forever. A repeat is
// ignored by a running thread.
var ThreadResends = []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, time.Second, 3 * time.Second}

var (
	threadEnableMsg  = fmt.Sprintf(`{"id":%d,"method":"NodeWorker.enable","params":{"waitForDebuggerOnStart":false}}`, threadEnableID)
	threadReleaseMsg = fmt.Sprintf(`{"id":%d,"method":"Runtime.runIfWaitingForDebugger"}`, threadReleaseID)
)

// ThreadsEnable is the request (with the session's id for it) that makes
// Node report the session's threads to Threads.
func ThreadsEnable(id int64) string {
	return fmt.Sprintf(`{"id":%d,"method":"NodeWorker.enable","params":{"waitForDebuggerOnStart":false}}`, id)
}

// Threads releases the threads one inspector session reports. Event is
// called by the session's one reader goroutine; each release's repeats run
// on a goroutine of their own that ends once the thread answered or ended,
// stop closed, or ThreadResends' last time passed.
type Threads struct {
	write     func(msg string) error // Static after construction; safe for concurrent use.
	forwardID int64                  // Static after construction.
	stop      <-chan struct{}        // Static after construction.
	resends   []time.Duration        // Static after construction: ThreadResends.
	// pending are the threads not yet answered, by path; closed and removed
	// when answered or gone. Owned by the reader goroutine (Event).
	pending map[string]chan struct{}

	holdMu sync.Mutex // Leaf: see docs/locks.md.
	holds  int        // Guarded by holdMu: Hold calls not yet released.
	held   [][]string // Guarded by holdMu: threads started while held, not released.
}

// Hold keeps the session's own threads (not theirs) that start from now
// on waiting for a debugger, instead of releasing them: for a DevTools
// window that asked to attach threads waiting (Target.setAutoAttach
// waitForDebuggerOnStart), which releases each itself
// (Runtime.runIfWaitingForDebugger in the thread's session). The returned
// func ends this hold (idempotent); when the last hold ends, every thread
// still held is released as usual, so a window that closes without
// releasing leaves no thread waiting.
func (t *Threads) Hold() (end func()) {
	t.holdMu.Lock()
	t.holds++
	t.holdMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.holdMu.Lock()
			t.holds--
			var release [][]string
			if t.holds == 0 {
				release, t.held = t.held, nil
			}
			t.holdMu.Unlock()
			for _, path := range release {
				t.releaseHeld(path)
			}
		})
	}
}

// releaseHeld releases a thread that was held, from any goroutine: it
// does not touch pending (the reader's), so its resends run their whole
// schedule (a repeat is ignored by a running thread, and by Node for a
// thread that is gone).
func (t *Threads) releaseHeld(path []string) {
	release := t.forThread(path, threadReleaseMsg)
	if t.write(release) != nil {
		return
	}
	go t.resend(nil, release)
}

// holdBack reports whether the thread at path is held (Hold) and records it.
func (t *Threads) holdBack(path []string) bool {
	if len(path) != 1 {
		return false // a thread's own threads are not attached to windows yet
	}
	t.holdMu.Lock()
	defer t.holdMu.Unlock()
	if t.holds == 0 {
		return false
	}
	t.held = append(t.held, path)
	return true
}

// dropHeld forgets held threads at or under path (they exited).
func (t *Threads) dropHeld(key string) {
	t.holdMu.Lock()
	defer t.holdMu.Unlock()
	kept := t.held[:0]
	for _, p := range t.held {
		if k := threadKey(p); k != key && !strings.HasPrefix(k, key+"/") {
			kept = append(kept, p)
		}
	}
	t.held = kept
}

// NewThreads returns the releaser of one session's threads. write sends a
// message on the session (from the reader and the resend goroutines at
// once); forwardID is the session's request id for every
// NodeWorker.sendMessageToWorker (their answers carry nothing and may be
// ignored); stop ends the resends (the session is gone).
func NewThreads(write func(msg string) error, forwardID int64, stop <-chan struct{}) *Threads {
	return &Threads{write: write, forwardID: forwardID, stop: stop, resends: ThreadResends,
		pending: map[string]chan struct{}{}}
}

// NodeWorkerEvent is what Threads reads of a NodeWorker event, or of an
// answer inside a thread's session.
type NodeWorkerEvent struct {
	ID     int64  `json:"id"`
	Method string `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
		Message   string `json:"message"`
	} `json:"params"`
}

// IsThreadEvent says whether a session's event belongs to Threads.
func IsThreadEvent(method string) bool { return strings.HasPrefix(method, "NodeWorker.") }

// Event handles one NodeWorker event of the session (decode the message
// into NodeWorkerEvent once IsThreadEvent said so).
func (t *Threads) Event(ev *NodeWorkerEvent) { t.event(nil, ev) }

// event handles a NodeWorker event seen in the session of the thread at
// path (nil: the session's own thread).
func (t *Threads) event(path []string, ev *NodeWorkerEvent) {
	child := append(path[:len(path):len(path)], ev.Params.SessionID)
	switch ev.Method {
	case "NodeWorker.attachedToWorker":
		t.attached(child)
	case "NodeWorker.detachedFromWorker":
		t.forget(child)
	case "NodeWorker.receivedMessageFromWorker":
		if len(child) > maxThreadDepth {
			return
		}
		var inner NodeWorkerEvent
		if json.Unmarshal([]byte(ev.Params.Message), &inner) != nil {
			return
		}
		if inner.Method == "" && inner.ID == threadReleaseID {
			t.forget(child)
			return
		}
		t.event(child, &inner)
	}
}

// attached releases a thread Node just reported.
func (t *Threads) attached(path []string) {
	if len(path) > maxThreadDepth {
		return
	}
	key := threadKey(path)
	if _, ok := t.pending[key]; ok {
		return
	}
	// NodeWorker inside the thread first, held or not: its own threads
	// are released by this session either way.
	if t.write(t.forThread(path, threadEnableMsg)) != nil || t.holdBack(path) {
		return
	}
	answered := make(chan struct{})
	t.pending[key] = answered
	release := t.forThread(path, threadReleaseMsg)
	if t.write(release) != nil {
		return
	}
	go t.resend(answered, release)
}

// resend repeats msg at t.resends' times until done or stopped.
func (t *Threads) resend(done <-chan struct{}, msg string) {
	for _, d := range t.resends {
		timer := time.NewTimer(d)
		select {
		case <-done:
			timer.Stop()
			return
		case <-t.stop:
			timer.Stop()
			return
		case <-timer.C:
		}
		if t.write(msg) != nil {
			return
		}
	}
}

// forThread wraps msg, a message for the thread at path (session ids from
// the session's thread down), in one NodeWorker.sendMessageToWorker per level.
func (t *Threads) forThread(path []string, msg string) string {
	for i := len(path) - 1; i >= 0; i-- {
		id := int64(threadForwardID)
		if i == 0 {
			id = t.forwardID
		}
		var out sendToWorker
		out.ID, out.Method = id, "NodeWorker.sendMessageToWorker"
		out.Params.SessionID, out.Params.Message = path[i], msg
		b, err := cdpproject.Marshal(&out)
		if err != nil {
			panic("hostnode: encoding NodeWorker.sendMessageToWorker: " + err.Error()) // plain strings always encode
		}
		msg = string(b)
	}
	return msg
}

// sendToWorker is NodeWorker.sendMessageToWorker, a Node domain cdproto
// does not have.
type sendToWorker struct {
	ID     int64  `json:"id"`
	Method string `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
		Message   string `json:"message"`
	} `json:"params"`
}

func threadKey(path []string) string { return strings.Join(path, "/") }

// forget ends the resends for the thread at path and for the threads it
// started (a thread that exits takes its own threads with it).
func (t *Threads) forget(path []string) {
	key := threadKey(path)
	t.dropHeld(key)
	for k, ch := range t.pending {
		if k == key || strings.HasPrefix(k, key+"/") {
			close(ch)
			delete(t.pending, k)
		}
	}
}
