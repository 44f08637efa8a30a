package cdpserver

import "strings"

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
	// scaffold, page.go and clients_session.go).
	answerLocal answerKind = iota + 1
	// answerNoop: a named no-op. The frontend sends it on attach or on a UI
	// action and needs a well-formed answer; the answer is a fixed literal.
	answerNoop
	// answerRefusal: a method the worker knows and does not support,
	// answered with -32000 and a reason (the frontend stays quiet for
	// -32000, where -32601 would make it log "Request failed").
	answerRefusal
	// answerRouted: the realm that owns the request's context, object or
	// script id answers it (see routeKind); the host
	// realm's answer is relayed from the window's Node session.
	answerRouted
)

// routeKind says how a routed method finds its realm. It is a property of
// the domain (nodeDomains), because the ids that name a realm are.
type routeKind uint8

const (
	// routeHost: always the Node host (Profiler, HeapProfiler, Console …).
	routeHost routeKind = iota
	// routeByContext: Runtime — by objectId, uniqueContextId or
	// executionContextId/contextId (Session.realmFor); no id means the host.
	routeByContext
	// routeByScript: Debugger — a client script id ("c<n>") or a client
	// script's URL is answered by the client hub (clientScriptRequest);
	// anything else (V8 script ids, call-frame ids, breakpoint ids) belongs
	// to the host, since client pages never pause.
	routeByScript
)

// nodeDomains are the domains Node's inspector serves, with the way their
// requests are routed. Node answers unknown methods in them with its own
// -32601.
var nodeDomains = map[string]routeKind{
	"Runtime":      routeByContext,
	"Debugger":     routeByScript,
	"Profiler":     routeHost,
	"HeapProfiler": routeHost,
	"Console":      routeHost,
	"Schema":       routeHost,
	"NodeRuntime":  routeHost,
	"NodeTracing":  routeHost,
	"NodeWorker":   routeHost,
}

// methodEntry is how one method is answered. Which fields mean something
// depends on kind; the constructors below set exactly those.
type methodEntry struct {
	kind answerKind

	result string                  // answerNoop: the literal answer
	reason string                  // answerRefusal: the -32000 message
	local  func(*Session, request) // answerLocal: answers req exactly once

	// answerRouted only:
	route routeKind // filled in by lookupMethod from nodeDomains
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
}

func noop(result string) methodEntry { return methodEntry{kind: answerNoop, result: result} }

func refusal(reason string) methodEntry { return methodEntry{kind: answerRefusal, reason: reason} }

func local(f func(*Session, request)) methodEntry { return methodEntry{kind: answerLocal, local: f} }

// routed is a Node-domain method the worker does more than relay: it names
// the hooks; the routing comes from the domain.
func routed(e methodEntry) methodEntry { e.kind = answerRouted; return e }

// lookupMethod returns how method is answered. ok is false for -32601.
func lookupMethod(method string) (e methodEntry, ok bool) {
	domain, _, _ := strings.Cut(method, ".")
	route, nodeServes := nodeDomains[domain]
	e, ok = methods[method]
	switch {
	case ok && e.kind == answerRouted:
		e.route = route // TestMethodTableShape: routed entries are all in nodeDomains
	case !ok && nodeServes:
		e, ok = methodEntry{kind: answerRouted, route: route}, true
	}
	return e, ok
}

