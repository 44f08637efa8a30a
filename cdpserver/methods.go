package cdpserver

import (
	"sort"
	"strings"

	"github.com/inspector-worker/inspector-worker/hostrealm"
	"github.com/inspector-worker/inspector-worker/pagerealm"
)

// This file is the ONE place that says how the worker answers each method it
// knows (docs/agent-note.md "Relay rules": one method table).
// dispatch.handle looks a request up here once and acts on the
// entry's kind; /json/protocol (protocol.go) and the table test
// (scaffold_test.go) are generated from the same table, so they cannot drift
// from what the worker does.
//
// A method the table does not list goes by its domain: a domain Node serves
// (nodeDomains) is routed like the table's routed entries, anything else is
// -32601 "'<method>' wasn't found", as Chrome and Node say.

// answerKind says who answers a method.
type answerKind uint8

const (
	// answerLocal: the worker answers from its own state (the page-target
	// scaffold, page.go, and package pagerealm through backend.go).
	answerLocal answerKind = iota + 1
	// answerNoop: a named no-op. The frontend sends it on attach or on a UI
	// action and needs a well-formed answer; the answer is a fixed literal.
	answerNoop
	// answerRefusal: a method the worker knows and does not support,
	// answered with -32000 and a reason (the frontend stays quiet for
	// -32000, where -32601 would make it log "Request failed").
	answerRefusal
	// answerRouted: the realm that owns the request's context, object or
	// script id answers it (see realmKey, pageRule); the host
	// realm's answer is relayed from the window's Node session.
	answerRouted
)

// realmKey says how a routed method finds the realm that answers it: the
// ids in its params that name a realm. A method naming none goes to the
// host. It is a property of the domain (nodeDomains), because the ids that
// name a realm are; an entry may narrow it.
type realmKey uint8

const (
	// keyContextID: executionContextId / contextId (Runtime).
	keyContextID realmKey = 1 << iota
	// keyUniqueContextID: uniqueContextId (Runtime).
	keyUniqueContextID
	// keyObjectID: objectId / promiseObjectId — the window's object table
	// says whose it is (Session.realmFor); V8 ids are the host's.
	keyObjectID
	// keyScriptID: a client script id ("c<n>"), or a client script's URL
	// (Debugger): answered by the client hub (pagerealm.Hub.ScriptRequest);
	// anything else is the host's.
	keyScriptID
	// keyCallFrameID: call frames are the host's: client pages never pause.
	keyCallFrameID
	// keySessionID: a flat child session (a worker thread, threads.go). A
	// request carrying a sessionId goes to that thread before the table is
	// asked for a route (dispatch.go): the thread is a Node realm of its
	// own and answers every method itself, by the host's column — the
	// entry's hostParams apply (threadParams), the pages' column and the
	// hooks (which act on the window's pages) do not; an unknown sessionId
	// is -32001.
	keySessionID
)

// byContext are the keys of the Runtime domain.
const byContext = keyContextID | keyUniqueContextID | keyObjectID

// pageRule is a method's column for page realms; the page backend
// defines it (pagerealm.Rule) and holds the handlers it names.
type pageRule = pagerealm.Rule

// The answers of the pages' column (pagerealm.Answer).
const (
	pageAbsent     = pagerealm.AnswerAbsent     // the domain's rule applies
	pageHost       = pagerealm.AnswerHost       // never reaches a page: the host answers
	pageAgent      = pagerealm.AnswerAgent      // the page agent, by the entry's Runtime handler
	pageScriptRead = pagerealm.AnswerScriptRead // the script's source, read from the page
	pageLiteral    = pagerealm.AnswerLiteral    // a fixed answer
	pageRefusal    = pagerealm.AnswerRefusal    // -32000 with the reason, in the realm's words
)

// watchRule says whether `run --watch` records a method in the window's
// Node session and replays it into the next host (hostrealm.WatchState).
type watchRule = hostrealm.WatchRule

const (
	watchNo         = hostrealm.WatchNo
	watchEnable     = hostrealm.WatchEnable     // an enable or disable; the replay enables what is on
	watchSetting    = hostrealm.WatchSetting    // last params replayed after the enables, in watchOrder
	watchBreakpoint = hostrealm.WatchBreakpoint // a breakpoint set or removed; replayed by URL
)

