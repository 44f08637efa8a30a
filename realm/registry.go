package realm

import (
	"errors"
	"fmt"
	"sync"
)

// ErrNoContext is returned when a request names an execution context no realm owns.
var ErrNoContext = errors.New("realm: cannot find context with specified id")

// Registry holds the realms of one worker and routes Runtime requests to them
// by executionContextId and uniqueContextId. It is shared by every DevTools
// connection; context ids are the same in all of them (V8 numbers contexts
// per isolate, not per session; client contexts are numbered by the worker).
//
// Routing rule: positive (or absent) context ids are V8's, so they go to the
// host; negative ids are the worker's synthetic client contexts and must be
// bound. A uniqueContextId is looked up; one nobody bound goes to the host,
// whose V8 answers with its own "cannot find context" error.
type Registry struct {
	host *Realm // Static after construction.

	mu       sync.RWMutex      // Lock order: see docs/locks.md.
	realms   map[string]*Realm // Guarded by mu.
	contexts map[int]*Realm    // Guarded by mu: negative (client) context ids only.
	unique   map[string]*Realm // Guarded by mu.
}

// NewRegistry returns a registry holding the host realm.
func NewRegistry(host *Realm) *Registry {
	return &Registry{
		host:     host,
		realms:   map[string]*Realm{host.ID: host},
		contexts: map[int]*Realm{},
		unique:   map[string]*Realm{},
	}
}

// Host returns the host realm.
func (g *Registry) Host() *Realm { return g.host }

// Add registers a realm; ids are unique.
func (g *Registry) Add(r *Realm) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, dup := g.realms[r.ID]; dup {
		return fmt.Errorf("realm: %q is already registered", r.ID)
	}
	g.realms[r.ID] = r
	return nil
}

// Remove forgets a realm and every context bound to it. The host stays.
func (g *Registry) Remove(id string) {
	if id == g.host.ID {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.realms, id)
	for k, r := range g.contexts {
		if r.ID == id {
			delete(g.contexts, k)
		}
	}
	for k, r := range g.unique {
		if r.ID == id {
			delete(g.unique, k)
		}
	}
}

// Get returns a registered realm.
func (g *Registry) Get(id string) (*Realm, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	r, ok := g.realms[id]
	return r, ok
}

// BindContext records that realm r owns the context (id, uniqueID). Host
// contexts are bound by uniqueID only; client contexts must use negative ids.
func (g *Registry) BindContext(r *Realm, id int, uniqueID string) error {
	if r.Kind == KindClient && id >= 0 {
		return fmt.Errorf("realm: client context id %d must be negative", id)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.realms[r.ID]; !ok {
		return fmt.Errorf("realm: %q is not registered", r.ID)
	}
	if id < 0 {
		g.contexts[id] = r
	}
	if uniqueID != "" {
		g.unique[uniqueID] = r
	}
	return nil
}

// UnbindContext forgets a context.
func (g *Registry) UnbindContext(id int, uniqueID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.contexts, id)
	delete(g.unique, uniqueID)
}

// Route returns the realm that owns a request's context. contextID is nil when
// the request names none (the host's default context).
func (g *Registry) Route(contextID *int, uniqueID string) (*Realm, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if uniqueID != "" {
		if r, ok := g.unique[uniqueID]; ok {
			return r, nil
		}
		return g.host, nil
	}
	if contextID == nil || *contextID >= 0 {
		return g.host, nil
	}
	if r, ok := g.contexts[*contextID]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("%w: %d", ErrNoContext, *contextID)
}
