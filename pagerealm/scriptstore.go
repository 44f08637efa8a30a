package pagerealm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// A page's scripts: what the worker keeps of a page load's `script` items,
// and what a window is sent of them.
//
// Bounded per page load: a page that adds <script> elements without end
// (JSONP polling, a hostile page) would otherwise grow the worker without
// bound and, through every window with the Debugger on, the windows too.
// Past either bound a script item is dropped, counted, and announced once
// (a Console warning to every window); known URLs are no drops.
//
// Indexed: a page's scripts are found by URL in a map, never by a scan
// under hub.mu (each console stack frame, each new script and each
// breakpoint by URL looks one up). With a scan, 100,000 scripts took 35.7 s
// to ingest (20,000: 1.2 s, quadratic) while every window and page waited
// for the hub's lock.
//
// Bounded per window: a window that enables Debugger gets at most
// maxScriptsOnEnable client scripts over all pages, shared out fairly, and
// one warning per page whose list is cut, saying how many were left out.
// They go before the Debugger.enable answer, through the queue's strict
// bound (an answer's prelude is not lossy), so they must fit it with room
// to spare whatever the pages did.
const (
	// maxPageScripts bounds the scripts kept per page load: ten times what
	// a large app loads over a session (a code-split bundle loads a few
	// hundred chunks through <script> elements), few enough that 64 pages
	// at both bounds keep 64 MiB of URLs and ~15 MiB besides (~110 bytes
	// of bookkeeping per script).
	maxPageScripts = 2000
	// maxPageScriptURLBytes bounds the URL bytes of the scripts kept per
	// page load (client.js sends URLs of at most 8 KiB, the protocol
	// allows 64 KiB): 2,000 URLs of 512 bytes.
	maxPageScriptURLBytes = 1 << 20
	// maxScriptsOnEnable bounds the client scripts one Debugger.enable
	// lists, over all pages: a fifth of the window's queue
	// (maxQueuedMessages), so the host's own scripts, the answer and live
	// traffic keep four fifths. Before, a page's 100,000 scripts went to a
	// new window at once, which was closed for "stopped reading".
	maxScriptsOnEnable = maxQueuedMessages / 5
)

// pageScripts are one page load's scripts. Guarded by Hub.mu.
type pageScripts struct {
	list    []*clientScript          // kept scripts, in the order the page announced them
	byURL   map[string]*clientScript // list by URL
	bytes   int                      // the URL bytes of list
	dropped int                      // script items past the bounds: kept nowhere, listed nowhere
}

func (ps *pageScripts) idFor(u string) string {
	if sc := ps.byURL[u]; sc != nil {
		return sc.id
	}
	return ""
}

func (c *clientContext) scriptIDFor(u string) string { return c.scripts.idFor(u) }

// scriptLocked registers a page script and announces it to the windows with
// the Debugger enabled, so console source links and Sources can open it. A
// script past the page's bounds is dropped; the first drop is announced.
func (h *Hub) scriptLocked(c *clientContext, si *sourceproto.ScriptInfo) {
	ps := &c.scripts
	if si.URL == "" || ps.byURL[si.URL] != nil {
		return
	}
	if len(ps.list) >= maxPageScripts || ps.bytes+len(si.URL) > maxPageScriptURLBytes {
		ps.dropped++
		if ps.dropped == 1 {
			msg := logEntry("warning", fmt.Sprintf("[inspector-worker] the page %s announced more than %d scripts (or %d KiB of script URLs); "+
				"the worker keeps no more of its scripts, so later ones are not listed in Sources", c.frame.displayName(), maxPageScripts, maxPageScriptURLBytes>>10), time.Now())
			h.broadcastLocked(c.frame, func(*sessionState) [][]byte { return [][]byte{msg} })
		}
		return
	}
	h.nextScript++
	sc := &clientScript{id: "c" + strconv.Itoa(h.nextScript), url: si.URL, ctx: c}
	if ps.byURL == nil {
		ps.byURL = map[string]*clientScript{}
	}
	ps.list = append(ps.list, sc)
	ps.byURL[sc.url] = sc
	ps.bytes += len(sc.url)
	h.scripts[sc.id] = sc
	for _, s := range h.sessionsLocked() {
		if s.client.debuggerEnabled && s.client.sees(c.frame) {
			h.oweScriptLocked(s, sc)
		}
	}
}

