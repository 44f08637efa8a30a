package realm

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestSlotOf(t *testing.T) {
	for _, tc := range []struct {
		method string
		want   Slot
		ok     bool
	}{
		{"Runtime.evaluate", SlotRuntime, true},
		{"Runtime.getProperties", SlotRuntime, true},
		{"Runtime", SlotRuntime, true},
		{"Console.enable", SlotConsole, true},
		{"Log.enable", SlotConsole, true},
		{"Log.clear", SlotConsole, true},
		{"Debugger.getScriptSource", SlotSources, true},
		{"Debugger.setBlackboxedRanges", SlotSources, true},
		{"Debugger.getPossibleBreakpoints", SlotSources, true},
		{"Debugger.searchInContent", SlotSources, true},
		{"Debugger.setBreakpointByUrl", SlotDebugger, true},
		{"Debugger.pause", SlotDebugger, true},
		{"Debugger.enable", SlotDebugger, true},
		{"Debugger", SlotDebugger, true},
		{"Debugger.", SlotDebugger, true},
		{"Network.enable", 0, false},
		{"Page.navigate", 0, false},
		{"Profiler.start", 0, false},
		{"", 0, false},
		{".evaluate", 0, false},
		{"runtime.evaluate", 0, false},
		{"RuntimeX.evaluate", 0, false},
		{"Runtime2.evaluate", 0, false},
	} {
		got, ok := SlotOf(tc.method)
		if got != tc.want || ok != tc.ok {
			t.Errorf("SlotOf(%q) = %v, %v; want %v, %v", tc.method, got, ok, tc.want, tc.ok)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{KindHost.String(), "host"},
		{KindClient.String(), "client"},
		{Kind(0).String(), "kind(0)"},
		{Kind(9).String(), "kind(9)"},
		{SlotRuntime.String(), "Runtime"},
		{SlotConsole.String(), "Console"},
		{SlotSources.String(), "Sources"},
		{SlotDebugger.String(), "Debugger"},
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
	for s := SlotRuntime; s < numSlots; s++ {
		if got := h.Slot(s); !got.Supported || got.Reason != "" {
			t.Errorf("host slot %v = %+v, want supported without a reason", s, got)
		}
		got := c.Slot(s)
		if s == SlotDebugger {
			if got.Supported || !strings.Contains(got.Reason, "read-only") {
				t.Errorf("client slot %v = %+v, want unsupported with a read-only reason", s, got)
			}
			continue
		}
		if !got.Supported {
			t.Errorf("client slot %v = %+v, want supported", s, got)
		}
	}
}

// methods is every kind of method Check distinguishes.
var methods = []string{
	"Runtime.evaluate", "Runtime.callFunctionOn", "Runtime.getProperties", "Runtime.enable",
	"Runtime.compileScript", "Runtime.runScript",
	"Console.enable", "Log.enable",
	"Debugger.getScriptSource", "Debugger.setBlackboxedRanges", "Debugger.getPossibleBreakpoints", "Debugger.searchInContent",
	"Debugger.enable", "Debugger.pause", "Debugger.resume",
	"Debugger.setBreakpoint", "Debugger.setBreakpointByUrl", "Debugger.continueToLocation",
	"Debugger.evaluateOnCallFrame", "Debugger.setScriptSource",
	"Network.enable", "Page.reload", "Target.setAutoAttach", "",
}

func TestHostRealmServesEverything(t *testing.T) {
	h := NewHostRealm("app.js")
	for _, m := range methods {
		if err := h.Check(m); err != nil {
			t.Errorf("host Check(%q) = %v, want nil: the host serves every method natively", m, err)
		}
	}
}

func TestClientRealmCheck(t *testing.T) {
	c := NewClientRealm("s1", "page")
	refused := map[string]string{ // method → substring of the reason
		"Debugger.setBreakpoint":       "read-only",
		"Debugger.setBreakpointByUrl":  "read-only",
		"Debugger.continueToLocation":  "read-only",
		"Debugger.evaluateOnCallFrame": "read-only",
		"Debugger.setScriptSource":     "read-only",
		"Debugger.enable":              "read-only", // the whole Debugger slot
		"Debugger.pause":               "read-only",
		"Debugger.resume":              "read-only",
		"Runtime.runScript":            "not kept",
	}
	for _, m := range methods {
		err := c.Check(m)
		want, isRefused := refused[m]
		if !isRefused {
			if err != nil {
				t.Errorf("client Check(%q) = %v, want nil", m, err)
			}
			continue
		}
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("client Check(%q) = %v, want an error matching ErrUnsupported", m, err)
			continue
		}
		var ue *UnsupportedError
		if !errors.As(err, &ue) {
			t.Fatalf("client Check(%q) = %T, want *UnsupportedError", m, err)
		}
		if ue.Realm != "client:s1" || ue.Method != m || !strings.Contains(ue.Reason, want) {
			t.Errorf("client Check(%q) = %+v, want realm client:s1, method %q and a reason mentioning %q", m, ue, m, want)
		}
		if msg := err.Error(); !strings.Contains(msg, m) || !strings.Contains(msg, "client:s1") || !strings.Contains(msg, ue.Reason) {
			t.Errorf("client Check(%q).Error() = %q, want it to name the method, the realm and the reason", m, msg)
		}
	}
}

func TestUnsupportedErrorWrapped(t *testing.T) {
	err := fmt.Errorf("route: %w", NewClientRealm("s", "p").Check("Debugger.setBreakpointByUrl"))
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
