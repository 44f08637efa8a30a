package fetchcapture

import (
	"container/list"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Budgets of the journal. A producer's own per-body budget (1 MiB by default,
// docs/agent-note.md "Fetch capture") keeps each body small; these bound the sum of
// everything kept (budget.go: what is counted, and who gives way).
const (
	// DefaultMaxEntries keeps the last thousand requests: a Network panel
	// opened late still sees what led up to now, and replaying a thousand
	// entries (a few events each) fits well inside a window's queue.
	DefaultMaxEntries = 1000
	// DefaultMaxBytes bounds the heads and bodies kept: 64 full 1 MiB bodies.
	DefaultMaxBytes = 64 << 20
	// RedactedValue replaces the value of a redacted header.
	RedactedValue = "[redacted by inspector-worker]"
	// returnMemoryAfter: a source that leaves having let go of this much
	// (its unfinished entries released) makes the worker return memory to
	// the system at once (returnMemory). Below it, the next collection
	// will do; a page's share is 32 MiB.
	returnMemoryAfter = 8 << 20
	// returnMemoryEvery spaces those returns: each is a full collection
	// (a few ms for the worker's heap).
	returnMemoryEvery = time.Second
)

// Options configure a Journal. Zero values take the documented defaults.
type Options struct {
	// MaxEntries and MaxBytes bound the whole journal; pages together may
	// hold half of each (budget.go, pagesShare).
	MaxEntries int   // default DefaultMaxEntries
	MaxBytes   int64 // default DefaultMaxBytes
	// RedactHeaders are header names (any case) whose values are replaced by
	// RedactedValue when recorded.
	RedactHeaders []string
	// Describe tells the journal where a source's entries come from (frame
	// and loader ids). It runs in SourceOpened (no registry lock held),
	// outside the journal's lock: it may take the client hub's lock. Nil:
	// the Origin has only the role.
	Describe func(sourceproto.SourceInfo) Origin
	// Now is the worker's clock for the steps the journal makes itself;
	// default time.Now.
	Now func() time.Time
}

// Stats are the journal's counters, for tests and logs.
type Stats struct {
	Entries     int
	Bytes       int64 // the journal's own accounting, bounded by MaxBytes
	PageEntries int   // the part of Entries that pages hold
	PageBytes   int64 // the part of Bytes that pages hold
	Recorded    uint64
	Evicted     uint64
	Dropped     uint64 // unfinished entries failed and dropped for a budget (counted in Evicted too)
	Violations  uint64 // phases out of order, unknown ids, past MaxRedirects; ignored
	BudgetCuts  uint64 // body chunks refused by the byte budget
	Subscribers int
}

// Journal is the bounded fetch journal. It is a sourceproto.Consumer; every
// method is safe for concurrent use.
//
// Lock order (docs/locks.md): Journal.mu → Subscription.mu. Under mu
// the journal only updates its maps and appends to subscriber queues (bounded,
// never blocking); it calls no callback (Describe runs before mu is taken).
type Journal struct {
	opts   Options             // Static after construction.
	redact map[string]struct{} // Static after construction: lower-case names.

	pagesMax tally // Static after construction: the pages' share of both budgets.

	mu     sync.Mutex                     // Lock order: see docs/locks.md.
	uses   map[sourceproto.SourceRef]*use // Guarded by mu: sources open or holding entries.
	byKey  map[key]*entry                 // Guarded by mu.
	byID   map[string]*entry              // Guarded by mu.
	order  list.List                      // Guarded by mu: every entry (*entry), oldest first.
	total  tally                          // Guarded by mu.
	sides  [2]tally                       // Guarded by mu: by side (sideHost, sidePages).
	nextID uint64                         // Guarded by mu.
	subs   map[*Subscription]struct{}     // Guarded by mu.
	stats  Stats                          // Guarded by mu: counters only.

	lastReturn atomic.Int64 // unix ns of the last returnMemory
}

type key struct {
	ref sourceproto.SourceRef
	id  string
}

type entry struct {
	key         key
	u           *use
	requestID   string
	req         *Request
	steps       []Step    // request, redirects (at most MaxRedirects), response, end; data steps are merged
	hops        int       // redirect steps published
	dataSeen    int64     // response bytes announced in data steps
	pendingHop  *Response // a 3xx response not yet known to be a hop or final
	pendingAt   float64
	gotResponse bool
	ended       bool
	released    string // why the heads and partial bodies were let go (the source left mid-request)
	reqBody     body
	respBody    body
	finished    *Finished
	bytes       int64         // what it costs: measure(), kept incrementally
	orderEl     *list.Element // in Journal.order
	useEl       *list.Element // in u.running or u.ended
}

// New returns an empty journal.
func New(opts Options) *Journal {
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	j := &Journal{
		opts: opts, redact: map[string]struct{}{},
		pagesMax: tally{bytes: opts.MaxBytes / pagesShare, entries: max(1, opts.MaxEntries/pagesShare)},
		uses:     map[sourceproto.SourceRef]*use{}, byKey: map[key]*entry{}, byID: map[string]*entry{},
		subs: map[*Subscription]struct{}{},
	}
	for _, n := range opts.RedactHeaders {
		j.redact[strings.ToLower(strings.TrimSpace(n))] = struct{}{}
	}
	return j
}

// Stats returns the counters.
func (j *Journal) Stats() Stats {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.stats
	s.Entries, s.Bytes, s.Subscribers = j.total.entries, j.total.bytes, len(j.subs)
	s.PageEntries, s.PageBytes = j.sides[sidePages].entries, j.sides[sidePages].bytes
	return s
}

func (j *Journal) now() float64 { return float64(j.opts.Now().UnixNano()) / 1e6 }

// SourceOpened remembers the source's origin.
func (j *Journal) SourceOpened(info sourceproto.SourceInfo) {
	o := Origin{Role: info.Ref.Role}
	if j.opts.Describe != nil {
		o = j.opts.Describe(info)
		o.Role = info.Ref.Role
	}
	j.mu.Lock()
	u := j.useLocked(info.Ref)
	u.origin, u.open = o, true
	j.mu.Unlock()
}

// SourceClosed fails the source's unfinished entries and lets go of what
// they held but their request line (a source that left with requests
// hanging, a hostile page's included, pins nothing). Its ended entries
// stay, as history within the budgets; they are the first to give way.
func (j *Journal) SourceClosed(ref sourceproto.SourceRef, code sourceproto.CloseCode) {
	j.mu.Lock()
	u := j.uses[ref]
	if u == nil {
		j.mu.Unlock()
		return
	}
	u.open = false
	before := u.bytes
	j.failOpenLocked(u, fmt.Sprintf("the %s disconnected (%s) before the request finished", roleName(ref.Role), code), true)
	freed := before - u.bytes
	if u.entries == 0 {
		delete(j.uses, ref)
	}
	j.mu.Unlock()
	if freed >= returnMemoryAfter {
		j.returnMemory()
	}
}

// returnMemory hands the memory a departed source let go back to the
// system now, in the background: the worker is often idle after a page
// leaves, and an idle Go process collects only every 2 minutes, so its
// resident set would stay at the flood's peak until then. At most once per
// returnMemoryEvery: a page reconnecting in a loop cannot make the worker
// collect continuously.
func (j *Journal) returnMemory() {
	now := time.Now().UnixNano()
	last := j.lastReturn.Load()
	if now-last < int64(returnMemoryEvery) || !j.lastReturn.CompareAndSwap(last, now) {
		return
	}
	go debug.FreeOSMemory()
}

// Replaced fails the unfinished entries (a replacement restarts the
// producer's stream: their later phases may be gone), then records the
// snapshot's items. A replacement's items that repeat a known request are
// ignored (duplicates, counted as violations).
func (j *Journal) Replaced(ref sourceproto.SourceRef, _ uint64, r *sourceproto.Replace) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if u := j.uses[ref]; u != nil && r.Reason != sourceproto.ReplaceInitial {
		j.failOpenLocked(u, fmt.Sprintf("the %s resent its state (%s) before the request finished; its end was lost", roleName(ref.Role), r.Reason), false)
	}
	j.itemsLocked(ref, r.Items)
}

