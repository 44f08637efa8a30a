package object

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Handle names an object inside one backend: the realm that holds it, the
// generation of that realm's source (a page reload is a new generation), and
// the backend's own opaque handle.
type Handle struct {
	Realm      string
	Generation uint64
	ID         string
}

// idPrefix marks objectIds the table hands out. V8's objectIds are numeric
// ("-1234.1.5"), so a prefixed id can never be mistaken for one.
const idPrefix = "iw:"

// Bounds of one connection's table. Realms share it: each realm (a page;
// the host's V8 objectIds never enter a table) may hold at most its share,
// so a page that floods a window with handles (console events carry one
// per object argument) exhausts its own share, not the window: before, one
// page's 115,200 handles filled a window's table in 1.6 s and every other
// page's evaluations in that window failed until the Console was cleared.
const (
	// MaxObjects bounds one connection's table: a DevTools window that
	// expands objects for hours holds a few thousand; past the bound Add
	// refuses, except to a realm under its reserve.
	MaxObjects = 100_000
	// MaxRealmObjects is one realm's share of a table: a quarter, so one
	// page can take no more than that however much it sends, and four
	// must collude to fill a table.
	MaxRealmObjects = MaxObjects / 4
	// RealmReserve is what a realm may always hold, even in a full table:
	// pages that fill a table together cannot lock another page out of a
	// window (an honest window holds a few hundred objects per page). A
	// table thus holds at most MaxObjects plus RealmReserve per realm
	// (pages are bounded by the worker's connection limit).
	RealmReserve = 1000
)

type entry struct {
	h     Handle
	group string
}

// Table maps backend handles to connection-local CDP objectIds. One Table
// belongs to one DevTools connection; it is safe for concurrent use because
// the connection's read loop and its backends' result paths both touch it.
type Table struct {
	mu     sync.Mutex                     // Lock order: see docs/locks.md.
	next   uint64                         // Guarded by mu.
	byID   map[string]entry               // Guarded by mu.
	groups map[string]map[string]struct{} // Guarded by mu: group → objectIds.
	realms map[string]int                 // Guarded by mu: realm → objects it holds.
}

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{byID: map[string]entry{}, groups: map[string]map[string]struct{}{}, realms: map[string]int{}}
}

// Owns reports whether objectID was handed out by a Table (as opposed to a
// host V8 objectId, which passes through untouched).
func Owns(objectID string) bool { return strings.HasPrefix(objectID, idPrefix) }

// Add gives h a new objectId in group ("" = no group). It returns false when
// h's realm holds its share, or the table is full and the realm holds its
// reserve (Full says which).
func (t *Table) Add(h Handle, group string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fullLocked(h.Realm) {
		return "", false
	}
	t.next++
	id := idPrefix + strconv.FormatUint(t.next, 10)
	t.byID[id] = entry{h: h, group: group}
	t.realms[h.Realm]++
	if group != "" {
		g := t.groups[group]
		if g == nil {
			g = map[string]struct{}{}
			t.groups[group] = g
		}
		g[id] = struct{}{}
	}
	return id, true
}

func (t *Table) fullLocked(realm string) bool {
	n := t.realms[realm]
	return n >= MaxRealmObjects || (len(t.byID) >= MaxObjects && n >= RealmReserve)
}

// FullError says why Add refuses a realm.
type FullError struct {
	Realm string // the realm refused
	Held  int    // the objects it holds
	Total int    // the objects in the table
	// Share: the realm holds its share (MaxRealmObjects); otherwise the
	// table holds MaxObjects and the realm at least its reserve.
	Share bool
	// Top is the realm holding the most objects, and TopHeld how many.
	Top     string
	TopHeld int
}

func (e *FullError) Error() string {
	if e.Share {
		return fmt.Sprintf("object: realm %s holds %d objects, its share of the table (MaxRealmObjects)", e.Realm, e.Held)
	}
	return fmt.Sprintf("object: the table holds %d objects (MaxObjects), the most (%d) of realm %s", e.Total, e.TopHeld, e.Top)
}

// Full returns why Add would refuse realm now, or nil when it would not.
func (t *Table) Full(realm string) *FullError {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.fullLocked(realm) {
		return nil
	}
	e := &FullError{Realm: realm, Held: t.realms[realm], Total: len(t.byID), Share: t.realms[realm] >= MaxRealmObjects}
	for r, n := range t.realms {
		if n > e.TopHeld || (n == e.TopHeld && r < e.Top) {
			e.Top, e.TopHeld = r, n
		}
	}
	return e
}

// Held is the number of objects realm holds.
func (t *Table) Held(realm string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.realms[realm]
}

// Lookup returns the handle behind objectID.
func (t *Table) Lookup(objectID string) (Handle, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byID[objectID]
	return e.h, ok
}

// Entry returns the handle behind objectID and its group.
func (t *Table) Entry(objectID string) (Entry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byID[objectID]
	return Entry{Handle: e.h, Group: e.group}, ok
}

// Release forgets objectID and returns its handle for the backend to release.
func (t *Table) Release(objectID string) (Handle, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byID[objectID]
	if !ok {
		return Handle{}, false
	}
	t.removeLocked(objectID, e)
	return e.h, true
}

// ReleaseGroup forgets every object of group and returns their handles.
func (t *Table) ReleaseGroup(group string) []Handle {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Handle
	for id := range t.groups[group] {
		e := t.byID[id]
		out = append(out, e.h)
		delete(t.byID, id)
		t.forgetRealmLocked(e.h.Realm)
	}
	delete(t.groups, group)
	return out
}

// DropRealm forgets every object of a realm generation (the source closed or
// was replaced); the backend is gone, so nothing is returned to release.
func (t *Table) DropRealm(realm string, generation uint64) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for id, e := range t.byID {
		if e.h.Realm == realm && e.h.Generation == generation {
			t.removeLocked(id, e)
			n++
		}
	}
	return n
}

// Entry is one live object as Drain hands it back.
type Entry struct {
	Handle Handle
	Group  string
}

// Drain forgets every object and returns them, for a connection that closes:
// its caller tells each backend to release the handles it still holds.
func (t *Table) Drain() []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Entry, 0, len(t.byID))
	for _, e := range t.byID {
		out = append(out, Entry{Handle: e.h, Group: e.group})
	}
	clear(t.byID)
	clear(t.groups)
	clear(t.realms)
	return out
}

// Len is the number of live objects.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID)
}

func (t *Table) removeLocked(id string, e entry) {
	delete(t.byID, id)
	t.forgetRealmLocked(e.h.Realm)
	if g := t.groups[e.group]; g != nil {
		delete(g, id)
		if len(g) == 0 {
			delete(t.groups, e.group)
		}
	}
}

func (t *Table) forgetRealmLocked(realm string) {
	if t.realms[realm]--; t.realms[realm] <= 0 {
		delete(t.realms, realm)
	}
}