// clientScriptByURLLocked finds a live page script by URL (the first page,
// in attach order, that has it).
func (h *Hub) clientScriptByURLLocked(u string) *clientScript {
	if u == "" {
		return nil
	}
	for _, id := range h.order {
		if c := h.frames[id].ctx; c != nil {
			if sc := c.scripts.byURL[u]; sc != nil {
				return sc
			}
		}
	}
	return nil
}

// DebuggerEnabled announces the client scripts before Debugger.enable's
// answer (V8 lists its own first too).
func (h *Hub) DebuggerEnabled(s *Window) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.client.debuggerEnabled {
		return
	}
	s.client.debuggerEnabled = true
	for _, m := range h.scriptsOnEnableLocked() {
		s.enqueue(m)
	}
}

// scriptsOnEnableLocked is what a window is sent of the pages' scripts
// when it enables Debugger (or its host restarted): each page's kept
// scripts in the order the page announced them, at most maxScriptsOnEnable
// in all, and after a page's scripts a warning when some were left out.
func (h *Hub) scriptsOnEnableLocked() [][]byte {
	var ctxs []*clientContext
	var counts []int
	for _, id := range h.order {
		if c := h.frames[id].ctx; c != nil && (len(c.scripts.list) > 0 || c.scripts.dropped > 0) {
			ctxs = append(ctxs, c)
			counts = append(counts, len(c.scripts.list))
		}
	}
	shares := fairShares(counts, maxScriptsOnEnable)
	var out [][]byte
	for i, c := range ctxs {
		ps := &c.scripts
		for _, sc := range ps.list[:shares[i]] {
			out = append(out, h.scriptParsed(sc))
		}
		if text := scriptsLeftOut(c.frame.displayName(), shares[i], len(ps.list)-shares[i], ps.dropped); text != "" {
			out = append(out, logEntry("warning", text, time.Now()))
		}
	}
	return out
}

// scriptsLeftOut is the notice for a page whose script list a window gets
// cut; "" when nothing was left out.
func scriptsLeftOut(page string, listed, cut, dropped int) string {
	if cut == 0 && dropped == 0 {
		return ""
	}
	var why []string
	if dropped > 0 {
		why = append(why, fmt.Sprintf("%d past the worker's bound per page (%d scripts or %d KiB of URLs)", dropped, maxPageScripts, maxPageScriptURLBytes>>10))
	}
	if cut > 0 {
		why = append(why, fmt.Sprintf("%d past this window's share of the %d client scripts one Debugger.enable lists", cut, maxScriptsOnEnable))
	}
	return fmt.Sprintf("[inspector-worker] Sources lists %d scripts of the page %s; %d are left out: %s",
		listed, page, cut+dropped, strings.Join(why, ", "))
}

// fairShares divides budget among wants so that no one gets more than it
// wants and the rest is shared equally (water-filling): a page with few
// scripts lists them all whatever another page announced.
func fairShares(wants []int, budget int) []int {
	idx := make([]int, len(wants))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return wants[a] - wants[b] })
	shares := make([]int, len(wants))
	for k, i := range idx {
		shares[i] = min(wants[i], budget/(len(idx)-k))
		budget -= shares[i]
	}
	return shares
}

// scriptParsed renders a client script's Debugger.scriptParsed.
func (h *Hub) scriptParsed(s *clientScript) []byte {
	return cdpproject.ScriptParsed(s.id, s.url, s.ctx.description())
}