// Appended records a batch.
func (j *Journal) Appended(ref sourceproto.SourceRef, _ uint64, a *sourceproto.Append) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.itemsLocked(ref, a.Items)
}

// Gap and Response carry nothing for the journal: lost phases leave their
// entries unfinished until the source closes or replaces.
func (j *Journal) Gap(sourceproto.SourceRef, sourceproto.Gap)       {}
func (j *Journal) Response(sourceproto.SourceRef, sourceproto.Body) {}

func roleName(r sourceproto.Role) string {
	if r == sourceproto.RoleHost {
		return "host"
	}
	return "page"
}

// failOpenLocked fails u's unfinished entries; release also lets go of
// their heads and partial bodies (releaseLocked).
func (j *Journal) failOpenLocked(u *use, why string, release bool) {
	at := j.now()
	open := make([]*entry, 0, u.running.Len())
	for el := u.running.Front(); el != nil; el = el.Next() {
		open = append(open, el.Value.(*entry))
	}
	for _, e := range open {
		j.closeLocked(e, Step{Kind: StepFailed, Time: at, Failure: &Failure{Message: why}})
		if release {
			j.releaseLocked(e, why)
		}
	}
	j.enforceLocked(nil)
}

// releaseLocked reduces an entry that ended because its source left to
// its request line and its end: the request's headers and stack, the
// response heads (every hop) and the partial bodies are let go. What was
// published keeps its pointers (a subscriber's queue is bounded in
// bytes); replays from now on show the request and why it failed.
func (j *Journal) releaseLocked(e *entry, why string) {
	r := *e.req
	r.Headers, r.Stack = nil, nil
	e.req = &r
	first, last := e.steps[0], e.steps[len(e.steps)-1]
	first.Request, last.Request = e.req, e.req
	e.steps = []Step{first, last}
	e.pendingHop, e.dataSeen = nil, 0
	e.reqBody, e.respBody = body{}, body{}
	e.released = why + "; its headers and partial bodies were released"
	j.chargeLocked(e, e.measure()-e.bytes)
}

