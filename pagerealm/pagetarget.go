package pagerealm

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/realm"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Page targets (docs/agent-note.md "Page targets"): besides the combined
// target (the host as the main frame, every page a child frame), each
// page is a target of its own, as Chrome lists a tab. A window on it
// (NewPageWindow) sees that page alone: its contexts, console, scripts
// and document; the host and the other pages are not shown to it, and
// their ids are refused when it names them (cdpserver/pagetarget*.go).
//
// The target id is the page's frame id: stable across the page's reloads
// and reconnects for as long as the hub keeps its frame (a source id the
// page keeps in sessionStorage, so the same tab; the frame outlives a
// connection by frameDetachGrace). Chrome's main frame id is its target
// id too, and clients (Puppeteer) compare the two.
//
// The page is the target's main frame: its loads are told as Chrome tells
// a main-frame navigation (Page.frameNavigated, then the lifecycle events),
// not as a child frame's document (Page.documentOpened).

// PageTarget is one page as a target.
type PageTarget struct {
	ID       string // the target id: the page's frame id
	SourceID string // the page's source id (the scope of its windows)
	URL      string
	Title    string
	// Connected: a load of the page is connected now (false between a
	// reload's connections, and in the grace before the target ends).
	Connected bool
}

// PageTargets lists the pages as targets, in the order they connected.
func (h *Hub) PageTargets() []PageTarget {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]PageTarget, 0, len(h.order))
	for _, id := range h.order {
		out = append(out, h.frames[id].target())
	}
	return out
}

// PageTargetByID is the page whose target id is id.
func (h *Hub) PageTargetByID(id string) (PageTarget, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.frames {
		if f.id == id {
			return f.target(), true
		}
	}
	return PageTarget{}, false
}

func (f *clientFrame) target() PageTarget {
	title := f.title
	if title == "" {
		title = f.displayName()
	}
	return PageTarget{ID: f.id, SourceID: f.sourceID, URL: f.url, Title: title, Connected: f.ctx != nil}
}

// TargetsChanged returns a channel closed at the next change of the page
// targets (one connects, reloads, is renamed, navigates or ends): a
// watcher reads PageTargets again then, and asks for the next channel.
// A channel, not a callback: the hub changes targets under its lock, and a
// callback there could not read PageTargets (lock order, docs/locks.md).
func (h *Hub) TargetsChanged() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.targets == nil {
		h.targets = make(chan struct{})
	}
	return h.targets
}

// targetsChangedLocked wakes the watchers of TargetsChanged.
func (h *Hub) targetsChangedLocked() {
	if h.targets != nil {
		close(h.targets)
		h.targets = nil
	}
}

// Target is the source id of the page whose target w is on; "" for the
// combined target.
func (w *Window) Target() string { return w.client.target }

// TargetRealm is the realm of the page w's target is on now: a request
// that names no context goes there (a page target's default context is
// its page's).
func (h *Hub) TargetRealm(w *Window) (*realm.Realm, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.frames[w.client.target]
	switch {
	case f == nil:
		return nil, fmt.Errorf("the page of this target has gone (it closed)")
	case f.ctx == nil:
		return nil, fmt.Errorf("the page %q is between loads (it reloads or navigates); retry once it is back", f.displayName())
	}
	return f.ctx.realm, nil
}

// mainFrameJSON is page f as its own target's main frame.
func (h *Hub) mainFrameJSON(f *clientFrame, c *clientContext) cdpproject.Frame {
	fr := h.frameJSON(f, c)
	fr.ParentID = ""
	return fr
}

// lifecycleNames are the lifecycle events a load is told with, in Chrome's
// order. The worker does not see the page's own load events: it learns of
// a load when the page's agent connects, which client.js does once the page
// has run it, so DOMContentLoaded and load are announced then.
var lifecycleNames = []string{"init", "DOMContentLoaded", "load", "networkAlmostIdle", "networkIdle"}

// monoStart is the origin of the lifecycle events' monotonic timestamps
// (Chrome's count from boot; clients only compare them).
var monoStart = time.Now()

