package realm

import (
	"errors"
	"fmt"
	"strings"
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

// Slot is one of the capability slots every realm has.
type Slot int

const (
	SlotRuntime Slot = iota
	SlotConsole
	SlotSources
	SlotDebugger
	numSlots
)

func (s Slot) String() string {
	if s < 0 || s >= numSlots {
		return fmt.Sprintf("slot(%d)", int(s))
	}
	return [...]string{"Runtime", "Console", "Sources", "Debugger"}[s]
}

// Capability is what a realm offers in one slot. An unsupported slot always
// carries a reason a DevTools user can act on.
type Capability struct {
	Supported bool
	Reason    string // why not, when !Supported
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

// Realm is one JavaScript realm. Static after construction.
type Realm struct {
	ID   string // "host", or "client:<source id>"
	Kind Kind
	Name string // shown to the user (context selector, messages)

	slots       [numSlots]Capability
	unsupported map[string]string // method → reason, inside supported slots
}

// NewHostRealm describes the Node host: every slot is served natively by the
// host's own inspector session.
func NewHostRealm(name string) *Realm {
	r := &Realm{ID: "host", Kind: KindHost, Name: name}
	for i := range r.slots {
		r.slots[i] = Capability{Supported: true}
	}
	return r
}

// clientReadOnly is why client scripts cannot be debugged: page JavaScript
// cannot pause its own realm and keep serving the worker's control messages.
const clientReadOnly = "client scripts are read-only: a page cannot pause its own JavaScript and still answer the worker"

// NewClientRealm describes a browser page. Runtime, Console and Sources are
// served by the page's client agent (see docs/protocol.md); active debugging
// is refused with a reason.
func NewClientRealm(sourceID, name string) *Realm {
	r := &Realm{ID: "client:" + sourceID, Kind: KindClient, Name: name}
	r.slots[SlotRuntime] = Capability{Supported: true}
	r.slots[SlotConsole] = Capability{Supported: true}
	r.slots[SlotSources] = Capability{Supported: true}
	r.slots[SlotDebugger] = Capability{Reason: clientReadOnly}
	r.unsupported = map[string]string{
		"Debugger.setBreakpoint":       clientReadOnly,
		"Debugger.setBreakpointByUrl":  clientReadOnly,
		"Debugger.continueToLocation":  clientReadOnly,
		"Debugger.evaluateOnCallFrame": clientReadOnly,
		"Debugger.setScriptSource":     clientReadOnly,
		"Runtime.runScript":            "the client agent evaluates source text directly: compiled scripts are not kept (Runtime.compileScript checks syntax only)",
	}
	return r
}

// Slot returns the realm's capability in slot s.
func (r *Realm) Slot(s Slot) Capability { return r.slots[s] }

// SlotOf says which slot a CDP method belongs to.
func SlotOf(method string) (Slot, bool) {
	domain, name, _ := strings.Cut(method, ".")
	switch domain {
	case "Runtime":
		return SlotRuntime, true
	case "Console", "Log":
		return SlotConsole, true
	case "Debugger":
		switch name {
		case "getScriptSource", "setBlackboxedRanges", "getPossibleBreakpoints", "searchInContent":
			return SlotSources, true
		}
		return SlotDebugger, true
	}
	return 0, false
}

// Check returns nil when the realm serves method, and an *UnsupportedError
// naming the reason otherwise. Methods outside the four slots are not the
// realm's business and pass.
func (r *Realm) Check(method string) error {
	if reason, ok := r.unsupported[method]; ok {
		return &UnsupportedError{Realm: r.ID, Method: method, Reason: reason}
	}
	s, ok := SlotOf(method)
	if !ok {
		return nil
	}
	if c := r.slots[s]; !c.Supported {
		return &UnsupportedError{Realm: r.ID, Method: method, Reason: c.Reason}
	}
	return nil
}
