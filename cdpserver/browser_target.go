package cdpserver

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdptarget "github.com/chromedp/cdproto/target"

	"github.com/inspector-worker/inspector-worker/cdpproject"
)

// targetInfo is a target as the Target domain describes it.
type targetInfo = cdptarget.Info

// targetProvider is a source of targets on the browser endpoint
// (browser.go): the combined target (the host and every page, as a window
// sees them), and each connected page on its own (pagetarget.go). The
// endpoint's list of providers is fixed at construction
// (newBrowserEndpoint); a new kind of target is one more provider there.
//
//   - targets lists the provider's targets now, Attached left false (each
//     connection says whether it has a session on one). It must not block
//     nor call into the browser endpoint: connection goroutines call it,
//     holding no lock.
//   - changed returns a channel closed at the provider's next change (a
//     target appears, is renamed, navigates, ends), taken before targets
//     is read so no change is missed; nil if the list never changes.
//     Discovering clients are told, auto-attaching ones attached.
//   - attach opens a Session on targetID whose client is t (transport.go;
//     on the browser endpoint a flatSession, which stamps its sessionId on
//     what the Session sends and feeds it the requests sent with it). The
//     Session must be registered with the server the way a window is
//     (MaxWindows and Shutdown apply) and not yet running: the connection
//     runs it and removes it when it ends. An error's text is sent to the
//     client as the reason.
type targetProvider interface {
	targets() []targetInfo
	changed() <-chan struct{}
	attach(targetID string, t transport) (*Session, error)
}

// attachDialTimeout bounds the Node dial of a flat session's Session. A
// loopback connect to Node's inspector thread takes milliseconds, even with
// the host paused; the bound only matters for a host that hangs.
const attachDialTimeout = 10 * time.Second

// pageTargets provides each connected page as its own target
// (pagetarget.go): its sessions see that page alone.
type pageTargets struct{ s *Server }

func (p pageTargets) targets() []targetInfo {
	pts := p.s.pageTargets()
	out := make([]targetInfo, 0, len(pts))
	for _, pt := range pts {
		out = append(out, targetInfo{TargetID: cdptarget.ID(pt.ID), Type: "page", Title: pt.Title, URL: pt.URL,
			BrowserContextID: cdp.BrowserContextID(p.s.browser.contextID)})
	}
	return out
}

func (p pageTargets) changed() <-chan struct{} { return p.s.pageTargetsChanged() }

func (p pageTargets) attach(targetID string, t transport) (*Session, error) {
	return p.s.openPageSession(targetID, func(sess *Session) { sess.tr = t })
}

// combinedTarget provides the combined target: the page target a window
// opens at /devtools/page/<id>, with the same id.
type combinedTarget struct{ s *Server }

func (p combinedTarget) targets() []targetInfo {
	return []targetInfo{{TargetID: cdptarget.ID(p.s.targetID), Type: "page", Title: p.s.hostInfo.Title,
		URL: p.s.hostInfo.URL, BrowserContextID: cdp.BrowserContextID(p.s.browser.contextID)}}
}

func (p combinedTarget) changed() <-chan struct{} { return nil } // the host's title and URL stay

func (p combinedTarget) attach(targetID string, t transport) (*Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), attachDialTimeout)
	defer cancel()
	host, batch, gen, _, reason := p.s.dialWindow(ctx)
	if host == nil {
		return nil, errors.New(reason)
	}
	sess, closing := p.s.registerWindow(ctx, gen, t, nil, nil, host, batch)
	if sess == nil {
		return nil, errors.New(closing)
	}
	return sess, nil
}

// targetFilter is Target.TargetFilter: the first entry whose type matches
// (or that names none) decides; no match excludes.
type targetFilter []cdptarget.FilterEntry

// defaultTargetFilter is Chrome's when a request names none.
var defaultTargetFilter = targetFilter{{Type: "browser", Exclude: true}, {Type: "tab", Exclude: true}, {}}

func (f targetFilter) allows(typ string) bool {
	for _, e := range f {
		if e.Type == "" || e.Type == typ {
			return !e.Exclude
		}
	}
	return false
}