// mainFrameLoaded is what a page target's window is told of a new load of
// its page, in Chrome's order: with Page enabled the main frame navigated,
// then (Runtime enabled) the load's context, then the lifecycle
// (Page.lifecycleEvent when enabled, domContentEventFired, loadEventFired,
// frameStoppedLoading).
func (h *Hub) mainFrameLoaded(f *clientFrame, c *clientContext, ss *sessionState) [][]byte {
	if !ss.pageEnabled {
		if ss.runtimeEnabled {
			return append([][]byte{h.contextCreated(c)}, h.worldsCreatedLocked(ss, c)...)
		}
		return nil
	}
	fr := h.mainFrameJSON(f, c)
	ts := cdp.MonotonicTime(time.Since(monoStart).Seconds())
	life := func(name string) []byte {
		return cdpproject.Event("Page.lifecycleEvent", &cdppage.EventLifecycleEvent{FrameID: fr.ID, LoaderID: fr.LoaderID, Name: name, Timestamp: ts})
	}
	out := [][]byte{cdpproject.Event("Page.frameStartedLoading", &cdppage.EventFrameStartedLoading{FrameID: fr.ID})}
	if ss.lifecycle {
		out = append(out, life(lifecycleNames[0]))
	}
	out = append(out, cdpproject.FrameNavigated(fr))
	if ss.runtimeEnabled {
		out = append(out, h.contextCreated(c))
		out = append(out, h.worldsCreatedLocked(ss, c)...) // pageworld.go
	}
	out = append(out, cdpproject.Event("Page.domContentEventFired", &cdppage.EventDomContentEventFired{Timestamp: ts}))
	if ss.lifecycle {
		out = append(out, life(lifecycleNames[1]))
	}
	out = append(out, cdpproject.Event("Page.loadEventFired", &cdppage.EventLoadEventFired{Timestamp: ts}))
	if ss.lifecycle {
		for _, n := range lifecycleNames[2:] {
			out = append(out, life(n))
		}
	}
	return append(out, cdpproject.Event("Page.frameStoppedLoading", &cdppage.EventFrameStoppedLoading{FrameID: fr.ID}))
}

// TargetFrameTree answers Page.getFrameTree (resources false) and
// Page.getResourceTree (true) on a page target: the page as the main
// frame, alone.
func (h *Hub) TargetFrameTree(w *Window, req Request, resources bool) {
	h.mu.Lock()
	f := h.frames[w.client.target]
	var fr cdpproject.Frame
	if f != nil {
		fr = h.mainFrameJSON(f, f.ctx)
	}
	h.mu.Unlock()
	if f == nil {
		w.refuse(req, &wireError{codeServerError, "the page of this target has gone (it closed)"})
		return
	}
	if resources {
		w.enqueue(appendResult(nil, req.ID, cdpproject.ResourceTree(cdpproject.FrameTree{Frame: fr})))
		return
	}
	w.enqueue(appendResult(nil, req.ID, cdpproject.FrameTreeAnswer(fr)))
}

// SetLifecycleEvents answers Page.setLifecycleEventsEnabled on a page
// target.
func (h *Hub) SetLifecycleEvents(w *Window, req Request) {
	var p struct {
		Enabled bool `json:"enabled"`
	}
	_ = json.Unmarshal(req.Params, &p)
	h.mu.Lock()
	w.client.lifecycle = p.Enabled
	h.mu.Unlock()
	w.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
}

// targetDocumentLocked is a page target window's document: the page's
// own, in a new namespace (its children come with DOM.requestChildNodes).
// Between loads it is an empty document no id of which names a node.
func (h *Hub) targetDocumentLocked(w *Window) *cdp.Node {
	f := h.frames[w.client.target]
	if f == nil || f.ctx == nil {
		return &cdp.Node{NodeID: hostDocumentID, BackendNodeID: cdp.BackendNodeID(hostDocumentID), NodeType: 9,
			NodeName: "#document", Children: []*cdp.Node{}}
	}
	ns, ok := h.newNamespaceLocked(w, f.ctx)
	if !ok {
		return &cdp.Node{NodeID: hostDocumentID, BackendNodeID: cdp.BackendNodeID(hostDocumentID), NodeType: 9,
			NodeName: "#document", Children: []*cdp.Node{}}
	}
	return h.ownerNode(f.ctx, ns).ContentDocument
}

