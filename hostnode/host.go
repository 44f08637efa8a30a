package hostnode

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// HostInfo describes the host for discovery (/json/list, Target.getTargetInfo).
type HostInfo struct {
	Title       string // e.g. "app.js"
	URL         string // e.g. "file:///home/me/app/app.js"
	NodeVersion string // e.g. "node.js/v20.20.2", "" when unknown
}

// Host is the backend of the host realm: the Node process reached through its
// inspector. Each DevTools connection gets its own inspector session from
// OpenSession; the Host itself keeps one watcher session that asks Node to
// tell it when the script has finished (NodeRuntime.waitingForDisconnect), so
// the worker can close every session and Node never hangs at "Waiting for the
// debugger to disconnect...". The watcher never enables Runtime and never
// evaluates anything: console floods are not delivered to it.
//
// The watcher also releases the host's worker threads, which inherit the
// --inspect-wait the host was started with (Threads).
//
// Goroutines: watchLoop (one), until Done; notifyLoop, the NodeWorker.enable
// resends and releaseLoop, and one resend per thread until it is released,
// each ending by its schedule's last time at the latest.
type Host struct {
	wsURL string      // Static after construction.
	info  HostInfo    // Static after construction.
	opts  HostOptions // Static after construction.

	doneOnce sync.Once
	done     chan struct{}
	finished chan struct{}   // closed by watchLoop on NodeRuntime.waitingForDisconnect
	notified chan struct{}   // closed by watchLoop when Node answered notifyMsg
	enabled  chan struct{}   // closed by watchLoop when Node answered nodeWorkerEnableMsg
	bound    chan struct{}   // closed by watchLoop when Node answered the ExitBinding's Runtime.addBinding
	threads  *Threads        // Static after construction; Event called by watchLoop only.
	mu       sync.Mutex      // Lock order: see docs/locks.md.
	reason   string          // Guarded by mu; set once before done closes.
	exitSaid string          // Guarded by mu: what the process passed to opts.ExitBinding, once.
	watcher  *websocket.Conn // Static after construction.
	wmu      sync.Mutex      // one writer on watcher at a time (resendLoop, Release). Lock order: see docs/locks.md.
}

// HostOptions configures AttachHost.
type HostOptions struct {
	// Exited, when set, is closed once the host process has exited, and
	// ExitReason then says how ("the host exited with code 3"). With them the
	// DevTools windows learn the exit code instead of "inspector closed".
	Exited     <-chan struct{}
	ExitReason func() string
	// Release makes the watcher send Runtime.runIfWaitingForDebugger once it
	// is attached: for a host started with --inspect-wait, so the script
	// only runs once the worker watches it (no message or exit can race the
	// attach).
	Release bool
	// ExitBinding, when set, is the name of a Runtime binding the watcher
	// adds to the process: a process that calls it (a child's preload, at
	// its 'exit', with its exit code) tells the worker how it ended;
	// ExitReport returns what it said. The binding is the watcher's alone:
	// Node sends Runtime.bindingCalled only to the session that added it.
	ExitBinding string
}

// exitReasonWait is how long the watcher waits, after Node's inspector
// closed, for the process exit that explains it.
const exitReasonWait = 5 * time.Second

// watcherRequestID is the id of notifyMsg; the releases take the ids after
// it.
const watcherRequestID = 1

// The watcher's ids for NodeWorker (Threads): its enable, and every
// message it forwards to a thread (answers ignored); and the id of the
// ExitBinding's Runtime.addBinding (below the forwards, above the releases).
const (
	nodeWorkerEnableID = 100
	watcherForwardID   = 101
	exitBindingID      = 50
)

// maxExitReport bounds what a process may say through its ExitBinding: an
// exit code or a signal name, a short line.
const maxExitReport = 200

var nodeWorkerEnableMsg = ThreadsEnable(nodeWorkerEnableID)

// notifyMsg asks Node to say when the script finished. It is the watcher's
// request whose answer the end of the script depends on (watcherRequestID).
var notifyMsg = fmt.Sprintf(`{"id":%d,"method":"NodeRuntime.notifyWhenWaitingForDisconnect","params":{"enabled":true}}`, watcherRequestID)

// hostInfoTimeout bounds the discovery requests made while attaching.
const hostInfoTimeout = 5 * time.Second