// orDefault is f, or Chrome's default when the request named none.
func (f targetFilter) orDefault() targetFilter {
	if f == nil {
		return defaultTargetFilter
	}
	return f
}

// autoAttaches says whether setAutoAttach's filter takes a target of typ.
// A page is always taken: Puppeteer and chrome-devtools-mcp send
// [{type: "page", exclude: true}, {}] because in Chrome they attach each
// tab target and the page inside it from the tab's session. The worker has
// no tab targets; its pages are what those clients are after, and
// excluding them left Puppeteer with no pages at all.
func (f targetFilter) autoAttaches(typ string) bool {
	return typ == "page" || f.orDefault().allows(typ)
}

// browserTargetInfo describes the browser target itself.
func (b *browserEndpoint) browserTargetInfo() targetInfo {
	return targetInfo{TargetID: cdptarget.ID(b.id), Type: "browser", Attached: true}
}

// browserEntry is how the browser target answers one method: the browser
// target's column of the method table (methods.go has the page targets').
// A session-less request on a browser connection whose method is not here
// goes to the combined target.
type browserEntry struct {
	kind   answerKind
	result string                      // answerNoop
	reason string                      // answerRefusal
	local  func(*browserConn, request) // answerLocal: answers exactly once
}

func browserLocal(f func(*browserConn, request)) browserEntry {
	return browserEntry{kind: answerLocal, local: f}
}

// noTabs is why the worker opens and closes no tabs.
const noTabs = "inspector-worker cannot open or close tabs of the user's browser: its targets are the Node host " +
	"and the pages that connect to it (open a page of the app in a browser and it appears as a target)"

// browserMethods is the browser target's table. A Go map literal refuses
// duplicate keys, so each method has exactly one entry.
var browserMethods = map[string]browserEntry{
	"Browser.getVersion": browserLocal(browserGetVersion),
	"Browser.close": {kind: answerRefusal, reason: "inspector-worker does not stop the app or the user's browser: " +
		"close this connection instead (that never stops the app)"},
	"Browser.getWindowForTarget": {kind: answerRefusal, reason: "the worker's targets have no browser window it controls"},
	// The worker's targets never download anything a client could observe
	// or steer: there is nothing to apply the behaviour to, and no
	// downloadWillBegin ever follows.
	"Browser.setDownloadBehavior": {kind: answerNoop, result: `{}`},

	"Target.getBrowserContexts":    browserLocal(targetGetBrowserContexts),
	"Target.setDiscoverTargets":    browserLocal(targetSetDiscover),
	"Target.getTargets":            browserLocal(targetGetTargets),
	"Target.getTargetInfo":         browserLocal(targetGetTargetInfo),
	"Target.attachToTarget":        browserLocal(targetAttach),
	"Target.attachToBrowserTarget": browserLocal(targetAttachBrowser),
	"Target.setAutoAttach":         browserLocal(targetBrowserAutoAttach),
	"Target.detachFromTarget":      browserLocal(targetDetach),
	"Target.setRemoteLocations":    {kind: answerNoop, result: `{}`},
	"Target.createTarget":          {kind: answerRefusal, reason: noTabs},
	"Target.closeTarget":           {kind: answerRefusal, reason: noTabs},
	"Target.activateTarget":        {kind: answerRefusal, reason: "inspector-worker cannot bring the user's tabs to front"},
	"Target.createBrowserContext": {kind: answerRefusal, reason: "inspector-worker has one browser context, the user's: " +
		"it cannot make others"},
	"Target.disposeBrowserContext": {kind: answerRefusal, reason: "inspector-worker has one browser context, the user's: " +
		"it cannot dispose of it"},
	"Target.sendMessageToTarget": {kind: answerRefusal, reason: "sessions are flat: attach with flatten: true and send " +
		"the message with its sessionId"},
}

// answerBrowser answers a browser target's method.
func (c *browserConn) answerBrowser(e browserEntry, req request) {
	switch e.kind {
	case answerLocal:
		e.local(c, req)
	case answerNoop:
		c.reply(req, []byte(e.result))
	case answerRefusal:
		c.refuse(req, &wireError{codeServerError, e.reason})
	}
}

