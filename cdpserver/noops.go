package cdpserver

// This file is the ONE place that lists what the worker answers for methods it
// does not implement. Three kinds:
//
//   - named no-ops: the frontend sends them on attach or on UI actions and
//     needs a well-formed answer; the answer is the shape listed here;
//   - deliberate refusals: methods we know and do not support yet, answered
//     with -32000 and a reason (the frontend stays quiet for -32000);
//   - everything else: -32601 "'<method>' wasn't found", as Chrome and Node say.
//
// noops_test.go covers every entry of both tables.

// namedNoops maps a method to its literal answer.
var namedNoops = map[string]string{
	// Page (the scaffold proper lives in page.go).
	"Page.disable":                   `{}`,
	"Page.setAdBlockingEnabled":      `{}`,
	"Page.bringToFront":              `{}`,
	"Page.setLifecycleEventsEnabled": `{}`,
	"Page.getManifestIcons":          `{}`,
	"Page.getAppId":                  `{}`,
	"Page.getInstallabilityErrors":   `{"installabilityErrors":[]}`,
	"Page.getAppManifest":            `{"url":"","errors":[]}`,
	"Page.setBypassCSP":              `{}`,
	"Page.stopLoading":               `{}`,
	"Page.setFontFamilies":           `{}`,
	"Page.setFontSizes":              `{}`,
	"Page.getNavigationHistory":      `{"currentIndex":0,"entries":[]}`,

	// Overlay: there is no page to draw on.
	"Overlay.enable":                        `{}`,
	"Overlay.disable":                       `{}`,
	"Overlay.setPausedInDebuggerMessage":    `{}`,
	"Overlay.setShowViewportSizeOnResize":   `{}`,
	"Overlay.highlightNode":                 `{}`,
	"Overlay.hideHighlight":                 `{}`,
	"Overlay.highlightFrame":                `{}`,
	"Overlay.setInspectMode":                `{}`,
	"Overlay.setShowGridOverlays":           `{}`,
	"Overlay.setShowFlexOverlays":           `{}`,
	"Overlay.setShowScrollSnapOverlays":     `{}`,
	"Overlay.setShowContainerQueryOverlays": `{}`,
	"Overlay.setShowIsolatedElements":       `{}`,
	"Overlay.setShowDisplayCutout":          `{}`,
	"Overlay.setShowHinge":                  `{}`,

	// Emulation: nothing to emulate.
	"Emulation.setFocusEmulationEnabled":    `{}`,
	"Emulation.setEmulatedMedia":            `{}`,
	"Emulation.setAutoDarkModeOverride":     `{}`,
	"Emulation.setEmulatedVisionDeficiency": `{}`,
	"Emulation.setTouchEmulationEnabled":    `{}`,
	"Emulation.setEmitTouchEventsForMouse":  `{}`,

	// Log: host and client console messages arrive through Runtime.
	"Log.enable":                `{}`,
	"Log.disable":               `{}`,
	"Log.clear":                 `{}`,
	"Log.startViolationsReport": `{}`,
	"Log.stopViolationsReport":  `{}`,

	// Domains with nothing to report on a synthetic page.
	"Inspector.enable":                      `{}`,
	"Audits.enable":                         `{}`,
	"ServiceWorker.enable":                  `{}`,
	"Database.enable":                       `{}`,
	"DOMStorage.enable":                     `{}`,
	"IndexedDB.enable":                      `{}`,
	"Autofill.enable":                       `{}`,
	"Autofill.setAddresses":                 `{}`,
	"Preload.enable":                        `{}`,
	"DOM.enable":                            `{}`,
	"CSS.enable":                            `{}`,
	"Animation.enable":                      `{}`,
	"BackgroundService.startObserving":      `{}`,
	"Debugger.setBlackboxExecutionContexts": `{}`,

	// Target: the worker is one target with no children.
	"Target.setAutoAttach":      `{}`,
	"Target.setDiscoverTargets": `{}`,
	"Target.setRemoteLocations": `{}`,

	// Network: the host's fetch capture arrives with package network; until
	// then there is no traffic and these settings have nothing to apply to.
	"Network.enable":                         `{}`,
	"Network.disable":                        `{}`,
	"Network.setAttachDebugStack":            `{}`,
	"Network.clearAcceptedEncodingsOverride": `{}`,
	"Network.setCacheDisabled":               `{}`,
	"Network.setBlockedURLs":                 `{}`,
	"Network.setExtraHTTPHeaders":            `{}`,
	"Network.setBypassServiceWorker":         `{}`,
	"Network.overrideNetworkState":           `{}`,
	"Network.emulateNetworkConditionsByRule": `{"ruleIds":[]}`, // {} throws inside the frontend
	"Network.setCookieControls":              `{}`,

	// Storage tracking: no storage partitions to track.
	"Storage.trackCacheStorageForOrigin":       `{}`,
	"Storage.untrackCacheStorageForOrigin":     `{}`,
	"Storage.trackIndexedDBForOrigin":          `{}`,
	"Storage.untrackIndexedDBForOrigin":        `{}`,
	"Storage.trackCacheStorageForStorageKey":   `{}`,
	"Storage.untrackCacheStorageForStorageKey": `{}`,
	"Storage.trackIndexedDBForStorageKey":      `{}`,
	"Storage.untrackIndexedDBForStorageKey":    `{}`,
	"Storage.setInterestGroupTracking":         `{}`,
	"Storage.setInterestGroupAuctionTracking":  `{}`,
	"Storage.setSharedStorageTracking":         `{}`,
	"Storage.setStorageBucketTracking":         `{}`,
}