// AttachHost connects to the Node inspector at wsURL (ws://127.0.0.1:P/UUID):
// it reads the target's title and URL from Node's /json/list and opens the
// watcher session.
func AttachHost(ctx context.Context, wsURL string, opts HostOptions) (*Host, error) {
	info, err := fetchHostInfo(ctx, wsURL)
	if err != nil {
		return nil, err
	}
	c, err := Dial(ctx, wsURL)
	if err != nil {
		return nil, fmt.Errorf("realm: cannot open the watcher session to the host inspector %s: %w", wsURL, err)
	}
	msgs := []string{notifyMsg, nodeWorkerEnableMsg}
	bindMsg := ""
	if opts.ExitBinding != "" {
		name, _ := json.Marshal(opts.ExitBinding)
		bindMsg = fmt.Sprintf(`{"id":%d,"method":"Runtime.addBinding","params":{"name":%s}}`, exitBindingID, name)
		msgs = append(msgs, bindMsg)
	}
	if opts.Release {
		msgs = append(msgs, fmt.Sprintf(`{"id":%d,"method":"Runtime.runIfWaitingForDebugger"}`, watcherRequestID+1))
	}
	for _, msg := range msgs {
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			c.CloseNow()
			return nil, fmt.Errorf("realm: host inspector watcher: %w", err)
		}
	}
	h := &Host{wsURL: wsURL, info: info, opts: opts, done: make(chan struct{}), finished: make(chan struct{}),
		notified: make(chan struct{}), enabled: make(chan struct{}), bound: make(chan struct{}), watcher: c}
	h.threads = NewThreads(h.write, watcherForwardID, h.done)
	go h.watchLoop()
	go h.notifyLoop()
	go h.resend(h.enabled, func(int) string { return nodeWorkerEnableMsg })
	if bindMsg != "" {
		go h.resend(h.bound, func(int) string { return bindMsg })
	}
	if opts.Release {
		go h.releaseLoop()
	}
	return h, nil
}

// resend writes msg(i) at each of releaseResends' times, until the host
// ends, until is closed (nil: never) or a write fails. Node 20 sometimes
// drops a session's first message (see releaseResends), and each message
// the watcher repeats is harmless twice.
func (h *Host) resend(until <-chan struct{}, msg func(i int) string) {
	for i, d := range releaseResends {
		select {
		case <-h.done:
			return
		case <-until:
			return
		case <-time.After(d):
		}
		if h.write(msg(i)) != nil {
			return
		}
	}
}

// notifyLoop repeats notifyMsg until Node answers it: without it taken, a
// host whose script ends hangs at "Waiting for the debugger to
// disconnect..." with nobody told (seen once in CI: a --watch host that
// ended was never reported).
func (h *Host) notifyLoop() {
	h.resend(h.notified, func(int) string { return notifyMsg })
}

// write sends one message on the watcher session.
func (h *Host) write(msg string) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	return h.watcher.Write(context.Background(), websocket.MessageText, []byte(msg))
}

// releaseResends are when the watcher repeats Runtime.runIfWaitingForDebugger
// after attaching. Node 20 sometimes drops the first one (1–3 runs in 40 with
// several hosts starting at once): the script then never starts. Repeating
// it is harmless once the script runs (Node ignores it then).
var releaseResends = []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, time.Second, 3 * time.Second}

// releaseLoop repeats the release (Node ignores it once the script runs).
func (h *Host) releaseLoop() {
	h.resend(nil, func(i int) string {
		return fmt.Sprintf(`{"id":%d,"method":"Runtime.runIfWaitingForDebugger"}`, watcherRequestID+2+i)
	})
}

// watchLoop ends the host when Node says the script finished or when the
// inspector connection drops (the process exited).
func (h *Host) watchLoop() {
	for {
		_, msg, err := h.watcher.Read(context.Background())
		if err != nil {
			h.Finish("the host's inspector closed (the Node process exited)")
			return
		}
		var ev NodeWorkerEvent
		if json.Unmarshal(msg, &ev) != nil {
			continue
		}
		if ev.Method == "" {
			switch ev.ID {
			case watcherRequestID:
				closeOnce(h.notified)
			case nodeWorkerEnableID:
				closeOnce(h.enabled)
			case exitBindingID:
				closeOnce(h.bound)
			}
			continue
		}
		if ev.Method == "Runtime.bindingCalled" {
			h.exitCalled(msg)
			continue
		}
		if IsThreadEvent(ev.Method) {
			h.threads.Event(&ev)
			continue
		}
		if ev.Method == "NodeRuntime.waitingForDisconnect" {
			close(h.finished)
			h.Finish("the host script finished")
			return
		}
	}
}