// domainRule is how a domain Node serves is routed, and what a page does
// with its methods that have no page rule of their own.
type domainRule struct {
	keys realmKey
	page pageRule
}

// nodeDomains are the domains Node's inspector serves, with the way their
// requests are routed. Node answers unknown methods in them with its own
// -32601.
var nodeDomains = map[string]domainRule{
	// A Runtime method the page's agent has no handler for is refused by
	// runtimeCommand, naming those it has.
	"Runtime": {keys: byContext, page: pageRule{Answer: pageAgent}},
	// Client scripts are read, never debugged; a method that names none
	// goes to the host.
	"Debugger":     {keys: keyScriptID | keyCallFrameID, page: pageRule{Answer: pageHost}},
	"Profiler":     {},
	"HeapProfiler": {},
	"Console":      {},
	"Schema":       {},
	"NodeRuntime":  {},
	"NodeTracing":  {},
	"NodeWorker":   {},
}

// clientReadOnly is why client scripts cannot be debugged: page JavaScript
// cannot pause its own realm and keep serving the worker's control messages.
const clientReadOnly = "client scripts are read-only: a page cannot pause its own JavaScript and still answer the worker"

// methodEntry is how one method is answered. Which fields mean something
// depends on kind; the constructors below set exactly those. kind is the
// host's column and, for every kind but answerRouted, the pages' too (the
// page-target scaffold answers for all of them); page is the pages' column
// of a routed method.
type methodEntry struct {
	kind answerKind

	result string                  // answerNoop: the literal answer
	reason string                  // answerRefusal: the -32000 message
	local  func(*Session, request) // answerLocal: answers req exactly once

	// answerRouted only:
	keys realmKey // filled in by lookupMethod from nodeDomains unless set
	page pageRule // pages' column; pageAbsent takes the domain's
	// watch says whether --watch replays it; watchOrder orders the
	// replayed settings.
	watch      watchRule
	watchOrder int
	// note says, for docs/methods.md, what the worker does beside the
	// realm's answer (the hooks below).
	note string
	// before runs before the request is routed, for state the worker keeps
	// beside the realm (the realm still answers).
	before func(*Session, request)
	// hostParams rewrites the params of a request relayed to the host.
	hostParams func(params []byte) []byte
	// hook runs on the host's successful answer, before that answer is
	// queued, so what it enqueues reaches the window first.
	hook func(*Session, string)
	// after runs on the host's successful answer once that answer is
	// queued: for work the answer must not wait behind (a replay).
	after func(*Session)

	// target is the page-target column: what a session on one page's own
	// target gets (pagetarget_dispatch.go). Its zero value takes the
	// combined target's answer where that is right for one page too
	// (targetEntryOf).
	target targetRule
}

// targetRule is a method's answer on a page target when it differs from
// the combined target's: kind answerLocal (local), answerNoop (result) or
// answerRefusal (reason).
type targetRule struct {
	kind   answerKind
	result string
	reason string
	local  func(*Session, request)
}

// onTarget sets e's page-target column.
func (e methodEntry) onTarget(t targetRule) methodEntry { e.target = t; return e }

func tLocal(f func(*Session, request)) targetRule { return targetRule{kind: answerLocal, local: f} }
func tNoop(result string) targetRule              { return targetRule{kind: answerNoop, result: result} }
func tRefusal(reason string) targetRule           { return targetRule{kind: answerRefusal, reason: reason} }

// targetEntryOf returns how a page target's session answers method (ok
// false: -32601). The table's page-target column decides where it is set;
// otherwise:
//   - a named no-op, a refusal and a local answer are the combined
//     target's (the local answers are the page backend's and the Network
//     domain's, which show a page target's window its page alone);
//   - a Runtime method goes to the page by the pages' column: a page
//     target has no host;
//   - any other Node domain (Debugger, Profiler, HeapProfiler …) is
//     refused: the page cannot pause or profile itself for the worker.
func targetEntryOf(method string) (methodEntry, bool) {
	e, ok := lookupMethod(method)
	if !ok {
		return e, false
	}
	if t := e.target; t.kind != 0 {
		return methodEntry{kind: t.kind, result: t.result, reason: t.reason, local: t.local, page: e.page}, true
	}
	if e.kind != answerRouted {
		return e, true
	}
	domain, _, _ := strings.Cut(method, ".")
	if domain == "Runtime" {
		return e, true
	}
	return methodEntry{kind: answerRefusal, reason: notOnPageTarget(domain)}, true
}

