package pagerealm

import (
	"encoding/json"
	"fmt"
	"time"
)

// Page.getResourceContent: Sources lists each page's document as "(index)"
// (the frame's Document resource) and asks for its text when it is opened.
// The page reads it with the same script.read as a script (client.js: from
// the browser's cache, or its current DOM, marked as such, when the cache
// has no copy) and the answer is {content, base64Encoded:false}. The host
// frame has no document (its URL is the script's directory, listed as an
// Other resource that Sources leaves out): asking for it is refused with the
// reason.

// GetResourceContent answers Page.getResourceContent.
func (h *Hub) GetResourceContent(s *Window, req Request) {
	var p struct {
		FrameID string `json:"frameId"`
		URL     string `json:"url"`
	}
	if len(req.Params) > 0 {
		_ = json.Unmarshal(req.Params, &p)
	}
	h.mu.Lock()
	rs, why := h.documentReadLocked(s, req, p.FrameID, p.URL)
	h.mu.Unlock()
	if rs != nil {
		h.sendRead(rs)
		return
	}
	s.refuse(req, &wireError{codeServerError, why})
}

// documentReadLocked registers the read of a page's document, or says why
// there is none.
func (h *Hub) documentReadLocked(s *Window, req request, frameID, url string) (*readStart, string) {
	if frameID == h.targetID {
		return nil, "the host frame has no document: the host's scripts are listed under file:// in Sources"
	}
	var f *clientFrame
	for _, cf := range h.frames {
		if cf.id == frameID {
			f = cf
		}
	}
	switch {
	case f == nil || !s.client.sees(f):
		return nil, fmt.Sprintf("no frame %q: the page has gone", frameID)
	case url != f.url:
		return nil, fmt.Sprintf("%s is not the document of %s; page resources other than its document and scripts are not read", url, f.displayName())
	case f.ctx == nil:
		return nil, fmt.Sprintf("%s is reloading or gone: open it again once it is back", f.displayName())
	case h.reg == nil:
		return nil, "client reads are not connected in this worker"
	}
	h.nextRead++
	id := h.nextRead
	r := &scriptRead{ref: f.ctx.ref, sess: s, reqID: req.ID, field: "content"}
	r.timer = time.AfterFunc(scriptReadTimeout, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.reads.finish(id, nil, fmt.Sprintf("the page did not send %s within %v", url, scriptReadTimeout))
	})
	h.reads[id] = r
	return &readStart{reg: h.reg, id: id, ref: f.ctx.ref, url: url}, ""
}