// exitCalled records the first call of the ExitBinding.
func (h *Host) exitCalled(msg []byte) {
	var ev struct {
		Params struct {
			Name    string `json:"name"`
			Payload string `json:"payload"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &ev) != nil || ev.Params.Name != h.opts.ExitBinding || h.opts.ExitBinding == "" {
		return
	}
	said := ev.Params.Payload
	if len(said) > maxExitReport {
		said = said[:maxExitReport]
	}
	h.mu.Lock()
	if h.exitSaid == "" {
		h.exitSaid = said
	}
	h.mu.Unlock()
}

// ExitReport is what the process passed to HostOptions.ExitBinding ("" when
// it never called it: it is running, was killed by a signal, or has no
// such preload). Read it after Done for the final word.
func (h *Host) ExitReport() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.exitSaid
}

// closeOnce closes ch unless it is closed (an answer to a re-sent request).
func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// Finish marks the host as gone with a reason for the DevTools windows and
// closes the watcher session. The first reason wins; later calls are no-ops.
func (h *Host) Finish(reason string) {
	h.doneOnce.Do(func() {
		h.mu.Lock()
		h.reason = reason
		h.mu.Unlock()
		close(h.done)
		CloseSession(h.watcher)
	})
}

// Done is closed once the host is gone or finished.
func (h *Host) Done() <-chan struct{} { return h.done }

// ScriptFinished is closed when Node said, through the inspector protocol,
// that the script ended and the process only waits for its sessions to
// disconnect (NodeRuntime.waitingForDisconnect). From then on the process
// has nothing left to run: a caller that owns it may end it if it does not
// exit soon. Text the host prints can never close it.
func (h *Host) ScriptFinished() <-chan struct{} { return h.finished }

// Reason says why Done closed. When the host process is known (HostOptions
// Exited) and about to exit, it waits up to exitReasonWait for the exit so the
// reason can name the exit code; call it after releasing every session.
func (h *Host) Reason() string {
	h.mu.Lock()
	reason := h.reason
	h.mu.Unlock()
	if h.opts.Exited != nil {
		select {
		case <-h.opts.Exited:
			return h.opts.ExitReason()
		case <-time.After(exitReasonWait):
		}
	}
	return reason
}

// Release lets a host started with --inspect-wait (or --inspect-brk) run:
// the watcher sends Runtime.runIfWaitingForDebugger, repeated as
// releaseResends says. For a host attached without HostOptions.Release, once
// the caller has set up what must be in place before the script's first line
// (run --watch: every window's replayed breakpoints). Call it at most once.
func (h *Host) Release() {
	msg := fmt.Sprintf(`{"id":%d,"method":"Runtime.runIfWaitingForDebugger"}`, watcherRequestID+1)
	if h.write(msg) != nil {
		return
	}
	go h.releaseLoop()
}

// Info describes the host target.
func (h *Host) Info() HostInfo { return h.info }

// InspectorURL is the host's own inspector URL (never shown to DevTools).
func (h *Host) InspectorURL() string { return h.wsURL }

// OpenSession opens a new inspector session for one DevTools connection.
func (h *Host) OpenSession(ctx context.Context) (*websocket.Conn, error) {
	select {
	case <-h.done:
		return nil, fmt.Errorf("realm: %s", h.Reason())
	default:
	}
	return Dial(ctx, h.wsURL)
}

// Protocol returns Node's own /json/protocol document (the domains the host
// serves natively).
func (h *Host) Protocol(ctx context.Context) ([]byte, error) {
	return hostGet(ctx, h.wsURL, "/json/protocol")
}

func fetchHostInfo(ctx context.Context, wsURL string) (HostInfo, error) {
	body, err := hostGet(ctx, wsURL, "/json/list")
	if err != nil {
		return HostInfo{}, err
	}
	var targets []struct {
		Title string `json:"title"`
		URL   string `json:"url"`
		WS    string `json:"webSocketDebuggerUrl"`
	}
	if err := json.Unmarshal(body, &targets); err != nil {
		return HostInfo{}, fmt.Errorf("realm: host /json/list is not a target list: %w", err)
	}
	info := HostInfo{Title: "node", URL: ""}
	for _, t := range targets {
		if t.WS == wsURL || len(targets) == 1 {
			info.Title, info.URL = t.Title, t.URL
		}
	}
	// Node titles a target with the script path as typed; the base name reads
	// better in chrome://inspect and the window title.
	if u, err := url.Parse(info.URL); err == nil && u.Scheme == "file" && u.Path != "" {
		info.Title = path.Base(u.Path)
	}
	if v, err := hostGet(ctx, wsURL, "/json/version"); err == nil {
		var ver struct {
			Browser string `json:"Browser"`
		}
		if json.Unmarshal(v, &ver) == nil {
			info.NodeVersion = ver.Browser
		}
	}
	return info, nil
}

// maxHostDiscovery bounds a discovery document read from Node; its
// /json/protocol is ~150 KB.
const maxHostDiscovery = 8 << 20

func hostGet(ctx context.Context, wsURL, path string) ([]byte, error) {
	u, err := url.Parse(wsURL)
	if err != nil {
		return nil, fmt.Errorf("realm: bad host inspector URL %q: %w", wsURL, err)
	}
	ctx, cancel := context.WithTimeout(ctx, hostInfoTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+u.Host+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("realm: cannot reach the host inspector at %s: %w", u.Host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("realm: host inspector %s%s answered %s", u.Host, path, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxHostDiscovery))
}

// HoldThreads keeps the host's threads that start from now on waiting for
// a debugger until the returned func is called (Threads.Hold): for a
// DevTools window that attaches threads with waitForDebuggerOnStart.
func (h *Host) HoldThreads() (end func()) { return h.threads.Hold() }