// methods is the table. A Go map literal refuses duplicate keys, so each
// method has exactly one entry.
var methods = map[string]methodEntry{
	// The page-target scaffold: the worker is one page whose main frame is
	// the host and whose child frames are the client pages.
	"Page.enable":          local(pageEnable),
	"Page.disable":         local(pageDisable),
	"Page.getResourceTree": local(pageResourceTree),
	"Page.getFrameTree":    local(pageFrameTree),
	// A page's document, read from the page (clients_document.go).
	"Page.getResourceContent": local(pageGetResourceContent),
	"Target.getTargetInfo":    local(targetGetInfo),

	// Node's domains, where the worker also acts. Every other method of
	// nodeDomains is routed without extras.
	"Runtime.enable":                routed(methodEntry{after: runtimeEnabled}),
	"Runtime.disable":               routed(methodEntry{hook: clientFlagOff}),
	"Runtime.discardConsoleEntries": routed(methodEntry{before: discardClientConsole}), // the host discards its own
	// Names no object, so it goes to the host; the window's page objects
	// of that group are released in their pages first.
	"Runtime.releaseObjectGroup": routed(methodEntry{before: releaseClientGroup}),
	"Debugger.enable":            routed(methodEntry{hook: debuggerEnabled}),
	"Debugger.disable":           routed(methodEntry{hook: clientFlagOff}),
	// Node names CommonJS scripts by path and ES modules by URL: a file://
	// url becomes a urlRegex matching both (rewrite.go).
	"Debugger.setBreakpointByUrl": routed(methodEntry{hostParams: mapBreakpointURL}),
	// Answered by the client hub for client scripts (clientScriptRequest).
	"Debugger.getScriptSource":        routed(methodEntry{}),
	"Debugger.getPossibleBreakpoints": routed(methodEntry{}),
	"Debugger.setBlackboxedRanges":    routed(methodEntry{}),
	"Debugger.setBreakpoint":          routed(methodEntry{}),
	"Debugger.continueToLocation":     routed(methodEntry{}),
	"Debugger.searchInContent":        routed(methodEntry{}),

	// Named no-ops. Page (the scaffold proper is local, above).
	"Page.setAdBlockingEnabled":      noop(`{}`),
	"Page.bringToFront":              noop(`{}`),
	"Page.setLifecycleEventsEnabled": noop(`{}`),
	"Page.getManifestIcons":          noop(`{}`),
	"Page.getAppId":                  noop(`{}`),
	"Page.getInstallabilityErrors":   noop(`{"installabilityErrors":[]}`),
	"Page.getAppManifest":            noop(`{"url":"","errors":[]}`),
	"Page.setBypassCSP":              noop(`{}`),
	"Page.stopLoading":               noop(`{}`),
	"Page.setFontFamilies":           noop(`{}`),
	"Page.setFontSizes":              noop(`{}`),
	"Page.getNavigationHistory":      noop(`{"currentIndex":0,"entries":[]}`),

	// Overlay: there is no page to draw on.
	"Overlay.enable":                        noop(`{}`),
	"Overlay.disable":                       noop(`{}`),
	"Overlay.setPausedInDebuggerMessage":    noop(`{}`),
	"Overlay.setShowViewportSizeOnResize":   noop(`{}`),
	"Overlay.highlightNode":                 noop(`{}`),
	"Overlay.hideHighlight":                 noop(`{}`),
	"Overlay.highlightFrame":                noop(`{}`),
	"Overlay.setInspectMode":                noop(`{}`),
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
	"DOM.enable":                            noop(`{}`),
	"CSS.enable":                            noop(`{}`),
	"Animation.enable":                      noop(`{}`),
	"BackgroundService.startObserving":      noop(`{}`),
	"Debugger.setBlackboxExecutionContexts": noop(`{}`),

	// Target: the worker is one target with no children.
	"Target.setAutoAttach":      noop(`{}`),
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
	"DOM.getDocument":                       refusal("no DOM: this target is a Node.js host (client DOM inspection is not supported yet)"),
	"DOM.getFrameOwner":                     refusal("no DOM: this target is a Node.js host"),
	"DOM.getNodesForSubtreeByStyle":         refusal("no DOM: this target is a Node.js host"),
	"DOM.describeNode":                      refusal("no DOM: this target is a Node.js host"),
	"DOM.resolveNode":                       refusal("no DOM: this target is a Node.js host"),
	"CSS.takeComputedStyleUpdates":          refusal("no CSS: this target is a Node.js host"),
	"CSS.trackComputedStyleUpdates":         refusal("no CSS: this target is a Node.js host"),
	"CSS.trackComputedStyleUpdatesForNode":  refusal("no CSS: this target is a Node.js host"),
	"Page.addScriptToEvaluateOnNewDocument": refusal("the host is not a browser page: there is no new document to evaluate in"),
	"Page.reload":                           refusal("the host cannot be reloaded from DevTools: restart inspector-worker run"),
	"Page.navigate":                         refusal("the host cannot navigate"),
	"Page.captureScreenshot":                refusal("there is no page to capture"),
	"Page.startScreencast":                  refusal("there is no page to capture"),
	"Page.stopScreencast":                   refusal("there is no page to capture"),
	"Page.getLayoutMetrics":                 refusal("there is no page layout"),
	"Storage.getStorageKey":                 refusal("no storage partitions on a Node.js host"),
	"Storage.getStorageKeyForFrame":         refusal("no storage partitions on a Node.js host"),
	"Network.loadNetworkResource":           refusal("the worker does not load resources for the frontend; it fetches source maps itself"),
	"Network.getCookies":                    refusal("no cookies on a Node.js host"),
	"Tracing.start":                         refusal("tracing is not supported; use the Performance panel's Node profile (Profiler)"),
	"Input.dispatchKeyEvent":                refusal("there is no page to send input to"),
	"Input.dispatchMouseEvent":              refusal("there is no page to send input to"),
	"Emulation.setDeviceMetricsOverride":    refusal("there is no page to emulate"),
	"Emulation.clearDeviceMetricsOverride":  refusal("there is no page to emulate"),
	"Browser.getVersion":                    refusal("no browser target: inspector-worker serves one page target"),
	"SystemInfo.getInfo":                    refusal("no system information on a page target"),
}
