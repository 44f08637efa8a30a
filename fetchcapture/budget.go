package fetchcapture

import (
	"container/list"
	"fmt"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The journal's budgets and who pays when they are exceeded.
//
// Everything an entry keeps is counted (cost functions below): the request
// head, every response head (redirect hops included), the steps that point
// at them, failure messages and the kept body chunks, each with the
// allocator's overhead, so that many small things are counted as much as
// one big one. The counts are kept per entry, per source (generation), per
// side (the host's generations; all pages) and in total.
//
// Shares: pages together may hold at most 1/pagesShare of each budget
// (bytes and entries); the rest is the host's reserve, which no page can
// take. The host may borrow what pages leave unused; a page that needs its
// room back takes it from the host's oldest entries beyond the reserve.
// Over a budget, the source that pays is chosen within the side that is
// over: a source that has disconnected first (its entries are history),
// else the one holding the most. So a page that floods only ever pushes
// out its own entries, or another page's that hold more than it does, and
// never the host's reserve. Within the paying source the entry that ended
// first goes first; with none ended, its oldest unfinished entry is failed
// ("dropped from the journal unfinished", saying which share) and dropped.
// A body chunk never drops an unfinished entry: without an ended entry to
// evict it is not kept (the body is truncated "by the journal").
const (
	// pagesShare: pages together may hold half of each budget. The host is
	// the application being debugged and one source; pages are many (any
	// tab of the dev server, reloads) and may be hostile. Half keeps 32 MiB
	// and 500 requests for the host under any page traffic, and still 32
	// full 1 MiB bodies for pages.
	pagesShare = 2
	// MaxRedirects is the number of redirect hops one entry may have.
	// Chromium stops at 20 (net::ERR_TOO_MANY_REDIRECTS) and so does fetch
	// (undici: "redirect count exceeded"), so a producer reporting more is
	// not describing a real request: the entry ends failed at the next
	// response and its later phases are ignored. It also bounds the steps
	// one entry keeps: request, 20 hops, response, end.
	MaxRedirects = 20

	// entryOverhead is what an entry costs beyond its strings, headers and
	// bodies: the entry, its Request, the Finished or Failure, its request
	// and end steps (with the slice's growth), its map slots and list
	// elements, its request id (TestAccountingCoversTheHeap checks these
	// against the Go heap).
	entryOverhead = 1536
	// headOverhead is a response head's Response struct and its step (with
	// the slice's growth): every redirect hop costs at least this.
	headOverhead = 320
	// headerOverhead is one header's slot in its slice (the decoder's
	// growth doubles it) and the rounding of its two strings.
	headerOverhead = 80
	// frameOverhead is one stack frame's slot and the rounding of its
	// three strings.
	frameOverhead = 112
	// chunkOverhead is a kept body chunk's slot in the chunk list (with
	// growth) and its allocation's rounding: a producer sending 1-byte
	// chunks pays ~50 times what it sends, not 1.
	chunkOverhead = 64
)

// side is the part of the journal a source's entries count against.
type side uint8

const (
	sideHost side = iota
	sidePages
)

func sideOf(r sourceproto.Role) side {
	if r == sourceproto.RoleHost {
		return sideHost
	}
	return sidePages
}

// tally is what a scope holds.
type tally struct {
	bytes   int64
	entries int
}

// use is what one source generation holds. Guarded by Journal.mu.
type use struct {
	ref    sourceproto.SourceRef
	side   side
	origin Origin
	open   bool // between SourceOpened (or its first entry) and SourceClosed
	tally
	running list.List // unfinished entries, oldest first
	ended   list.List // ended entries, in the order they ended
	// noticed: the windows were told once that another source's traffic
	// pushed this source's entries out.
	noticed bool
}

// Cost functions: what a kept thing costs the budget.

func (r *Request) cost() int64 {
	return int64(len(r.URL)+len(r.Method)) + headersCost(r.Headers) + stackCost(r.Stack)
}

func respCost(r *Response) int64 {
	return headOverhead + int64(len(r.URL)+len(r.StatusText)+len(r.Type)) + headersCost(r.Headers)
}

func failureCost(f *Failure) int64 { return int64(len(f.Message)) }

func chunkCost(data []byte) int64 { return int64(cap(data)) + chunkOverhead }

func headersCost(h []sourceproto.HTTPHeader) int64 {
	n := int64(0)
	for _, x := range h {
		n += int64(len(x.Name)+len(x.Value)) + headerOverhead
	}
	return n
}

func stackCost(s *sourceproto.StackTrace) int64 {
	if s == nil {
		return 0
	}
	n := int64(len(s.Description))
	for _, f := range s.CallFrames {
		n += int64(len(f.FunctionName)+len(f.URL)+len(f.ScriptID)) + frameOverhead
	}
	return n
}

// measure is e's cost computed from what it keeps; the journal keeps
// e.bytes equal to it incrementally (the tests compare both).
func (e *entry) measure() int64 {
	n := entryOverhead + int64(len(e.key.id)) + e.req.cost() + e.reqBody.cost + e.respBody.cost
	for i := range e.steps {
		if r := e.steps[i].Response; r != nil {
			n += respCost(r)
		}
		if f := e.steps[i].Failure; f != nil {
			n += failureCost(f)
		}
	}
	if e.pendingHop != nil {
		n += respCost(e.pendingHop)
	}
	return n
}

// useLocked returns ref's use, making an open one the first time.
func (j *Journal) useLocked(ref sourceproto.SourceRef) *use {
	u := j.uses[ref]
	if u == nil {
		u = &use{ref: ref, side: sideOf(ref.Role), origin: Origin{Role: ref.Role}, open: true}
		j.uses[ref] = u
	}
	return u
}

// chargeLocked adds d bytes to e and to every scope it counts in.
func (j *Journal) chargeLocked(e *entry, d int64) {
	e.bytes += d
	e.u.bytes += d
	j.sides[e.u.side].bytes += d
	j.total.bytes += d
}

func (j *Journal) countLocked(u *use, d int) {
	u.entries += d
	j.sides[u.side].entries += d
	j.total.entries += d
}

// addLocked files a new entry (costing e.measure()).
func (j *Journal) addLocked(e *entry) {
	e.orderEl = j.order.PushBack(e)
	e.useEl = e.u.running.PushBack(e)
	j.byKey[e.key], j.byID[e.requestID] = e, e
	j.countLocked(e.u, 1)
	j.chargeLocked(e, e.measure())
}

// markEndedLocked moves e to its source's ended list.
func (j *Journal) markEndedLocked(e *entry) {
	e.ended = true
	e.u.running.Remove(e.useEl)
	e.useEl = e.u.ended.PushBack(e)
}

func (j *Journal) removeLocked(e *entry) {
	u := e.u
	j.order.Remove(e.orderEl)
	if e.ended {
		u.ended.Remove(e.useEl)
	} else {
		u.running.Remove(e.useEl)
	}
	delete(j.byKey, e.key)
	delete(j.byID, e.requestID)
	j.chargeLocked(e, -e.bytes)
	j.countLocked(u, -1)
	if !u.open && u.entries == 0 {
		delete(j.uses, u.ref)
	}
}

// victimLocked returns the source that must give way before n more bytes
// and k more entries join side s (n = k = 0: the budgets as they are), or
// nil when everything fits.
func (j *Journal) victimLocked(s side, n int64, k int) *use {
	pn, pk := int64(0), 0
	if s == sidePages {
		pn, pk = n, k
	}
	pages := j.sides[sidePages]
	switch {
	case pages.bytes+pn > j.pagesMax.bytes:
		return j.payerLocked(sidePages, true)
	case pages.entries+pk > j.pagesMax.entries:
		return j.payerLocked(sidePages, false)
	case j.total.bytes+n > j.opts.MaxBytes:
		return j.payerLocked(sideHost, true)
	case j.total.entries+k > j.opts.MaxEntries:
		return j.payerLocked(sideHost, false)
	}
	return nil
}

// payerLocked picks the source of side s that pays: a disconnected one
// first, else the one holding the most (bytes or entries). The pages'
// share is at most the whole budget, so the host side is over only when
// the host holds more than its reserve; if it holds nothing (a budget too
// small to split), the pages pay.
func (j *Journal) payerLocked(s side, byBytes bool) *use {
	var best *use
	better := func(u *use) bool {
		if best == nil {
			return true
		}
		if u.open != best.open {
			return !u.open
		}
		a, b := int64(u.entries), int64(best.entries)
		if byBytes {
			a, b = u.bytes, best.bytes
		}
		if a != b {
			return a > b
		}
		return u.ref.Gen < best.ref.Gen || u.ref.Gen == best.ref.Gen && u.ref.ID < best.ref.ID // deterministic
	}
	for _, u := range j.uses {
		if u.side == s && u.entries > 0 && better(u) {
			best = u
		}
	}
	if best == nil && s == sideHost {
		return j.payerLocked(sidePages, byBytes)
	}
	return best
}

// evictLocked makes u give up one entry other than keep: the one that
// ended first; with endedOnly false and none ended, its oldest unfinished
// one (failed, saying why), and last keep itself when it is u's. cause is
// the source whose growth asked for the room. It reports whether anything
// was dropped.
func (j *Journal) evictLocked(u *use, keep *entry, endedOnly bool, cause *use) bool {
	var victim *entry
	for el := u.ended.Front(); el != nil && victim == nil; el = el.Next() {
		if e := el.Value.(*entry); e != keep {
			victim = e
		}
	}
	if victim == nil && !endedOnly {
		for el := u.running.Front(); el != nil && victim == nil; el = el.Next() {
			if e := el.Value.(*entry); e != keep {
				victim = e
			}
		}
		if victim == nil && keep != nil && keep.u == u && !keep.ended {
			victim = keep
		}
		if victim == nil {
			return false
		}
		if !victim.ended {
			j.closeLocked(victim, Step{Kind: StepFailed, Time: j.now(), Failure: &Failure{Message: j.dropReason(u)}})
			j.stats.Dropped++
		}
	}
	if victim == nil {
		return false
	}
	if cause != nil && cause != u && u.open && !u.noticed {
		// A departed source's history gives way first by design: only a
		// live source is told that another's traffic pushed it out.
		u.noticed = true
		j.noticeLocked(j.pushedOutText(u))
	}
	j.removeLocked(victim)
	j.stats.Evicted++
	return true
}

// enforceLocked restores every budget after something grew; keep (the
// entry that grew, or nil) is dropped last.
func (j *Journal) enforceLocked(keep *entry) {
	var cause *use
	if keep != nil {
		cause = keep.u
	}
	for {
		v := j.victimLocked(sideHost, 0, 0)
		if v == nil || !j.evictLocked(v, keep, false, cause) {
			return
		}
	}
}

// makeRoomLocked evicts ended entries until n more bytes of e fit. It
// reports whether they do; it never drops an unfinished entry.
func (j *Journal) makeRoomLocked(e *entry, n int64) bool {
	for {
		v := j.victimLocked(e.u.side, n, 0)
		if v == nil {
			return true
		}
		if !j.evictLocked(v, e, true, e.u) {
			return false
		}
	}
}

func (j *Journal) dropReason(u *use) string {
	if u.side == sidePages {
		return fmt.Sprintf("dropped from the journal unfinished: pages may keep %s and %d requests of the journal together, "+
			"and this page held the most (the host's share is kept apart)", mibText(j.pagesMax.bytes), j.pagesMax.entries)
	}
	return fmt.Sprintf("dropped from the journal unfinished: the journal keeps %d requests and %s, and more than that were in flight",
		j.opts.MaxEntries, mibText(j.opts.MaxBytes))
}

func (j *Journal) pushedOutText(u *use) string {
	if u.side == sidePages {
		where := u.origin.DocumentURL
		if where == "" {
			where = u.ref.ID
		}
		return fmt.Sprintf("[inspector-worker] Network: the oldest requests of the page %s were dropped from the journal to make room for another page's: "+
			"pages may keep %s and %d requests together, and the page holding the most gives way first. Their bodies can no longer be read. "+
			"(Said once per page.)", where, mibText(j.pagesMax.bytes), j.pagesMax.entries)
	}
	return fmt.Sprintf("[inspector-worker] Network: the host's oldest requests beyond its reserved share (%s and %d requests) were dropped "+
		"from the journal to make room for pages' requests. Their bodies can no longer be read. (Said once per host process.)",
		mibText(j.opts.MaxBytes-j.pagesMax.bytes), j.opts.MaxEntries-j.pagesMax.entries)
}

func mibText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
