package cdpserver

import (
	"encoding/json"
	"strings"
	"sync"
)

// maxHostScripts bounds the URL → scriptId map of the host's scripts; past
// it new scripts are not recorded (their fetches' Initiator column stays
// unlinked) rather than the map growing with an app that evaluates code in
// a loop.
const maxHostScripts = 65536

// hostScripts maps the URLs of the host's scripts, as windows see them
// (file:// for paths, rewriteFileURLs), to their V8 scriptIds, learned from
// the Debugger.scriptParsed events relayed to windows. The Network domain
// uses it to link a fetch's initiator frames. mu is a leaf lock.
type hostScripts struct {
	mu  sync.Mutex        // Lock order: see docs/locks.md.
	ids map[string]string // Guarded by mu.
}

// note records a scriptParsed event's script.
func (h *hostScripts) note(msg []byte) {
	var ev struct {
		Params struct {
			ScriptID string `json:"scriptId"`
			URL      string `json:"url"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &ev) != nil || ev.Params.ScriptID == "" || ev.Params.URL == "" {
		return
	}
	u := hostFileURL(ev.Params.URL)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ids == nil {
		h.ids = map[string]string{}
	}
	if _, ok := h.ids[u]; ok || len(h.ids) < maxHostScripts {
		h.ids[u] = ev.Params.ScriptID
	}
}

// reset forgets every script (the host process was replaced).
func (h *hostScripts) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids = nil
}

// id is the scriptId of the host script at u, or "".
func (h *hostScripts) id(u string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ids[hostFileURL(u)]
}

// hostFileURL is the file:// form of a host path, as windows see it
// (rewriteFileURLs).
func hostFileURL(u string) string {
	if strings.HasPrefix(u, "/") {
		return pathToFileURL(u)
	}
	return u
}