// The page target's refusals of what only a browser's own debugger does.
var (
	noPixels       = jsAgentCannot("capture the page's pixels")
	noTrustedInput = jsAgentCannot("send trusted input events (events a script dispatches have isTrusted false)")
	noMetrics      = jsAgentCannot("change the browser's device metrics (viewport size, scale factor)")
)

// noDOMUndo is DOM.undo's and DOM.redo's refusal.
const noDOMUndo = "not served: inspector-worker keeps no undo history of DOM edits in the pages " +
	"(edits apply at once, as made; undo one by editing it back)"

// pageDOM is a DOM method answered by the page backend: from the host
// document the worker shows, or by the page that owns the node
// (pagerealm/dom.go).
func pageDOM(d pagerealm.DOM) methodEntry {
	return local(func(s *Session, req request) { s.srv.clients.DOMRequest(s.page, toPage(req), d) })
}

func noop(result string) methodEntry { return methodEntry{kind: answerNoop, result: result} }

func refusal(reason string) methodEntry { return methodEntry{kind: answerRefusal, reason: reason} }

func local(f func(*Session, request)) methodEntry { return methodEntry{kind: answerLocal, local: f} }

// routed is a Node-domain method the worker does more than relay: it names
// the pages' column, the --watch rule and the hooks; the routing comes from
// the domain.
func routed(e methodEntry) methodEntry { e.kind = answerRouted; return e }

// inPage is a page column answered by the page's agent.
func inPage(rt *pagerealm.Runtime) pageRule { return pageRule{Answer: pageAgent, Runtime: rt} }

// pageReads is a page column answered from a client script's source, read
// from the page.
func pageReads(s *pagerealm.Script) pageRule { return pageRule{Answer: pageScriptRead, Script: s} }

// pageRefuses is a page column that refuses with reason.
func pageRefuses(reason string) pageRule { return pageRule{Answer: pageRefusal, Reason: reason} }

// lookupMethod returns how method is answered. ok is false for -32601.
func lookupMethod(method string) (e methodEntry, ok bool) {
	domain, _, _ := strings.Cut(method, ".")
	d, nodeServes := nodeDomains[domain]
	e, ok = methods[method]
	switch {
	case ok && e.kind == answerRouted:
		// TestMethodTableShape: routed entries are all in nodeDomains.
		if e.keys == 0 {
			e.keys = d.keys
		}
		if e.page.Answer == pageAbsent {
			e.page = d.page
		}
	case !ok && nodeServes:
		e, ok = methodEntry{kind: answerRouted, keys: d.keys, page: d.page}, true
	}
	return e, ok
}

// pageRuleOf is the pages' column of method: what a page realm does with
// it when the method's realm key names a page.
func pageRuleOf(method string) pageRule {
	e, ok := lookupMethod(method)
	if !ok || e.kind != answerRouted {
		return pageRule{Answer: pageHost}
	}
	return e.page
}

// threadLiteral is the threads' column: a request in a thread's session
// that the worker answers itself, with the answer. A thread answers the
// domains Node serves; of the others, the frontend sends a worker target
// the enables and settings a page's worker takes (Log, Network, Emulation
// …): the table's named no-ops answer them with their literal, as on the
// page. Target.setAutoAttach is {} there: a thread's own threads are
// attached in the window's session, beside it (Node 20 reports every
// thread to the main thread's NodeWorker; a thread has no NodeWorker). Everything else goes to the thread, which answers -32601
// for what it does not know.
func threadLiteral(method string) (result string, ok bool) {
	domain, _, _ := strings.Cut(method, ".")
	if _, nodeServes := nodeDomains[domain]; nodeServes {
		return "", false
	}
	if method == "Target.setAutoAttach" {
		return `{}`, true
	}
	if e := methods[method]; e.kind == answerNoop {
		return e.result, true
	}
	return "", false
}

// pageAgentMethods lists the methods the page agent serves (pageAgent with
// a handler), for the refusal of the others.
func pageAgentMethods() []string {
	var served []string
	for _, m := range sortedMethods() {
		if e := methods[m]; e.kind == answerRouted && e.page.Answer == pageAgent && e.page.Runtime != nil {
			served = append(served, m)
		}
	}
	return served
}

