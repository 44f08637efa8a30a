package object

import (
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

// MaxObjects bounds one connection's table: a DevTools window that expands
// objects for hours holds a few thousand; past the bound Add refuses.
const MaxObjects = 100_000

type entry struct {
	h     Handle
	group string
}

// Table maps backend handles to connection-local CDP objectIds. One Table
// belongs to one DevTools connection; it is safe for concurrent use because
// the connection's read loop and its backends' result paths both touch it.
type Table struct {
	mu     sync.Mutex
	next   uint64                         // Guarded by mu.
	byID   map[string]entry               // Guarded by mu.
	groups map[string]map[string]struct{} // Guarded by mu: group → objectIds.
}

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{byID: map[string]entry{}, groups: map[string]map[string]struct{}{}}
}

// Owns reports whether objectID was handed out by a Table (as opposed to a
// host V8 objectId, which passes through untouched).
func Owns(objectID string) bool { return strings.HasPrefix(objectID, idPrefix) }

// Add gives h a new objectId in group ("" = no group). It returns false when
// the table is full.
func (t *Table) Add(h Handle, group string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.byID) >= MaxObjects {
		return "", false
	}
	t.next++
	id := idPrefix + strconv.FormatUint(t.next, 10)
	t.byID[id] = entry{h: h, group: group}
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
	if g := t.groups[e.group]; g != nil {
		delete(g, id)
		if len(g) == 0 {
			delete(t.groups, e.group)
		}
	}
}
