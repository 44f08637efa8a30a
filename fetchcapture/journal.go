package fetchcapture

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Budgets of the journal. A producer's own per-body budget (1 MiB by default,
// docs/agent-note.md "Fetch capture") keeps each body small; these bound the sum.
const (
	// DefaultMaxEntries keeps the last thousand requests: a Network panel
	// opened late still sees what led up to now, and replaying a thousand
	// entries (a few events each) fits well inside a window's queue.
	DefaultMaxEntries = 1000
	// DefaultMaxBytes bounds the heads and bodies kept: 64 full 1 MiB bodies.
	DefaultMaxBytes = 64 << 20
	// entryOverhead is what an entry costs beyond its strings and bodies
	// (structs, steps, map slots), so that many small entries are counted too.
	entryOverhead = 512
	// RedactedValue replaces the value of a redacted header.
	RedactedValue = "[redacted by inspector-worker]"
)

// Options configure a Journal. Zero values take the documented defaults.
type Options struct {
	MaxEntries int   // default DefaultMaxEntries
	MaxBytes   int64 // default DefaultMaxBytes
	// RedactHeaders are header names (any case) whose values are replaced by
	// RedactedValue when recorded.
	RedactHeaders []string
	// Describe tells the journal where a source's entries come from (frame
	// and loader ids). It runs in SourceOpened, under the source's lock and
	// outside the journal's: it may take the client hub's lock. Nil: the
	// Origin has only the role.
	Describe func(sourceproto.SourceInfo) Origin
	// Now is the worker's clock for the steps the journal makes itself;
	// default time.Now.
	Now func() time.Time
}

// Stats are the journal's counters, for tests and logs.
type Stats struct {
	Entries     int
	Bytes       int64 // the journal's own accounting, bounded by MaxBytes
	Recorded    uint64
	Evicted     uint64
	Violations  uint64 // phases out of order, unknown ids; ignored
	BudgetCuts  uint64 // body chunks refused by the byte budget
	Subscribers int
}

// Journal is the bounded fetch journal. It is a sourceproto.Consumer; every
// method is safe for concurrent use.
//
// Lock order: sourceproto.Source.mu → Journal.mu → Subscription.mu. Under mu
// the journal only updates its maps and appends to subscriber queues (bounded,
// never blocking); it calls no callback (Describe runs before mu is taken).
type Journal struct {
	opts   Options             // Static after construction.
	redact map[string]struct{} // Static after construction: lower-case names.

	mu      sync.Mutex
	sources map[sourceproto.SourceRef]Origin // Guarded by mu: open sources.
	byKey   map[key]*entry                   // Guarded by mu.
	byID    map[string]*entry                // Guarded by mu.
	order   []*entry                         // Guarded by mu: oldest first.
	bytes   int64                            // Guarded by mu.
	nextID  uint64                           // Guarded by mu.
	subs    map[*Subscription]struct{}       // Guarded by mu.
	stats   Stats                            // Guarded by mu: counters only.
}

type key struct {
	ref sourceproto.SourceRef
	id  string
}

type entry struct {
	key         key
	requestID   string
	req         *Request
	steps       []Step    // request, redirects, response, end; data steps are merged
	dataSeen    int64     // response bytes announced in data steps
	pendingHop  *Response // a 3xx response not yet known to be a hop or final
	pendingAt   float64
	gotResponse bool
	ended       bool
	reqBody     body
	respBody    body
	finished    *Finished
	bytes       int64
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
		sources: map[sourceproto.SourceRef]Origin{}, byKey: map[key]*entry{}, byID: map[string]*entry{},
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
	s.Entries, s.Bytes, s.Subscribers = len(j.order), j.bytes, len(j.subs)
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
	j.sources[info.Ref] = o
	j.mu.Unlock()
}

// SourceClosed fails the source's unfinished entries.
func (j *Journal) SourceClosed(ref sourceproto.SourceRef, code sourceproto.CloseCode) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.sources, ref)
	j.failOpenLocked(ref, fmt.Sprintf("the %s disconnected (%s) before the request finished", roleName(ref.Role), code))
}