func init() {
	for _, m := range sortedMethods() {
		if e := methods[m]; e.watch == watchSetting {
			watchedSettings = append(watchedSettings, m)
		}
	}
	sort.SliceStable(watchedSettings, func(i, j int) bool {
		return methods[watchedSettings[i]].watchOrder < methods[watchedSettings[j]].watchOrder
	})
	watchTable.Settings = watchedSettings
}

// watchedSettings are the table's watchSetting methods in watchOrder: the
// order --watch replays them in.
var watchedSettings []string

// watchTable is the table's watch column as hostrealm.WatchState reads it.
var watchTable = &hostrealm.WatchTable{
	Rule:     func(method string) hostrealm.WatchRule { return methods[method].watch },
	Settings: nil, // watchedSettings, once init has sorted them
}

// sortedMethods lists the table's methods in order.
func sortedMethods() []string {
	out := make([]string, 0, len(methods))
	for m := range methods {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// readOnly refuses a debugging method on a client script, in the Console
// too: an error alone makes the gutter marker vanish without a word.
var readOnly = pageRule{Answer: pageRefusal, Reason: clientReadOnly, Tell: true}

// methods is the table. A Go map literal refuses duplicate keys, so each
// method has exactly one entry.
var methods = map[string]methodEntry{
	// The page-target scaffold: the worker is one page whose main frame is
	// the host and whose child frames are the client pages.
	"Page.enable":          local(pageEnable),
	"Page.disable":         local(pageDisable),
	"Page.getResourceTree": local(pageResourceTree).onTarget(tLocal(targetResourceTree)),
	"Page.getFrameTree":    local(pageFrameTree).onTarget(tLocal(targetFrameTree)),
	// A page's document, read from the page (pagerealm/document.go).
	"Page.getResourceContent": local(pageGetResourceContent),
	"Target.getTargetInfo":    local(targetGetInfo).onTarget(tLocal(targetInfoAnswer)),

	// The pages' DOM in one tree (pagerealm/dom.go): the host document
	// holds one frame owner per page, with the page's document.
	"DOM.enable":                          pageDOM(pagerealm.DOMEnable),
	"DOM.disable":                         pageDOM(pagerealm.DOMDisable),
	"DOM.getDocument":                     pageDOM(pagerealm.GetDocument),
	"DOM.requestChildNodes":               pageDOM(pagerealm.RequestChildNodes),
	"DOM.describeNode":                    pageDOM(pagerealm.DescribeNode),
	"DOM.resolveNode":                     pageDOM(pagerealm.ResolveNode),
	"DOM.requestNode":                     pageDOM(pagerealm.RequestNode),
	"DOM.pushNodesByBackendIdsToFrontend": pageDOM(pagerealm.PushNodesByBackendIDs),
	"DOM.getOuterHTML":                    pageDOM(pagerealm.GetOuterHTML),
	"DOM.setAttributeValue":               pageDOM(pagerealm.SetAttributeValue),
	"DOM.setAttributesAsText":             pageDOM(pagerealm.SetAttributesAsText),
	"DOM.removeAttribute":                 pageDOM(pagerealm.RemoveAttribute),
	"DOM.setNodeValue":                    pageDOM(pagerealm.SetNodeValue),
	"DOM.removeNode":                      pageDOM(pagerealm.RemoveNode),
	"DOM.setOuterHTML":                    pageDOM(pagerealm.SetOuterHTML),
	"DOM.getFrameOwner":                   pageDOM(pagerealm.GetFrameOwner),
	"DOM.getBoxModel":                     pageDOM(pagerealm.GetBoxModel),
	"DOM.setInspectedNode":                pageDOM(pagerealm.SetInspectedNode),
	"Overlay.highlightNode":               pageDOM(pagerealm.HighlightNode),
	"Overlay.hideHighlight":               pageDOM(pagerealm.HideHighlight),
	"Overlay.highlightRect":               pageDOM(pagerealm.HighlightRect),
	"Overlay.setInspectMode":              pageDOM(pagerealm.SetInspectMode),
	"DOM.performSearch":                   local(domPerformSearch),
	"DOM.getSearchResults":                local(domGetSearchResults),
	"DOM.discardSearchResults":            local(domDiscardSearchResults),
	// Renaming, drag and drop, copy in the tree; hit test by point; the
	// Styles pane's class toggles (pagerealm/dom_place.go).
	"DOM.setNodeName":                  pageDOM(pagerealm.SetNodeName),
	"DOM.moveTo":                       pageDOM(pagerealm.MoveTo),
	"DOM.copyTo":                       pageDOM(pagerealm.CopyTo),
	"DOM.getNodeForLocation":           pageDOM(pagerealm.GetNodeForLocation),
	"DOM.collectClassNamesFromSubtree": pageDOM(pagerealm.CollectClassNamesFromSubtree),
	// The Elements panel's undo stack: marks are acknowledged, and Ctrl-Z
	// is refused with its reason (docs/agent-note.md "Elements": no undo
	// history is kept in the pages).
	"DOM.markUndoableState": noop(`{}`),
	"DOM.undo":              refusal(noDOMUndo),
	"DOM.redo":              refusal(noDOMUndo),
	// The Elements panel's Event Listeners pane, for a page's node or
	// window by objectId (pagerealm/listeners.go); the pane's "Remove" is
	// a Runtime.callFunctionOn in the page.
	"DOMDebugger.getEventListeners": pageDOM(pagerealm.GetEventListeners),

	// Node's domains, where the worker also acts or a page answers. Every
	// other method of nodeDomains is routed by its domain's rule.
	"Runtime.enable": routed(methodEntry{after: runtimeEnabled, watch: watchEnable,
		note: "then the pages' contexts and console replay follow the answer"}).onTarget(tLocal(targetRuntimeEnable)),
	"Runtime.disable": routed(methodEntry{hook: clientFlagOff, watch: watchEnable,
		note: "the pages' console stops for the window"}).onTarget(tLocal(targetRuntimeDisable)),
	"Runtime.discardConsoleEntries": routed(methodEntry{before: discardClientConsole, // the host discards its own
		note: "the pages' console replay is forgotten first"}).onTarget(tLocal(targetDiscardConsole)),
	// Names no object, so it goes to the host; the window's page objects
	// of that group are released in their pages first.
	"Runtime.releaseObjectGroup": routed(methodEntry{before: releaseClientGroup,
		note: "the window's page objects of the group are released in their pages first"}).onTarget(tLocal(targetReleaseGroup)),
	"Runtime.setAsyncCallStackDepth": routed(methodEntry{watch: watchSetting, watchOrder: 6}),
	// The page agent's Runtime (pagerealm/runtime_wire.go).
	"Runtime.evaluate":                routed(methodEntry{page: inPage(pagerealm.Evaluate)}),
	"Runtime.getProperties":           routed(methodEntry{page: inPage(pagerealm.GetProperties)}),
	"Runtime.callFunctionOn":          routed(methodEntry{page: inPage(pagerealm.CallFunctionOn)}),
	"Runtime.awaitPromise":            routed(methodEntry{page: inPage(pagerealm.AwaitPromise)}),
	"Runtime.releaseObject":           routed(methodEntry{page: inPage(pagerealm.ReleaseObject)}),
	"Runtime.globalLexicalScopeNames": routed(methodEntry{page: inPage(pagerealm.GlobalLexicalScopeNames)}),
	"Runtime.compileScript":           routed(methodEntry{page: inPage(pagerealm.CompileScript)}),
	"Runtime.runScript": routed(methodEntry{page: pageRefuses("the client agent evaluates source text directly: " +
		"compiled scripts are not kept (Runtime.compileScript checks syntax only)")}),

	"Debugger.enable": routed(methodEntry{hook: debuggerEnabled, watch: watchEnable,
		note: "the pages' scripts are announced before the answer"}),
	"Debugger.disable": routed(methodEntry{hook: clientFlagOff, watch: watchEnable,
		note: "the pages' scripts stop for the window"}),
	// Node names CommonJS scripts by path and ES modules by URL: a file://
	// url becomes a urlRegex matching both (hostrealm/rewrite.go).
	"Debugger.setBreakpointByUrl": routed(methodEntry{hostParams: hostrealm.MapBreakpointURL, watch: watchBreakpoint,
		page: readOnly, note: "a file:// url matches the script by path and by URL"}),
	"Debugger.setBreakpoint":       routed(methodEntry{watch: watchBreakpoint, page: readOnly}),
	"Debugger.removeBreakpoint":    routed(methodEntry{watch: watchBreakpoint}),
	"Debugger.continueToLocation":  routed(methodEntry{page: readOnly}),
	"Debugger.searchInContent":     routed(methodEntry{page: pageReads(pagerealm.SearchInContent)}),
	"Debugger.evaluateOnCallFrame": routed(methodEntry{page: pageRefuses(clientReadOnly)}),
	"Debugger.setScriptSource":     routed(methodEntry{page: pageRefuses(clientReadOnly)}),
	// Client scripts are read from their page (pagerealm/scripts.go).
	"Debugger.getScriptSource":        routed(methodEntry{page: pageReads(pagerealm.GetScriptSource)}),
	"Debugger.getPossibleBreakpoints": routed(methodEntry{page: pageRule{Answer: pageLiteral, Result: `{"locations":[]}`}}),
	"Debugger.setBlackboxedRanges":    routed(methodEntry{page: pageRule{Answer: pageLiteral, Result: `{}`}}),
	// Settings --watch replays, in watchOrder, after the enables.
	"Debugger.setPauseOnExceptions":   routed(methodEntry{watch: watchSetting, watchOrder: 1}),
	"Debugger.setAsyncCallStackDepth": routed(methodEntry{watch: watchSetting, watchOrder: 2}),
	"Debugger.setBlackboxPatterns":    routed(methodEntry{watch: watchSetting, watchOrder: 3}),
	"Debugger.setBreakpointsActive":   routed(methodEntry{watch: watchSetting, watchOrder: 4}),
	"Debugger.setSkipAllPauses":       routed(methodEntry{watch: watchSetting, watchOrder: 5}),

	"Profiler.enable":  routed(methodEntry{watch: watchEnable}),
	"Profiler.disable": routed(methodEntry{watch: watchEnable}),

	// Named no-ops. Page (the scaffold proper is local, above).
	"Page.setAdBlockingEnabled":      noop(`{}`),
	"Page.bringToFront":              noop(`{}`),
	"Page.setLifecycleEventsEnabled": noop(`{}`).onTarget(tLocal(targetLifecycle)),
	"Page.getManifestIcons":          noop(`{}`),
	"Page.getAppId":                  noop(`{}`),
	"Page.getInstallabilityErrors":   noop(`{"installabilityErrors":[]}`),
	"Page.getAppManifest":            noop(`{"url":"","errors":[]}`),
	"Page.setBypassCSP":              noop(`{}`),
	"Page.stopLoading":               noop(`{}`),
	"Page.setFontFamilies":           noop(`{}`),
	"Page.setFontSizes":              noop(`{}`),
	"Page.getNavigationHistory":      noop(`{"currentIndex":0,"entries":[]}`),

	// Overlay: highlightNode and hideHighlight draw in the pages (above);
	// the rest has nothing to draw yet.
	"Overlay.enable":                        noop(`{}`),
	"Overlay.disable":                       noop(`{}`),
	"Overlay.setPausedInDebuggerMessage":    noop(`{}`),
	"Overlay.setShowViewportSizeOnResize":   noop(`{}`),
	"Overlay.highlightFrame":                noop(`{}`),
	"Overlay.setShowGridOverlays":           noop(`{}`),
	"Overlay.setShowFlexOverlays":           noop(`{}`),
	"Overlay.setShowScrollSnapOverlays":     noop(`{}`),
	"Overlay.setShowContainerQueryOverlays": noop(`{}`),
	"Overlay.setShowIsolatedElements":       noop(`{}`),
	"Overlay.setShowDisplayCutout":          noop(`{}`),
	"Overlay.setShowHinge":                  noop(`{}`),

	// Emulation: nothing to emulate.
	"Emulation.setFocusEmulationEnabled":    noop(`{}`),
	"Emulation.setEmulatedMedia":            noop(`{}`),
	"Emulation.setAutoDarkModeOverride":     noop(`{}`),
	"Emulation.setEmulatedVisionDeficiency": noop(`{}`),
	"Emulation.setTouchEmulationEnabled":    noop(`{}`),
	"Emulation.setEmitTouchEventsForMouse":  noop(`{}`),

	// Log: host and client console messages arrive through Runtime.
	"Log.enable":                noop(`{}`),
	"Log.disable":               noop(`{}`),
	"Log.clear":                 noop(`{}`),
	"Log.startViolationsReport": noop(`{}`),
	"Log.stopViolationsReport":  noop(`{}`),

	// Domains with nothing to report on a synthetic page.
	"Inspector.enable":                      noop(`{}`),
	"Audits.enable":                         noop(`{}`),
	"ServiceWorker.enable":                  noop(`{}`),
	"Database.enable":                       noop(`{}`),
	"DOMStorage.enable":                     noop(`{}`),
	"IndexedDB.enable":                      noop(`{}`),
	"Autofill.enable":                       noop(`{}`),
	"Autofill.setAddresses":                 noop(`{}`),
	"Preload.enable":                        noop(`{}`),
	"CSS.enable":                            noop(`{}`),
	"Animation.enable":                      noop(`{}`),
	"BackgroundService.startObserving":      noop(`{}`),
	"Debugger.setBlackboxExecutionContexts": noop(`{}`),

	// Target: the worker is one page target; with flatten, the host's
	// worker threads are its children (threads.go).
	"Target.setAutoAttach":      local(targetSetAutoAttach).onTarget(tNoop(`{}`)), // a page target attaches nothing
	"Target.setDiscoverTargets": noop(`{}`),
	"Target.setRemoteLocations": noop(`{}`),

	// Network: the fetch journal's domain (network.go, package network).
	"Network.enable":             local(networkEnable),
	"Network.disable":            local(networkDisable),
	"Network.getResponseBody":    local(networkGetResponseBody),
	"Network.getRequestPostData": local(networkGetRequestPostData),
	// Network settings: the capture observes the app's own requests and
	// changes none of them, so these have nothing to apply to.
	"Network.setAttachDebugStack":            noop(`{}`),
	"Network.clearAcceptedEncodingsOverride": noop(`{}`),
	"Network.setCacheDisabled":               noop(`{}`),
	"Network.setBlockedURLs":                 noop(`{}`),
	"Network.setExtraHTTPHeaders":            noop(`{}`),
	"Network.setBypassServiceWorker":         noop(`{}`),
	"Network.overrideNetworkState":           noop(`{}`),
	"Network.emulateNetworkConditionsByRule": noop(`{"ruleIds":[]}`), // {} throws inside the frontend
	"Network.setCookieControls":              noop(`{}`),

	// Storage tracking: no storage partitions to track.
	"Storage.trackCacheStorageForOrigin":       noop(`{}`),
	"Storage.untrackCacheStorageForOrigin":     noop(`{}`),
	"Storage.trackIndexedDBForOrigin":          noop(`{}`),
	"Storage.untrackIndexedDBForOrigin":        noop(`{}`),
	"Storage.trackCacheStorageForStorageKey":   noop(`{}`),
	"Storage.untrackCacheStorageForStorageKey": noop(`{}`),
	"Storage.trackIndexedDBForStorageKey":      noop(`{}`),
	"Storage.untrackIndexedDBForStorageKey":    noop(`{}`),
	"Storage.setInterestGroupTracking":         noop(`{}`),
	"Storage.setInterestGroupAuctionTracking":  noop(`{}`),
	"Storage.setSharedStorageTracking":         noop(`{}`),
	"Storage.setStorageBucketTracking":         noop(`{}`),
	// Deliberate refusals: each answer says why.
	"DOM.getNodesForSubtreeByStyle": refusal("no DOM: this target is a Node.js host"),
	// The Elements panel's sidebar and $0 for a page's node: not served
	// yet; -32000 keeps the frontend's own console quiet.
	"CSS.getComputedStyleForNode":          pageDOM(pagerealm.GetComputedStyleForNode),
	"CSS.getMatchedStylesForNode":          pageDOM(pagerealm.GetMatchedStylesForNode),
	"CSS.getInlineStylesForNode":           pageDOM(pagerealm.GetInlineStylesForNode),
	"CSS.getStyleSheetText":                pageDOM(pagerealm.GetStyleSheetText),
	"CSS.getEnvironmentVariables":          noop(`{"environmentVariables":{}}`),
	"CSS.getBackgroundColors":              pageDOM(pagerealm.GetBackgroundColors),
	"CSS.setStyleTexts":                    pageDOM(pagerealm.SetStyleTexts),
	"CSS.createStyleSheet":                 pageDOM(pagerealm.CreateStyleSheet),
	"CSS.addRule":                          pageDOM(pagerealm.AddRule),
	"CSS.forcePseudoState":                 pageDOM(pagerealm.ForcePseudoState),
	"CSS.getPlatformFontsForNode":          pageDOM(pagerealm.GetPlatformFontsForNode),
	"CSS.setRuleSelector":                  pageDOM(pagerealm.SetRuleSelector),
	"CSS.setMediaText":                     pageDOM(pagerealm.SetMediaText),
	"CSS.setSupportsText":                  pageDOM(pagerealm.SetSupportsText),
	"CSS.takeComputedStyleUpdates":         refusal("no CSS: this target is a Node.js host"),
	"CSS.trackComputedStyleUpdates":        refusal("no CSS: this target is a Node.js host"),
	"CSS.trackComputedStyleUpdatesForNode": refusal("no CSS: this target is a Node.js host"),
	// Browser clients (Puppeteer, Playwright) register a utility script on
	// every page they attach to, and give up on a page that refuses it.
	// On the combined target the script would run in the host's next
	// document, and the host never loads one: accepting it is the whole
	// of what there is to do there.
	"Page.addScriptToEvaluateOnNewDocument": noop(`{"identifier":"1"}`).onTarget(tLocal(targetAddNewDocScript)),
	"Page.reload":                           refusal("the host cannot be reloaded from DevTools: restart inspector-worker run").onTarget(tLocal(targetReload)),
	"Page.navigate":                         refusal("the host cannot navigate").onTarget(tLocal(targetNavigate)),
	"Page.captureScreenshot":                refusal("there is no page to capture").onTarget(tRefusal(noPixels)),
	"Page.startScreencast":                  refusal("there is no page to capture").onTarget(tRefusal(noPixels)),
	"Page.stopScreencast":                   refusal("there is no page to capture").onTarget(tRefusal(noPixels)),
	"Page.getLayoutMetrics":                 refusal("there is no page layout").onTarget(tRefusal(jsAgentCannot("read the browser's viewport metrics"))),
	"Storage.getStorageKey":                 refusal("no storage partitions on a Node.js host"),
	"Storage.getStorageKeyForFrame":         refusal("no storage partitions on a Node.js host"),
	"Network.loadNetworkResource":           refusal("the worker does not load resources for the frontend; it fetches source maps itself"),
	"Network.getCookies":                    refusal("no cookies on a Node.js host").onTarget(tRefusal(jsAgentCannot("read the browser's cookie store"))),
	"Tracing.start":                         refusal("tracing is not supported; use the Performance panel's Node profile (Profiler)"),
	"Input.dispatchKeyEvent":                refusal("there is no page to send input to").onTarget(tRefusal(noTrustedInput)),
	"Input.dispatchMouseEvent":              refusal("there is no page to send input to").onTarget(tRefusal(noTrustedInput)),
	"Emulation.setDeviceMetricsOverride":    refusal("there is no page to emulate").onTarget(tRefusal(noMetrics)),
	"Emulation.clearDeviceMetricsOverride":  refusal("there is no page to emulate").onTarget(tRefusal(noMetrics)),
	// As the browser target answers it (browser_target.go): Chrome
	// answers it in every session.
	"Browser.getVersion": local(func(s *Session, req request) { s.enqueue(appendResult(nil, req.ID, s.srv.versionAnswer())) }),
	"SystemInfo.getInfo": refusal("no system information on a page target"),

	// Page targets (pagetarget.go): methods browser-style clients send a
	// page, new to the table; on the combined target the host has none.
	"Page.removeScriptToEvaluateOnNewDocument": noop(`{}`).onTarget(tLocal(targetRemoveNewDocScript)),
	"Page.createIsolatedWorld":                 refusal("the host is not a browser page: it has no isolated worlds").onTarget(tLocal(targetCreateWorld)),
	"Page.printToPDF":                          refusal("there is no page to print").onTarget(tRefusal(jsAgentCannot("print the page"))),
	"Input.dispatchTouchEvent":                 refusal("there is no page to send input to").onTarget(tRefusal(noTrustedInput)),
	"Input.insertText":                         refusal("there is no page to send input to").onTarget(tRefusal(noTrustedInput)),
	// Acknowledged: clients enable it on attach; there are no metrics to
	// report (Performance.getMetrics is not served).
	"Performance.enable":  noop(`{}`),
	"Performance.disable": noop(`{}`),
	// Clients send it on every attach; a page never waits for a debugger.
	"Runtime.runIfWaitingForDebugger": routed(methodEntry{}).onTarget(tNoop(`{}`)),
}