func (c *browserConn) reply(req request, result []byte) {
	msg := appendResult(nil, req.ID, result)
	if req.SessionID != "" {
		msg = withSessionID(msg, req.SessionID)
	}
	c.send(msg)
}

func (c *browserConn) refuse(req request, e *wireError) {
	c.b.srv.logf("browser connection %d: refused %s: %s", c.id, req.Method, e.Message)
	c.send(appendError(nil, req.ID, req.SessionID, e))
}

// params decodes req's params into v, or refuses req and returns false.
func (c *browserConn) params(req request, v any) bool {
	if req.Params == nil {
		return true
	}
	if err := json.Unmarshal(req.Params, v); err != nil {
		c.refuse(req, &wireError{codeInvalidParams, req.Method + ": " + err.Error()})
		return false
	}
	return true
}

func browserGetVersion(c *browserConn, req request) { c.reply(req, c.b.srv.versionAnswer()) }

// versionAnswer is Browser.getVersion's result.
func (s *Server) versionAnswer() []byte {
	return mustJSON(struct {
		ProtocolVersion string `json:"protocolVersion"`
		Product         string `json:"product"`
		Revision        string `json:"revision"`
		UserAgent       string `json:"userAgent"`
		JSVersion       string `json:"jsVersion"`
	}{protocolVersion, "inspector-worker/" + Version, "", s.userAgent(), ""})
}

func targetGetBrowserContexts(c *browserConn, req request) {
	// The default context is not in browserContextIds, as in Chrome (it
	// lists only contexts made with createBrowserContext); Puppeteer would
	// otherwise take it for a second context. The array is always there:
	// Puppeteer maps over it.
	c.reply(req, mustJSON(struct {
		IDs     []string `json:"browserContextIds"`
		Default string   `json:"defaultBrowserContextId"`
	}{[]string{}, c.b.contextID}))
}

// visibleTargets lists the targets a filter shows, with the browser target
// when the filter asks for it, and Attached as this connection sees it.
func (c *browserConn) visibleTargets(f targetFilter) []targetInfo {
	all := append([]targetInfo{c.b.browserTargetInfo()}, c.b.allTargets()...)
	out := all[:0]
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range all {
		if f.orDefault().allows(t.Type) {
			if t.Type != "browser" {
				t.Attached = c.attachedLocked(string(t.TargetID))
			}
			out = append(out, t)
		}
	}
	return out
}

// attachedLocked says whether the connection has a session on targetID.
func (c *browserConn) attachedLocked(targetID string) bool {
	for _, f := range c.sessions {
		if f.targetID == targetID {
			return true
		}
	}
	return false
}

func targetGetTargets(c *browserConn, req request) {
	var p struct {
		Filter targetFilter `json:"filter"`
	}
	if !c.params(req, &p) {
		return
	}
	c.reply(req, mustJSON(struct {
		Infos []targetInfo `json:"targetInfos"`
	}{c.visibleTargets(p.Filter)}))
}

func targetGetTargetInfo(c *browserConn, req request) {
	var p struct {
		TargetID string `json:"targetId"`
	}
	if !c.params(req, &p) {
		return
	}
	info := c.b.browserTargetInfo()
	if p.TargetID != "" && p.TargetID != c.b.id {
		var ok bool
		if _, info, ok = c.b.providerOf(p.TargetID); !ok {
			c.refuse(req, &wireError{codeInvalidParams, "No target with given id found"})
			return
		}
		c.mu.Lock()
		info.Attached = c.attachedLocked(p.TargetID)
		c.mu.Unlock()
	}
	c.reply(req, mustJSON(struct {
		Info targetInfo `json:"targetInfo"`
	}{info}))
}

