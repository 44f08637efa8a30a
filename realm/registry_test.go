package realm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func intp(i int) *int { return &i }

// newTestRegistry returns a registry with the host and two registered
// clients: a (contexts -1 "ua") and b (contexts -2 "ub"), and a host context
// bound by uniqueId "uh".
func newTestRegistry(t *testing.T) (g *Registry, a, b *Realm) {
	t.Helper()
	g = NewRegistry(NewHostRealm("app.js"))
	a, b = NewClientRealm("a", "page a"), NewClientRealm("b", "page b")
	for _, r := range []*Realm{a, b} {
		if err := g.Add(r); err != nil {
			t.Fatalf("Add(%s) = %v", r.ID, err)
		}
	}
	for _, bind := range []struct {
		r      *Realm
		id     int
		unique string
	}{{a, -1, "ua"}, {b, -2, "ub"}, {g.Host(), 1, "uh"}} {
		if err := g.BindContext(bind.r, bind.id, bind.unique); err != nil {
			t.Fatalf("BindContext(%s, %d, %q) = %v", bind.r.ID, bind.id, bind.unique, err)
		}
	}
	return g, a, b
}

func TestRoute(t *testing.T) {
	g, _, _ := newTestRegistry(t)
	for _, tc := range []struct {
		name      string
		contextID *int
		unique    string
		want      string // realm id; "" means ErrNoContext
	}{
		{"no context", nil, "", "host"},
		{"positive id", intp(1), "", "host"},
		{"unbound positive id", intp(77), "", "host"},
		{"zero id", intp(0), "", "host"},
		{"client a", intp(-1), "", "client:a"},
		{"client b", intp(-2), "", "client:b"},
		{"unbound negative id", intp(-3), "", ""},
		{"unique a", nil, "ua", "client:a"},
		{"unique b with a positive id", intp(5), "ub", "client:b"},
		{"unique host", nil, "uh", "host"},
		{"unknown unique goes to the host", nil, "nobody", "host"},
		{"unknown unique wins over an unbound negative id", intp(-3), "nobody", "host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := g.Route(tc.contextID, tc.unique)
			if tc.want == "" {
				if !errors.Is(err, ErrNoContext) {
					t.Fatalf("Route(%d, %q) = %v, %v; want ErrNoContext", *tc.contextID, tc.unique, r, err)
				}
				if !strings.Contains(err.Error(), strconv.Itoa(*tc.contextID)) {
					t.Errorf("Route error %q does not name context %d", err, *tc.contextID)
				}
				return
			}
			if err != nil || r == nil || r.ID != tc.want {
				t.Fatalf("Route(%v, %q) = %v, %v; want realm %s", tc.contextID, tc.unique, r, err, tc.want)
			}
		})
	}
}

func TestBindContext(t *testing.T) {
	g, a, _ := newTestRegistry(t)
	stranger := NewClientRealm("stranger", "not registered")
	for _, tc := range []struct {
		name    string
		r       *Realm
		id      int
		unique  string
		wantErr string // substring; "" means success
	}{
		{"client zero id", a, 0, "", "must be negative"},
		{"client positive id", a, 3, "u", "must be negative"},
		{"unregistered client", stranger, -9, "us", "not registered"},
		{"unregistered client bad id", stranger, 9, "", "must be negative"},
		{"client negative id", a, -5, "", ""},
		{"client rebinding", a, -1, "ua2", ""},
		{"host by unique id", g.Host(), 2, "uh2", ""},
		{"host without unique id", g.Host(), 3, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := g.BindContext(tc.r, tc.id, tc.unique)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("BindContext(%s, %d, %q) = %v, want nil", tc.r.ID, tc.id, tc.unique, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "realm: ") {
				t.Fatalf("BindContext(%s, %d, %q) = %v, want a realm: error mentioning %q", tc.r.ID, tc.id, tc.unique, err, tc.wantErr)
			}
		})
	}
	// Refused binds leave no trace.
	if r, err := g.Route(intp(-9), ""); !errors.Is(err, ErrNoContext) {
		t.Errorf("Route(-9) after a refused bind = %v, %v; want ErrNoContext", r, err)
	}
	if r, _ := g.Route(nil, "us"); r != g.Host() {
		t.Errorf("Route(unique us) after a refused bind = %v, want the host", r.ID)
	}
	if r, err := g.Route(intp(-5), ""); err != nil || r != a {
		t.Errorf("Route(-5) = %v, %v; want client:a", r, err)
	}
	if r, _ := g.Route(nil, "uh2"); r != g.Host() {
		t.Errorf("Route(unique uh2) = %v, want the host", r.ID)
	}
}

func TestUnbindContext(t *testing.T) {
	g, a, _ := newTestRegistry(t)
	g.UnbindContext(-1, "ua")
	if _, err := g.Route(intp(-1), ""); !errors.Is(err, ErrNoContext) {
		t.Errorf("Route(-1) after unbinding = %v, want ErrNoContext", err)
	}
	if r, _ := g.Route(nil, "ua"); r != g.Host() {
		t.Errorf("Route(unique ua) after unbinding = %s, want the host", r.ID)
	}
	if r, err := g.Route(intp(-2), ""); err != nil || r.ID != "client:b" {
		t.Errorf("Route(-2) = %v, %v; unbinding a's context must not touch b's", r, err)
	}
	if r, ok := g.Get(a.ID); !ok || r != a {
		t.Errorf("Get(%s) after unbinding its context = %v, %v; want the realm kept", a.ID, r, ok)
	}
	g.UnbindContext(-42, "never bound") // no-op, no panic
}

