package pagerealm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/chromedp/cdproto/cdp"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// DOM.performSearch over every page in a window's document (Ctrl-F in
// Elements): each page searches its own DOM (client/js/dom.mjs: a CSS
// selector, an XPath, or text in tag names, attributes and texts) and
// keeps its nodes for the window; the worker answers the total once every
// page has answered, failed or run out of time (the Runtime's deadline),
// and maps a result index to the page that holds it. One page's failure
// leaves its part empty: a search is never answered twice or not at all.

// maxSearchesPerWindow bounds the searches a window keeps (the frontend
// discards each when the query changes; a window that does not is still
// bounded): the oldest is forgotten.
const maxSearchesPerWindow = 16

// domSearch is one window's search. Guarded by Hub.mu.
type domSearch struct {
	id      string
	parts   []searchPart // in the document's page order
	pending int          // pages that have not answered yet
	answer  func(total int64)
}

type searchPart struct {
	ctx   *clientContext
	ns    uint64
	count int64
}

type searchParams struct {
	Query     string `json:"query"`
	SearchID  string `json:"searchId"`
	FromIndex int64  `json:"fromIndex"`
	ToIndex   int64  `json:"toIndex"`
}

// PerformSearch answers DOM.performSearch.
func (h *Hub) PerformSearch(w *Window, req Request) {
	var p searchParams
	if len(req.Params) > 0 {
		_ = json.Unmarshal(req.Params, &p)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	d := &w.client.dom
	if p.Query == "" {
		w.refuse(req, &wireError{codeServerError, "DOM.performSearch: query is required"})
		return
	}
	if !d.doc {
		w.refuse(req, &wireError{codeServerError, "DOM.performSearch: this window holds no document yet: ask DOM.getDocument first"})
		return
	}
	h.nextSearch++
	s := &domSearch{id: "s" + strconv.FormatUint(h.nextSearch, 10)}
	id := req.ID
	s.answer = func(total int64) {
		w.enqueue(appendResult(nil, id, searchAnswer(s.id, total)))
	}
	for _, fid := range h.order {
		c := h.frames[fid].ctx
		if ns, ok := d.pages[c]; ok && c.caps.Has(sourceproto.CapDOM) && h.reg != nil {
			s.parts = append(s.parts, searchPart{ctx: c, ns: ns})
		}
	}
	if d.searches == nil {
		d.searches = map[string]*domSearch{}
	}
	if len(d.searches) >= maxSearchesPerWindow {
		for k := range d.searches {
			delete(d.searches, k)
			break
		}
	}
	d.searches[s.id] = s
	s.pending = len(s.parts)
	if s.pending == 0 {
		s.answer(0)
		return
	}
	for i := range s.parts {
		h.searchPartLocked(w, s, i, p.Query)
	}
}

// searchPartLocked asks one page to search; its end (answer, error,
// deadline, close) counts down the search.
func (h *Hub) searchPartLocked(w *Window, s *domSearch, i int, query string) {
	part := &s.parts[i]
	c := part.ctx
	done := func(res *sourceproto.RuntimeResult, why string) {
		if res != nil {
			if r := res.DOMResultOf(); r != nil {
				part.count = r.Count
			}
		} else {
			h.host.Logf("DOM.performSearch in the page %q: %s", c.frame.displayName(), why)
		}
		if s.pending--; s.pending == 0 {
			var total int64
			for _, p := range s.parts {
				total += p.count
			}
			s.answer(total)
		}
	}
	w.client.dom.markUsed(part.ns)
	cmd := &sourceproto.RuntimeCommand{}
	cmd.SetDOM(sourceproto.MethodDOMSearch, &sourceproto.DOMParams{Doc: part.ns, Search: s.id, Text: query})
	call := &runtimeCall{ref: c.ref, ctx: c, page: c.frame.displayName(), realm: c.realm.ID, sess: w, wire: wireSession(w),
		method: cmd.Method, cdp: "DOM.performSearch", ctxID: c.id, size: len(query) + commandOverhead, own: done}
	h.registerLocked(call, cmd)
	if werr := h.admitLocked(c, call); werr != nil {
		h.forgetCallLocked(cmd.ID)
		done(nil, werr.Message)
	}
}

func searchAnswer(id string, total int64) []byte {
	b, _ := json.Marshal(struct {
		SearchID    string `json:"searchId"`
		ResultCount int64  `json:"resultCount"`
	}{id, total})
	return b
}

// GetSearchResults answers DOM.getSearchResults: the range's nodes, pushed
// with their paths, from the page that holds them (one page per call: the
// frontend asks for one result at a time).
func (h *Hub) GetSearchResults(w *Window, req Request) {
	var p searchParams
	if len(req.Params) > 0 {
		_ = json.Unmarshal(req.Params, &p)
	}
	h.mu.Lock()
	err := h.searchResultsLocked(w, req, &p)
	h.mu.Unlock()
	if err != nil {
		w.refuse(req, &wireError{codeServerError, "DOM.getSearchResults: " + err.Error()})
	}
}

func (h *Hub) searchResultsLocked(w *Window, req Request, p *searchParams) error {
	s := w.client.dom.searches[p.SearchID]
	switch {
	case s == nil:
		return fmt.Errorf("no search %q in this window (discarded, or the document was asked for again)", p.SearchID)
	case s.pending > 0:
		return errors.New("the search has not finished")
	case p.FromIndex < 0 || p.ToIndex <= p.FromIndex:
		return fmt.Errorf("fromIndex %d, toIndex %d: want 0 <= fromIndex < toIndex", p.FromIndex, p.ToIndex)
	}
	off := int64(0)
	for _, part := range s.parts {
		if p.FromIndex >= off+part.count {
			off += part.count
			continue
		}
		if p.ToIndex > off+part.count {
			return fmt.Errorf("results %d–%d span two pages: ask for those of one page at a time (up to %d)", p.FromIndex, p.ToIndex, off+part.count)
		}
		if w.client.dom.byNS[part.ns] != part.ctx {
			return errors.New("the page of these results reloaded or closed: search again")
		}
		n := pageNode{ctx: part.ctx, ns: part.ns}
		return h.domCallLocked(w, req, n, sourceproto.MethodDOMResults,
			&sourceproto.DOMParams{Search: s.id, From: p.FromIndex - off, To: p.ToIndex - off},
			func(call *runtimeCall, r *sourceproto.DOMResult, _ *objectMapper) ([][]byte, []byte, error) {
				ids := make([]cdp.NodeID, len(r.Nodes))
				for i, l := range r.Nodes {
					if l != 0 {
						ids[i] = nodeID(call.domNS, l)
					}
				}
				return childrenEvents(call, r), cdpproject.NodeIDsAnswer(ids), nil
			})
	}
	return fmt.Errorf("the search found fewer than %d nodes", p.ToIndex)
}

// DiscardSearchResults answers DOM.discardSearchResults (each page drops
// its nodes with its next search, or when the window goes).
func (h *Hub) DiscardSearchResults(w *Window, req Request) {
	var p searchParams
	if len(req.Params) > 0 {
		_ = json.Unmarshal(req.Params, &p)
	}
	h.mu.Lock()
	delete(w.client.dom.searches, p.SearchID)
	h.mu.Unlock()
	w.enqueue(appendResult(nil, req.ID, []byte(`{}`)))
}
