package carrier

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// event is one consumer call, flattened for comparison.
type event struct {
	Kind string // opened, closed, replaced, appended, gap, response
	Ref  sourceproto.SourceRef
	Seq  uint64
	Code sourceproto.CloseCode
	Logs []string // first string argument of each console item
}

func (e event) String() string {
	s := fmt.Sprintf("%s %s/%d", e.Kind, e.Ref.ID, e.Ref.Gen)
	switch e.Kind {
	case "closed":
		s += " " + string(e.Code)
	case "replaced", "appended":
		s += fmt.Sprintf(" seq=%d logs=%v", e.Seq, e.Logs)
	}
	return s
}

// recorder is a Consumer that keeps every call and lets a test wait for
// a condition on them.
type recorder struct {
	mu      sync.Mutex
	events  []event       // Guarded by mu.
	changed chan struct{} // cap 1: an event was added
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (r *recorder) add(e event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func logsOf(items []sourceproto.Item) []string {
	var out []string
	for _, it := range items {
		if it.Console == nil || len(it.Console.Args) == 0 {
			continue
		}
		var s string
		_ = json.Unmarshal(it.Console.Args[0].Value, &s)
		out = append(out, s)
	}
	return out
}

func (r *recorder) SourceOpened(i sourceproto.SourceInfo) { r.add(event{Kind: "opened", Ref: i.Ref}) }
func (r *recorder) SourceClosed(ref sourceproto.SourceRef, c sourceproto.CloseCode) {
	r.add(event{Kind: "closed", Ref: ref, Code: c})
}
func (r *recorder) Replaced(ref sourceproto.SourceRef, seq uint64, x *sourceproto.Replace) {
	r.add(event{Kind: "replaced", Ref: ref, Seq: seq, Logs: logsOf(x.Items)})
}
func (r *recorder) Appended(ref sourceproto.SourceRef, seq uint64, a *sourceproto.Append) {
	r.add(event{Kind: "appended", Ref: ref, Seq: seq, Logs: logsOf(a.Items)})
}
func (r *recorder) Gap(ref sourceproto.SourceRef, g sourceproto.Gap) {
	r.add(event{Kind: "gap", Ref: ref, Seq: g.Expected})
}
func (r *recorder) Response(ref sourceproto.SourceRef, b sourceproto.Body) {
	r.add(event{Kind: "response", Ref: ref})
}

// snapshot returns a copy of the events so far.
func (r *recorder) snapshot() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event(nil), r.events...)
}

// waitFor waits until cond holds for the events so far and returns them;
// it fails the test with what was seen when ctx ends first.
func (r *recorder) waitFor(ctx context.Context, t testing.TB, what string, cond func([]event) bool) []event {
	t.Helper()
	for {
		evs := r.snapshot()
		if cond(evs) {
			return evs
		}
		select {
		case <-r.changed:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v; events:\n%s", what, ctx.Err(), dump(evs))
		}
	}
}

// of returns the events about source id.
func of(evs []event, id string) []event {
	var out []event
	for _, e := range evs {
		if e.Ref.ID == id {
			out = append(out, e)
		}
	}
	return out
}

func has(kind, id string, code sourceproto.CloseCode) func([]event) bool {
	return func(evs []event) bool {
		for _, e := range of(evs, id) {
			if e.Kind == kind && (code == "" || e.Code == code) {
				return true
			}
		}
		return false
	}
}

func dump(evs []event) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString("  " + e.String() + "\n")
	}
	return b.String()
}

// kinds lists the event kinds with their close codes, for comparison.
func kinds(evs []event) string {
	var out []string
	for _, e := range evs {
		k := e.Kind
		if e.Kind == "closed" {
			k += ":" + string(e.Code)
		}
		out = append(out, k)
	}
	return strings.Join(out, " ")
}