// targetSetDiscover answers Target.setDiscoverTargets: targetCreated for
// each target there is, before the answer (Puppeteer counts the targets it
// waits for from them); changes follow from targetLoop.
func targetSetDiscover(c *browserConn, req request) {
	var p struct {
		Discover bool         `json:"discover"`
		Filter   targetFilter `json:"filter"`
	}
	if !c.params(req, &p) {
		return
	}
	c.targetMu.Lock()
	defer c.targetMu.Unlock()
	c.mu.Lock()
	c.discover, c.discoverF = p.Discover, p.Filter
	if !p.Discover {
		clear(c.told)
	}
	c.mu.Unlock()
	if p.Discover {
		c.reportTargets()
	}
	c.reply(req, []byte(`{}`))
}

// targetAttach answers Target.attachToTarget: attachedToTarget, then the
// answer, as Chrome orders them.
func targetAttach(c *browserConn, req request) {
	var p struct {
		TargetID string `json:"targetId"`
		Flatten  bool   `json:"flatten"`
	}
	if !c.params(req, &p) {
		return
	}
	if !p.Flatten {
		c.refuse(req, &wireError{codeServerError, "only flat sessions are served: attach with flatten: true " +
			"(Target.sendMessageToTarget is not)"})
		return
	}
	if p.TargetID == c.b.id {
		targetAttachBrowser(c, req)
		return
	}
	f, reason := c.attach(p.TargetID, false)
	if f == nil {
		c.refuse(req, &wireError{codeServerError, "cannot attach to target " + p.TargetID + ": " + reason})
		return
	}
	c.announce(f)
	c.reply(req, mustJSON(struct {
		SessionID string `json:"sessionId"`
	}{f.id}))
}

// announce sends Target.attachedToTarget for a new flat session.
func (c *browserConn) announce(f *flatSession) {
	info := c.b.browserTargetInfo()
	if !f.browser {
		var ok bool
		if _, info, ok = c.b.providerOf(f.targetID); !ok {
			info = targetInfo{TargetID: cdptarget.ID(f.targetID), Type: "page"}
		}
	}
	info.Attached = true
	c.send(cdpproject.Event("Target.attachedToTarget", &cdptarget.EventAttachedToTarget{
		SessionID: cdptarget.SessionID(f.id), TargetInfo: &info}))
}

func detachedEvent(sessionID, targetID string) []byte {
	return cdpproject.Event("Target.detachedFromTarget", struct {
		SessionID string `json:"sessionId"`
		TargetID  string `json:"targetId"`
	}{sessionID, targetID})
}

// targetAttachBrowser answers Target.attachToBrowserTarget: a flat session
// whose requests the browser target answers, with its sessionId.
func targetAttachBrowser(c *browserConn, req request) {
	f := &flatSession{c: c, id: newTargetID(), targetID: c.b.id, browser: true, gone: make(chan struct{})}
	c.mu.Lock()
	c.sessions[f.id] = f
	c.mu.Unlock()
	c.announce(f)
	c.reply(req, mustJSON(struct {
		SessionID string `json:"sessionId"`
	}{f.id}))
}

// targetDetach answers Target.detachFromTarget. The session's end is told
// by Target.detachedFromTarget once it has stopped (runFlat); a browser
// session has nothing running and is told at once.
func targetDetach(c *browserConn, req request) {
	var p struct {
		SessionID string `json:"sessionId"`
		TargetID  string `json:"targetId"`
	}
	if !c.params(req, &p) {
		return
	}
	c.mu.Lock()
	var f *flatSession
	for _, s := range c.sessions {
		if s.id != "" && (s.id == p.SessionID || p.SessionID == "" && s.targetID == p.TargetID) {
			f = s
			break
		}
	}
	if f != nil && f.browser {
		delete(c.sessions, f.id)
	}
	c.mu.Unlock()
	if f == nil {
		c.refuse(req, &wireError{codeInvalidParams, "No session with given id"})
		return
	}
	f.detach()
	if f.browser {
		c.send(detachedEvent(f.id, f.targetID))
	}
	c.reply(req, []byte(`{}`))
}