// targetDocumentAnswerLocked answers DOM.getDocument on a page target:
// the page's document with its children to depth (CDP's default 1; -1 the
// whole tree), asked of the page; (nil, nil) when the page's answer will
// answer. A page that does not answer leaves the document unexpanded, as
// with pierce on the combined target.
func (h *Hub) targetDocumentAnswerLocked(w *Window, req Request, root *cdp.Node, depth int64) ([]byte, error) {
	if depth == 0 {
		depth = 1
	}
	ns := uint64(root.NodeID) >> nsShift
	c := w.client.dom.byNS[ns]
	if ns == 0 || c == nil || !c.caps.Has(sourceproto.CapDOM) || h.reg == nil {
		return cdpproject.DocumentAnswer(root), nil
	}
	id := req.ID
	done := func(res *sourceproto.RuntimeResult, why string) {
		var r *sourceproto.DOMResult
		if res != nil {
			r = res.DOMResultOf()
		}
		if r != nil && len(r.Children) == 1 && w.client.dom.byNS[ns] == c {
			root.Children = cdpproject.DOMNodes(r.Children[0].Nodes, idsOf(ns))
			root.ChildNodeCount = int64(len(root.Children))
		} else if why != "" {
			h.host.Logf("DOM.getDocument in the page %q: %s", c.frame.displayName(), why)
		}
		w.enqueue(appendResult(nil, id, cdpproject.DocumentAnswer(root)))
	}
	w.client.dom.markUsed(ns)
	cmd := &sourceproto.RuntimeCommand{}
	cmd.SetDOM(sourceproto.MethodDOMChildren, &sourceproto.DOMParams{Doc: ns, Node: pageDocument, Depth: depth})
	call := &runtimeCall{ref: c.ref, ctx: c, page: c.frame.displayName(), realm: c.realm.ID, sess: w,
		wire: wireSession(w), method: cmd.Method, cdp: "DOM.getDocument", ctxID: c.id, size: commandOverhead, own: done}
	h.registerLocked(call, cmd)
	if werr := h.admitLocked(c, call); werr != nil {
		h.forgetCallLocked(cmd.ID)
		return cdpproject.DocumentAnswer(root), nil
	}
	return nil, nil
}

// targetDocumentUpdatedLocked: a new load of a page target's page
// replaces its document, as a main-frame navigation does in Chrome.
func (h *Hub) targetDocumentUpdatedLocked(w *Window) {
	h.dropDocumentLocked(w)
	h.domPushLocked(w, cdpproject.DocumentUpdated())
}

// navigation is a Page.navigate waiting for the page's next load.
type navigation struct {
	w      *Window
	req    Request
	timer  *time.Timer
	within bool // a fragment change: answered when the page has run it
}

// newDocScript is a Page.addScriptToEvaluateOnNewDocument kept for a
// window.
type newDocScript struct {
	id     string
	source string
}

// PageEval runs expr in the page of w's target as the worker's own
// evaluation (its value is not kept); done hears how it ended ("" when the
// page answered). The page must be connected. cdpMethod names the request
// in messages.
func (h *Hub) PageEval(w *Window, cdpMethod, expr string, done func(why string)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.frames[w.client.target]
	if f == nil || f.ctx == nil {
		return fmt.Errorf("%s: the page is not connected (it closed, reloads or navigates)", cdpMethod)
	}
	return h.evalLocked(w, f.ctx, cdpMethod, expr, done)
}

// evalLocked queues an own evaluation of expr in page generation c.
func (h *Hub) evalLocked(w *Window, c *clientContext, cdpMethod, expr string, done func(why string)) error {
	if !c.caps.Has(sourceproto.CapRuntime) || h.reg == nil {
		return fmt.Errorf("%s: the page's client agent did not offer the runtime capability", cdpMethod)
	}
	own := func(res *sourceproto.RuntimeResult, why string) {
		if done != nil {
			done(why)
		}
	}
	cmd := &sourceproto.RuntimeCommand{Method: sourceproto.MethodEvaluate,
		Evaluate: &sourceproto.EvaluateParams{Expression: expr, Silent: true, ReturnByValue: true}}
	call := &runtimeCall{ref: c.ref, ctx: c, page: c.frame.displayName(), realm: c.realm.ID, sess: w, wire: wireSession(w),
		method: cmd.Method, cdp: cdpMethod, ctxID: c.id, size: len(expr) + commandOverhead, own: own}
	h.registerLocked(call, cmd)
	if werr := h.admitLocked(c, call); werr != nil {
		h.forgetCallLocked(cmd.ID)
		return werr
	}
	return nil
}

