package realm

import (
	"errors"
	"fmt"
	"testing"
)

func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{KindHost.String(), "host"},
		{KindClient.String(), "client"},
		{Kind(0).String(), "kind(0)"},
		{Kind(9).String(), "kind(9)"},
	} {
		if tc.got != tc.want {
			t.Errorf("String() = %q, want %q", tc.got, tc.want)
		}
	}
}

func TestNewRealms(t *testing.T) {
	h := NewHostRealm("app.js")
	if h.ID != "host" || h.Kind != KindHost || h.Name != "app.js" {
		t.Errorf("NewHostRealm = {%q %v %q}, want {host host app.js}", h.ID, h.Kind, h.Name)
	}
	c := NewClientRealm("s1", "page")
	if c.ID != "client:s1" || c.Kind != KindClient || c.Name != "page" {
		t.Errorf("NewClientRealm = {%q %v %q}, want {client:s1 client page}", c.ID, c.Kind, c.Name)
	}
}

func TestUnsupportedErrorWrapped(t *testing.T) {
	err := fmt.Errorf("route: %w", &UnsupportedError{Realm: "client:s", Method: "Debugger.setBreakpointByUrl", Reason: "read-only"})
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("wrapped %v does not match ErrUnsupported", err)
	}
	if errors.Is(err, ErrNoContext) {
		t.Errorf("%v matches ErrNoContext, want only ErrUnsupported", err)
	}
	if errors.Is(errors.New("realm: unsupported"), ErrUnsupported) {
		t.Error("an unrelated error with the same text matches ErrUnsupported")
	}
}