func (j *Journal) itemsLocked(ref sourceproto.SourceRef, items []sourceproto.Item) {
	for i := range items {
		if ev := items[i].Fetch; ev != nil {
			j.eventLocked(ref, ev)
		}
	}
}

func (j *Journal) eventLocked(ref sourceproto.SourceRef, ev *sourceproto.FetchEvent) {
	k := key{ref, ev.ID}
	e := j.byKey[k]
	if ev.Phase == sourceproto.PhaseRequest {
		if e != nil {
			j.stats.Violations++
			return
		}
		j.startLocked(k, ev)
		return
	}
	if e == nil || e.ended {
		j.stats.Violations++ // evicted, never started, or already ended
		return
	}
	switch ev.Phase {
	case sourceproto.PhaseResponse:
		j.responseLocked(e, ev.Timestamp, ev.Response)
	case sourceproto.PhaseBody:
		j.bodyLocked(e, ev.Timestamp, ev.Body)
	case sourceproto.PhaseFinished:
		x := ev.Finished
		f := Finished{RequestBytes: x.RequestBytes, ResponseBytes: x.ResponseBytes, RequestTruncated: x.RequestTruncated, ResponseTruncated: x.ResponseTruncated}
		e.finished = &f
		j.endLocked(e, Step{Kind: StepFinished, Time: ev.Timestamp, Finished: &f})
	case sourceproto.PhaseFailed:
		j.endLocked(e, Step{Kind: StepFailed, Time: ev.Timestamp, Failure: &Failure{Message: ev.Failed.Message, Aborted: ev.Failed.Aborted}})
	}
}

func (j *Journal) startLocked(k key, ev *sourceproto.FetchEvent) {
	r := ev.Request
	u := j.useLocked(k.ref)
	j.nextID++
	req := &Request{
		Source: k.ref, Origin: u.origin, URL: r.URL, Method: r.Method, Headers: j.redactHeaders(r.Headers),
		HasBody: r.HasBody, Kind: r.EffectiveKind(), Stack: r.StackTrace, BodiesNotRead: r.BodiesNotRead,
	}
	req.Origin.Role = k.ref.Role
	e := &entry{key: k, u: u, requestID: "iw-net." + strconv.FormatUint(j.nextID, 10), req: req}
	j.addLocked(e)
	j.stats.Recorded++
	j.publishLocked(e, Step{Kind: StepRequest, Time: ev.Timestamp})
	j.enforceLocked(e)
}

// responseLocked resolves redirect hops: a 3xx response is held until the
// next phase says whether another response follows (then it was a hop).
func (j *Journal) responseLocked(e *entry, at float64, r *sourceproto.FetchResponse) {
	if e.gotResponse && e.pendingHop == nil {
		j.stats.Violations++ // a second final response
		return
	}
	if e.pendingHop != nil && e.hops >= MaxRedirects {
		// The held 3xx would be one hop too many: it ends the request as
		// the final response, failed as Chromium fails it. No real
		// request gets here (fetch fails first), so its heads are let go
		// at once, as if its source had left.
		j.stats.Violations++
		why := fmt.Sprintf("more than %d redirects (net::ERR_TOO_MANY_REDIRECTS): the journal stopped recording this request, "+
			"as Chromium and fetch stop following it", MaxRedirects)
		j.closeLocked(e, Step{Kind: StepFailed, Time: at, Failure: &Failure{Message: why}})
		j.releaseLocked(e, why)
		j.enforceLocked(nil)
		return
	}
	resp := &Response{URL: r.URL, Status: r.Status, StatusText: r.StatusText, Headers: j.redactHeaders(r.Headers), Redirected: r.Redirected, Type: r.Type}
	j.chargeLocked(e, respCost(resp))
	if hop := e.pendingHop; hop != nil {
		e.pendingHop = nil
		j.publishLocked(e, Step{Kind: StepRedirect, Time: at, Response: hop, RedirectURL: r.URL})
	} else if !e.gotResponse && r.Redirected && r.URL != e.req.URL {
		// The producer knew only that fetch followed a redirect: one hop
		// from the original URL, its status unknown.
		hop := &Response{URL: e.req.URL, StatusText: "redirected (status not known: fetch followed it internally)", StatusUnknown: true}
		j.chargeLocked(e, respCost(hop))
		j.publishLocked(e, Step{Kind: StepRedirect, Time: at, Response: hop, RedirectURL: r.URL})
	}
	e.gotResponse = true
	if r.Status >= 300 && r.Status <= 399 {
		e.pendingHop, e.pendingAt = resp, at
	} else {
		j.publishLocked(e, Step{Kind: StepResponse, Time: at, Response: resp})
	}
	j.enforceLocked(e)
}