// guarded wraps source so that it never throws into the worker's
// evaluation and its value is never kept: an error is the page's own
// console.error, as a script that fails in Chrome reports it.
func guarded(source string) string {
	q, _ := json.Marshal(source)
	return "void (() => { try { (0, eval)(" + string(q) + ") } catch (e) { console.error(e) } })()"
}

// Navigate answers Page.navigate on a page target: the page's agent runs
// location.assign, and the answer (with the new load's loaderId) goes
// when the page's next load connects, as Chrome answers once the
// navigation commits; a fragment change answers when the page has run it.
// A page that does not come back within wait (the new URL does not load
// client.js, or the page is stuck) is answered with an error saying so.
func (h *Hub) Navigate(w *Window, req Request, wait time.Duration) {
	var p struct {
		URL string `json:"url"`
	}
	_ = json.Unmarshal(req.Params, &p)
	if p.URL == "" {
		w.refuse(req, &wireError{codeServerError, "Page.navigate: url is required"})
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.frames[w.client.target]
	if f == nil || f.ctx == nil {
		w.refuse(req, &wireError{codeServerError, "Page.navigate: the page is not connected (it closed, reloads or navigates); retry once it is back"})
		return
	}
	n := &navigation{w: w, req: req, within: sameDocument(f.url, p.URL)}
	q, _ := json.Marshal(p.URL)
	err := h.evalLocked(w, f.ctx, "Page.navigate", "void location.assign("+string(q)+")", func(why string) {
		if n.within && why == "" {
			h.answerNavigationLocked(n, f, nil)
		}
	})
	if err != nil {
		w.refuse(req, &wireError{codeServerError, err.Error()})
		return
	}
	h.navigations = append(h.navigations, n)
	n.timer = time.AfterFunc(wait, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.failNavigationLocked(n, fmt.Sprintf("Page.navigate: the page did not load %s and connect back within %v "+
			"(a page the worker reaches only through its client agent: the new URL must load client.js)", p.URL, wait))
	})
}

// sameDocument reports whether to differs from the page's URL by its
// fragment only: location.assign then scrolls, and no load follows.
func sameDocument(from, to string) bool {
	a, err1 := url.Parse(from)
	b, err2 := url.Parse(to)
	if err1 != nil || err2 != nil || b.Fragment == "" {
		return false
	}
	b = a.ResolveReference(b)
	a.Fragment, b.Fragment = "", ""
	return a.String() == b.String()
}

// answerNavigationLocked answers n with the load c (nil: a fragment
// change) and forgets it.
func (h *Hub) answerNavigationLocked(n *navigation, f *clientFrame, c *clientContext) {
	if !h.dropNavigationLocked(n) {
		return
	}
	answer := struct {
		FrameID  string `json:"frameId"`
		LoaderID string `json:"loaderId,omitempty"`
	}{FrameID: f.id}
	if c != nil {
		answer.LoaderID = f.id + "." + strconv.FormatUint(c.ref.Gen, 10)
	}
	b, _ := json.Marshal(answer)
	n.w.enqueue(appendResult(nil, n.req.ID, b))
}

func (h *Hub) failNavigationLocked(n *navigation, why string) {
	if h.dropNavigationLocked(n) {
		n.w.refuse(n.req, &wireError{codeServerError, why})
	}
}

// dropNavigationLocked forgets n; false if it had been answered.
func (h *Hub) dropNavigationLocked(n *navigation) bool {
	for i, o := range h.navigations {
		if o == n {
			h.navigations = append(h.navigations[:i], h.navigations[i+1:]...)
			if n.timer != nil {
				n.timer.Stop()
			}
			return true
		}
	}
	return false
}