func TestRemove(t *testing.T) {
	g, a, b := newTestRegistry(t)
	if err := g.BindContext(a, -7, ""); err != nil {
		t.Fatal(err)
	}
	g.Remove(a.ID)
	if r, ok := g.Get(a.ID); ok {
		t.Errorf("Get(%s) after Remove = %v, want not found", a.ID, r)
	}
	for _, id := range []int{-1, -7} {
		if r, err := g.Route(intp(id), ""); !errors.Is(err, ErrNoContext) {
			t.Errorf("Route(%d) after Remove(%s) = %v, %v; want ErrNoContext", id, a.ID, r, err)
		}
	}
	if r, _ := g.Route(nil, "ua"); r != g.Host() {
		t.Errorf("Route(unique ua) after Remove(%s) = %s, want the host", a.ID, r.ID)
	}
	if r, err := g.Route(intp(-2), "ub"); err != nil || r != b {
		t.Errorf("Route(-2, ub) = %v, %v; removing a must keep b's contexts", r, err)
	}
	if r, _ := g.Route(nil, "uh"); r != g.Host() {
		t.Errorf("Route(unique uh) = %s, want the host", r.ID)
	}
	if err := g.BindContext(a, -8, ""); err == nil {
		t.Error("BindContext on a removed realm = nil, want a not-registered error")
	}
	if err := g.Add(a); err != nil {
		t.Errorf("Add of a removed realm = %v, want nil", err)
	}
	g.Remove("client:nobody") // no-op, no panic

	g.Remove("host")
	if r, ok := g.Get("host"); !ok || r != g.Host() {
		t.Errorf("Get(host) after Remove(host) = %v, %v; the host must stay", r, ok)
	}
	if r, _ := g.Route(nil, "uh"); r != g.Host() {
		t.Errorf("Route(unique uh) after Remove(host) = %v, want the host", r)
	}
	if err := g.BindContext(g.Host(), 1, "uh3"); err != nil {
		t.Errorf("BindContext(host) after Remove(host) = %v, want nil: the host stays registered", err)
	}
}

func TestAdd(t *testing.T) {
	g := NewRegistry(NewHostRealm("app.js"))
	a := NewClientRealm("a", "page a")
	if err := g.Add(a); err != nil {
		t.Fatalf("Add(client:a) = %v, want nil", err)
	}
	for _, r := range []*Realm{a, NewClientRealm("a", "same id, other page"), NewHostRealm("another host")} {
		err := g.Add(r)
		if err == nil || !strings.Contains(err.Error(), "already registered") || !strings.Contains(err.Error(), r.ID) {
			t.Errorf("Add(%s) twice = %v, want an already-registered error naming %q", r.ID, err, r.ID)
		}
	}
	if r, ok := g.Get("client:a"); !ok || r != a {
		t.Errorf("Get(client:a) = %v, %v; a refused Add must not replace the first realm", r, ok)
	}
	if r, ok := g.Get("host"); !ok || r != g.Host() {
		t.Errorf("Get(host) = %v, %v; a refused Add must not replace the host", r, ok)
	}
}

func TestRegistryConcurrent(t *testing.T) {
	g := NewRegistry(NewHostRealm("app.js"))
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := NewClientRealm(strconv.Itoa(w), "page")
			id := -(w + 1)
			unique := fmt.Sprint("u", w)
			for i := range rounds {
				if err := g.Add(r); err != nil {
					t.Errorf("worker %d round %d: Add = %v", w, i, err)
					return
				}
				if err := g.BindContext(r, id, unique); err != nil {
					t.Errorf("worker %d round %d: BindContext = %v", w, i, err)
					return
				}
				// Only this worker binds id and unique: they must be ours.
				if got, err := g.Route(intp(id), ""); err != nil || got != r {
					t.Errorf("worker %d round %d: Route(%d) = %v, %v; want its own realm", w, i, id, got, err)
					return
				}
				if got, _ := g.Route(nil, unique); got != r {
					t.Errorf("worker %d round %d: Route(unique %s) = %v; want its own realm", w, i, unique, got)
					return
				}
				// Other workers' contexts are theirs or gone, never ours.
				other := -((w+1)%workers + 1)
				if got, err := g.Route(intp(other), ""); err == nil && got == r {
					t.Errorf("worker %d round %d: Route(%d) returned this worker's realm", w, i, other)
					return
				}
				if got, _ := g.Route(intp(i), ""); got != g.Host() {
					t.Errorf("worker %d: Route(%d) = %v, want the host", w, i, got)
					return
				}
				g.Remove(r.ID)
				if _, err := g.Route(intp(id), ""); !errors.Is(err, ErrNoContext) {
					t.Errorf("worker %d round %d: Route(%d) after Remove = %v, want ErrNoContext", w, i, id, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got, ok := g.Get("host"); !ok || got != g.Host() {
		t.Errorf("Get(host) after the churn = %v, %v; want the host", got, ok)
	}
}
