package realm

import (
	"errors"
	"fmt"
)

// Kind says what runs a realm.
type Kind int

const (
	KindHost   Kind = iota + 1 // the Node.js host process
	KindClient                 // a browser page running client/js
)

func (k Kind) String() string {
	switch k {
	case KindHost:
		return "host"
	case KindClient:
		return "client"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// ErrUnsupported is matched by every *UnsupportedError.
var ErrUnsupported = errors.New("realm: unsupported")

// UnsupportedError says which realm refused which method, and why.
type UnsupportedError struct {
	Realm  string
	Method string
	Reason string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s is not supported in realm %s: %s", e.Method, e.Realm, e.Reason)
}

func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// Realm is one JavaScript realm. Static after construction. What a realm
// answers is not here: it is the realm kind's column of the worker's method
// table (cdpserver/methods.go), which refuses with an *UnsupportedError.
type Realm struct {
	ID   string // "host", or "client:<source id>"
	Kind Kind
	Name string // shown to the user (context selector, messages)
}

// NewHostRealm describes the Node host, served by its own inspector session.
func NewHostRealm(name string) *Realm {
	return &Realm{ID: "host", Kind: KindHost, Name: name}
}

// NewClientRealm describes a browser page, served by its client agent (see
// docs/protocol.md).
func NewClientRealm(sourceID, name string) *Realm {
	return &Realm{ID: "client:" + sourceID, Kind: KindClient, Name: name}
}