// Replaced fails the unfinished entries (a replacement restarts the
// producer's stream: their later phases may be gone), then records the
// snapshot's items. A replacement's items that repeat a known request are
// ignored (duplicates, counted as violations).
func (j *Journal) Replaced(ref sourceproto.SourceRef, _ uint64, r *sourceproto.Replace) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if r.Reason != sourceproto.ReplaceInitial {
		j.failOpenLocked(ref, fmt.Sprintf("the %s resent its state (%s) before the request finished; its end was lost", roleName(ref.Role), r.Reason))
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

func (j *Journal) failOpenLocked(ref sourceproto.SourceRef, why string) {
	at := j.now()
	for _, e := range j.order {
		if e.key.ref == ref && !e.ended {
			j.closeLocked(e, Step{Kind: StepFailed, Time: at, Failure: &Failure{Message: why}})
		}
	}
	j.enforceLocked(nil)
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
	j.nextID++
	req := &Request{
		Source: k.ref, Origin: j.sources[k.ref], URL: r.URL, Method: r.Method, Headers: j.redactHeaders(r.Headers),
		HasBody: r.HasBody, Kind: r.EffectiveKind(), Stack: r.StackTrace, BodiesNotRead: r.BodiesNotRead,
	}
	req.Origin.Role = k.ref.Role
	e := &entry{key: k, requestID: "iw-net." + strconv.FormatUint(j.nextID, 10), req: req}
	e.bytes = entryOverhead + int64(len(r.URL)+len(r.Method)+len(k.id)) + headerBytes(r.Headers) + stackBytes(r.StackTrace)
	j.byKey[k], j.byID[e.requestID] = e, e
	j.order = append(j.order, e)
	j.bytes += e.bytes
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
	resp := &Response{URL: r.URL, Status: r.Status, StatusText: r.StatusText, Headers: j.redactHeaders(r.Headers), Redirected: r.Redirected, Type: r.Type}
	grow := int64(len(r.URL)+len(r.StatusText)+len(r.Type)) + headerBytes(r.Headers)
	e.bytes += grow
	j.bytes += grow
	if hop := e.pendingHop; hop != nil {
		e.pendingHop = nil
		j.publishLocked(e, Step{Kind: StepRedirect, Time: at, Response: hop, RedirectURL: r.URL})
	} else if !e.gotResponse && r.Redirected && r.URL != e.req.URL {
		// The producer knew only that fetch followed a redirect: one hop
		// from the original URL, its status unknown.
		hop := &Response{URL: e.req.URL, StatusText: "redirected (status not known: fetch followed it internally)", StatusUnknown: true}
		j.publishLocked(e, Step{Kind: StepRedirect, Time: at, Response: hop, RedirectURL: r.URL})
	}
	e.gotResponse = true
	if r.Status >= 300 && r.Status <= 399 {
		e.pendingHop, e.pendingAt = resp, at
		return
	}
	j.publishLocked(e, Step{Kind: StepResponse, Time: at, Response: resp})
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
	room := j.makeRoomLocked(e, int64(len(c.Data)))
	grew, ok := b.add(c.Offset, c.Data, room)
	if !ok {
		j.stats.Violations++
	}
	if ok && !room && len(c.Data) > 0 {
		j.stats.BudgetCuts++
	}
	e.bytes += grew
	j.bytes += grew
}

// makeRoomLocked evicts finished entries (oldest first, never e) until n
// more bytes fit. It reports whether they do.
func (j *Journal) makeRoomLocked(e *entry, n int64) bool {
	for j.bytes+n > j.opts.MaxBytes {
		if !j.evictOldestFinishedLocked(e) {
			return false
		}
	}
	return true
}

// endLocked ends e, then restores the budgets (e may be evicted at once).
func (j *Journal) endLocked(e *entry, s Step) {
	j.closeLocked(e, s)
	j.enforceLocked(nil)
}

// closeLocked ends e with s without touching the budgets: for callers that
// walk j.order.
func (j *Journal) closeLocked(e *entry, s Step) {
	j.flushHopLocked(e)
	e.ended = true
	j.publishLocked(e, s)
}

// enforceLocked restores both budgets after an entry started (keep) or
// ended. Too many entries and none finished: the oldest unfinished one is
// failed and dropped, so a producer that never finishes its requests
// cannot grow the journal.
func (j *Journal) enforceLocked(keep *entry) {
	for len(j.order) > j.opts.MaxEntries || j.bytes > j.opts.MaxBytes {
		if j.evictOldestFinishedLocked(keep) {
			continue
		}
		if len(j.order) <= j.opts.MaxEntries {
			return // over bytes with only unfinished entries: their next chunks are cut
		}
		var victim *entry
		for _, e := range j.order {
			if e != keep {
				victim = e
				break
			}
		}
		if victim == nil {
			return
		}
		j.closeLocked(victim, Step{Kind: StepFailed, Time: j.now(), Failure: &Failure{Message: fmt.Sprintf(
			"dropped from the journal unfinished: more than %d requests in flight (the journal's entry budget)", j.opts.MaxEntries)}})
		j.removeLocked(victim)
		j.stats.Evicted++
	}
}

func (j *Journal) evictOldestFinishedLocked(keep *entry) bool {
	for _, e := range j.order {
		if e.ended && e != keep {
			j.removeLocked(e)
			j.stats.Evicted++
			return true
		}
	}
	return false
}

func (j *Journal) removeLocked(e *entry) {
	for i, o := range j.order {
		if o == e {
			j.order = append(j.order[:i], j.order[i+1:]...)
			break
		}
	}
	delete(j.byKey, e.key)
	delete(j.byID, e.requestID)
	j.bytes -= e.bytes
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

func headerBytes(h []sourceproto.HTTPHeader) int64 {
	n := int64(0)
	for _, x := range h {
		n += int64(len(x.Name)+len(x.Value)) + 32
	}
	return n
}

func stackBytes(s *sourceproto.StackTrace) int64 {
	if s == nil {
		return 0
	}
	n := int64(len(s.Description))
	for _, f := range s.CallFrames {
		n += int64(len(f.FunctionName)+len(f.URL)+len(f.ScriptID)) + 48
	}
	return n
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