// targetBrowserAutoAttach answers the browser target's Target.setAutoAttach:
// every target the filter takes is attached (attachedToTarget each) before
// the answer, and new ones as they come (targetLoop). waitForDebuggerOnStart
// is answered waitingForDebugger: false — nothing the worker attaches waits.
func targetBrowserAutoAttach(c *browserConn, req request) {
	var p struct {
		AutoAttach bool         `json:"autoAttach"`
		Flatten    bool         `json:"flatten"`
		Filter     targetFilter `json:"filter"`
	}
	if !c.params(req, &p) {
		return
	}
	if p.AutoAttach && !p.Flatten {
		c.refuse(req, &wireError{codeServerError, "Only flatten protocol is supported with browser level auto-attach"})
		return
	}
	c.targetMu.Lock()
	defer c.targetMu.Unlock()
	c.mu.Lock()
	c.autoAttach, c.autoF = p.AutoAttach, p.Filter
	c.mu.Unlock()
	if p.AutoAttach {
		c.autoAttachNew()
	}
	c.reply(req, []byte(`{}`))
}

// autoAttachNew (under targetMu) attaches each target the auto-attach filter takes that was
// not auto-attached yet (a target the client detached stays detached).
func (c *browserConn) autoAttachNew() {
	targets := c.b.allTargets()
	var todo []string
	c.mu.Lock()
	if c.autoAttach {
		if c.autoDone == nil {
			c.autoDone = map[string]bool{}
		}
		for _, t := range targets {
			id := string(t.TargetID)
			if !c.autoDone[id] && c.autoF.autoAttaches(t.Type) {
				c.autoDone[id] = true
				todo = append(todo, id)
			}
		}
	}
	c.mu.Unlock()
	for _, id := range todo {
		f, reason := c.attach(id, false)
		if f == nil {
			c.b.srv.logf("browser connection %d: cannot auto-attach %s: %s", c.id, id, reason)
			continue
		}
		c.announce(f)
	}
}

// reportTargets (under targetMu) tells a discovering client what changed since it was last
// told: targetCreated, targetInfoChanged, targetDestroyed.
func (c *browserConn) reportTargets() {
	c.mu.Lock()
	f := c.discoverF
	on := c.discover
	c.mu.Unlock()
	if !on {
		return
	}
	now := c.visibleTargets(f)
	var events [][]byte
	c.mu.Lock()
	seen := make(map[string]bool, len(now))
	for _, t := range now {
		id := string(t.TargetID)
		seen[id] = true
		old, known := c.told[id]
		switch {
		case !known:
			events = append(events, cdpproject.Event("Target.targetCreated", &cdptarget.EventTargetCreated{TargetInfo: &t}))
		case old.Title != t.Title || old.URL != t.URL || old.Type != t.Type:
			events = append(events, cdpproject.Event("Target.targetInfoChanged", &cdptarget.EventTargetInfoChanged{TargetInfo: &t}))
		}
		c.told[id] = t
	}
	for id := range c.told {
		if !seen[id] {
			delete(c.told, id)
			delete(c.autoDone, id)
			events = append(events, cdpproject.Event("Target.targetDestroyed", &cdptarget.EventTargetDestroyed{TargetID: cdptarget.ID(id)}))
		}
	}
	c.mu.Unlock()
	for _, e := range events {
		c.send(e)
	}
}

// targetLoop follows the providers' changes for this connection: each
// round takes the providers' change channels first, then reports and
// auto-attaches, then waits for one of them.
func (c *browserConn) targetLoop() {
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c.done)}}
	for {
		cases = cases[:1]
		for _, p := range c.b.providers {
			if ch := p.changed(); ch != nil {
				cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
			}
		}
		c.targetMu.Lock()
		c.reportTargets()
		c.autoAttachNew()
		c.targetMu.Unlock()
		if chosen, _, _ := reflect.Select(cases); chosen == 0 {
			return
		}
	}
}

// mustJSON encodes one of the browser target's own answers, which always
// encode: a failure is a bug that must show (dispatch answers it -32603).
func mustJSON(v any) []byte {
	b, err := cdpproject.Marshal(v)
	if err != nil {
		panic("cdpserver: encoding " + err.Error())
	}
	return b
}