// flushHopLocked publishes a held 3xx response as the final one: what came
// after it was not another response.
func (j *Journal) flushHopLocked(e *entry) {
	if hop := e.pendingHop; hop != nil {
		e.pendingHop = nil
		j.publishLocked(e, Step{Kind: StepResponse, Time: e.pendingAt, Response: hop})
	}
}

func (j *Journal) bodyLocked(e *entry, at float64, b *sourceproto.FetchBody) {
	if b.Part == sourceproto.PartRequest {
		if e.gotResponse {
			j.stats.Violations++
			return
		}
		j.addChunkLocked(e, &e.reqBody, b)
		return
	}
	if !e.gotResponse {
		j.stats.Violations++
		return
	}
	j.flushHopLocked(e)
	j.addChunkLocked(e, &e.respBody, b)
	if n := e.respBody.seen - e.dataSeen; n > 0 {
		e.dataSeen = e.respBody.seen
		j.publishLocked(e, Step{Kind: StepData, Time: at, DataLength: n})
	}
}

func (j *Journal) addChunkLocked(e *entry, b *body, c *sourceproto.FetchBody) {
	room := true
	if len(c.Data) > 0 && b.broken == "" && !b.journalTruncated {
		// A chunk that will not be kept evicts nothing.
		room = j.makeRoomLocked(e, chunkCost(c.Data))
	}
	grew, ok := b.add(c.Offset, c.Data, room)
	if !ok {
		j.stats.Violations++
	}
	if ok && !room && len(c.Data) > 0 {
		j.stats.BudgetCuts++
	}
	j.chargeLocked(e, grew)
}

// endLocked ends e, then restores the budgets (e may be evicted at once).
func (j *Journal) endLocked(e *entry, s Step) {
	j.closeLocked(e, s)
	j.enforceLocked(nil)
}

// closeLocked ends e with s without restoring the budgets (the caller
// does): for callers that walk a list of entries.
func (j *Journal) closeLocked(e *entry, s Step) {
	j.flushHopLocked(e)
	j.markEndedLocked(e)
	if s.Failure != nil {
		j.chargeLocked(e, failureCost(s.Failure))
	}
	j.publishLocked(e, s)
}

func (j *Journal) redactHeaders(h []sourceproto.HTTPHeader) []sourceproto.HTTPHeader {
	if len(j.redact) == 0 {
		return h // the producer's slice: immutable from here on
	}
	out := make([]sourceproto.HTTPHeader, len(h))
	for i, x := range h {
		out[i] = x
		if _, ok := j.redact[strings.ToLower(x.Name)]; ok {
			out[i].Value = RedactedValue
		}
	}
	return out
}

// Body returns the request's response body (response true) or request body.
func (j *Journal) Body(requestID string, response bool) (BodyPart, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.byID[requestID]
	if e == nil {
		return BodyPart{}, ErrUnknownRequest
	}
	out := BodyPart{Request: e.req}
	if e.req.BodiesNotRead {
		return out, ErrBodiesNotRead
	}
	if e.released != "" {
		return out, fmt.Errorf("%w: %s", ErrReleased, e.released)
	}
	b := &e.reqBody
	if response {
		b = &e.respBody
		if !e.ended {
			return out, ErrNotFinished
		}
		if !e.gotResponse {
			return out, fmt.Errorf("%w: it failed before a response arrived", ErrNoBody)
		}
		for i := len(e.steps) - 1; i >= 0; i-- {
			if e.steps[i].Kind == StepResponse {
				out.Response = e.steps[i].Response
				break
			}
		}
	} else if !e.req.HasBody && b.seen == 0 {
		return out, ErrNoBody
	} else if !e.ended && !e.gotResponse {
		return out, ErrNotFinished
	}
	if b.broken != "" {
		return out, fmt.Errorf("%w: %s", ErrBrokenBody, b.broken)
	}
	out.Data = b.bytes()
	if f := e.finished; f != nil {
		if response && f.ResponseTruncated || !response && f.RequestTruncated {
			out.Truncated, out.By = true, "producer"
		}
		out.Total = f.RequestBytes
		if response {
			out.Total = f.ResponseBytes
		}
	}
	if b.journalTruncated {
		out.Truncated, out.By = true, "journal"
	}
	return out, nil
}