// deliberateRefusals are methods the frontend sends that the worker knows
// and does not support; each answer says why, with -32000 so the frontend
// does not log "Request failed" into its own console.
var deliberateRefusals = map[string]string{
	"DOM.getDocument":                       "no DOM: this target is a Node.js host (client DOM inspection is not supported yet)",
	"DOM.getFrameOwner":                     "no DOM: this target is a Node.js host",
	"DOM.getNodesForSubtreeByStyle":         "no DOM: this target is a Node.js host",
	"DOM.describeNode":                      "no DOM: this target is a Node.js host",
	"DOM.resolveNode":                       "no DOM: this target is a Node.js host",
	"CSS.takeComputedStyleUpdates":          "no CSS: this target is a Node.js host",
	"CSS.trackComputedStyleUpdates":         "no CSS: this target is a Node.js host",
	"CSS.trackComputedStyleUpdatesForNode":  "no CSS: this target is a Node.js host",
	"Page.addScriptToEvaluateOnNewDocument": "the host is not a browser page: there is no new document to evaluate in",
	"Page.reload":                           "the host cannot be reloaded from DevTools: restart inspector-worker run",
	"Page.navigate":                         "the host cannot navigate",
	"Page.captureScreenshot":                "there is no page to capture",
	"Page.startScreencast":                  "there is no page to capture",
	"Page.stopScreencast":                   "there is no page to capture",
	"Page.getLayoutMetrics":                 "there is no page layout",
	"Storage.getStorageKey":                 "no storage partitions on a Node.js host",
	"Storage.getStorageKeyForFrame":         "no storage partitions on a Node.js host",
	"Network.getResponseBody":               "no network capture yet: the host's fetch capture is not implemented",
	"Network.getRequestPostData":            "no network capture yet: the host's fetch capture is not implemented",
	"Network.loadNetworkResource":           "the worker does not load resources for the frontend; it fetches source maps itself",
	"Network.getCookies":                    "no cookies on a Node.js host",
	"Tracing.start":                         "tracing is not supported; use the Performance panel's Node profile (Profiler)",
	"Input.dispatchKeyEvent":                "there is no page to send input to",
	"Input.dispatchMouseEvent":              "there is no page to send input to",
	"Emulation.setDeviceMetricsOverride":    "there is no page to emulate",
	"Emulation.clearDeviceMetricsOverride":  "there is no page to emulate",
	"Browser.getVersion":                    "no browser target: inspector-worker serves one page target",
	"SystemInfo.getInfo":                    "no system information on a page target",
}

// hostDomains are relayed to the host's inspector session: Node serves them
// natively and answers unknown methods in them with its own -32601.
var hostDomains = map[string]bool{
	"Runtime":      true,
	"Debugger":     true,
	"Profiler":     true,
	"HeapProfiler": true,
	"Console":      true,
	"Schema":       true,
	"NodeRuntime":  true,
	"NodeTracing":  true,
	"NodeWorker":   true,
}
