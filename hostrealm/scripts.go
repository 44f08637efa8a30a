package hostrealm

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

// Scripts maps the URLs of the host's scripts, as windows see them
// (file:// for paths, RewriteFileURLs), to their V8 scriptIds, learned from
// the Debugger.scriptParsed events relayed to windows. The Network domain
// uses it to link a fetch's initiator frames. mu is a leaf lock. The zero
// value is empty and ready.
type Scripts struct {
	mu  sync.Mutex        // Lock order: see docs/locks.md.
	ids map[string]string // Guarded by mu.
}

// Note records a scriptParsed event's script.
func (h *Scripts) Note(msg []byte) {
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

// Reset forgets every script (the host process was replaced).
func (h *Scripts) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids = nil
}

// ID is the scriptId of the host script at u, or "".
func (h *Scripts) ID(u string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ids[hostFileURL(u)]
}

// hostFileURL is the file:// form of a host path, as windows see it
// (RewriteFileURLs).
func hostFileURL(u string) string {
	if strings.HasPrefix(u, "/") {
		return pathToFileURL(u)
	}
	return u
}