// targetLoadedLocked runs when page generation c opens: the navigations
// of its target's windows are answered, and their kept new-document
// scripts run in it.
func (h *Hub) targetLoadedLocked(c *clientContext) {
	h.targetsChangedLocked()
	for _, n := range append([]*navigation(nil), h.navigations...) {
		if n.w.client.target == c.frame.sourceID {
			h.answerNavigationLocked(n, c.frame, c)
		}
	}
	for _, w := range h.sessionsLocked() {
		if w.client.target != c.frame.sourceID {
			continue
		}
		for _, sc := range w.client.newDoc {
			if err := h.evalLocked(w, c, "Page.addScriptToEvaluateOnNewDocument", guarded(sc.source), nil); err != nil {
				h.host.Logf("page target %s: a new-document script was not run: %v", c.frame.id, err)
			}
		}
	}
}

// targetEndedLocked runs when page f's target ends (the page closed and
// did not come back): navigations still waiting for its next load are
// answered now, and the target's watchers are woken (its windows close).
func (h *Hub) targetEndedLocked(f *clientFrame) {
	h.targetsChangedLocked()
	for _, n := range append([]*navigation(nil), h.navigations...) {
		if n.w.client.target == f.sourceID {
			h.failNavigationLocked(n, "Page.navigate: the page closed and did not come back (its target is gone)")
		}
	}
}

// targetWindowClosedLocked forgets what a closing window of a page target
// waits for.
func (h *Hub) targetWindowClosedLocked(w *Window) {
	for _, n := range append([]*navigation(nil), h.navigations...) {
		if n.w == w {
			h.dropNavigationLocked(n)
		}
	}
}

// AddNewDocumentScript keeps a Page.addScriptToEvaluateOnNewDocument
// source for w and answers its identifier. It runs in every later load
// of the page, as the page's agent connects (after the page's own
// synchronous scripts: the agent cannot run before them); runImmediately
// also runs it in the current load. A script for a named world makes that
// world in each later load (pageworld.go) and runs in it: the page's own.
func (h *Hub) AddNewDocumentScript(w *Window, req Request) {
	var p struct {
		Source         string `json:"source"`
		WorldName      string `json:"worldName"`
		RunImmediately bool   `json:"runImmediately"`
	}
	_ = json.Unmarshal(req.Params, &p)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextNewDoc++
	id := strconv.FormatUint(h.nextNewDoc, 10)
	f := h.frames[w.client.target]
	if p.WorldName != "" {
		// The world is made in each later load (pageworld.go); with
		// runImmediately in this one too. It is the page's own world, so
		// the script runs there like the others.
		added := addWorldLocked(w, p.WorldName)
		if p.RunImmediately && f != nil && f.ctx != nil {
			a := h.worldLocked(f.ctx, p.WorldName)
			if added && w.client.runtimeEnabled {
				h.queueLocked(w, h.worldCreated(f.ctx, a))
			}
		}
	}
	w.client.newDoc = append(w.client.newDoc, newDocScript{id: id, source: p.Source})
	if p.RunImmediately && f != nil && f.ctx != nil {
		if err := h.evalLocked(w, f.ctx, req.Method, guarded(p.Source), nil); err != nil {
			h.host.Logf("page target %s: a new-document script was not run now: %v", f.id, err)
		}
	}
	w.enqueue(appendResult(nil, req.ID, []byte(`{"identifier":`+strconv.Quote(id)+`}`)))
}

// RemoveNewDocumentScript answers Page.removeScriptToEvaluateOnNewDocument.
func (h *Hub) RemoveNewDocumentScript(w *Window, req Request) {
	var p struct {
		Identifier string `json:"identifier"`
	}
	_ = json.Unmarshal(req.Params, &p)
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, sc := range w.client.newDoc {
		if sc.id == p.Identifier {
			w.client.newDoc = append(w.client.newDoc[:i], w.client.newDoc[i+1:]...)
			break
		}
	}
	w.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
}

// DiscardConsoleObjects answers for Runtime.discardConsoleEntries on a
// page target: the window's console objects are released in the page. The
// page's replay buffer is the combined target's too, and stays.
func (h *Hub) DiscardConsoleObjects(w *Window) { h.discardConsoleFor(w) }
