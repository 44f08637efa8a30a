package cdpserver

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/inspector-worker/inspector-worker/pagerealm"
)

// docs/methods.md is generated from the method table; a stale copy fails
// here.
func TestMethodsDocFresh(t *testing.T) {
	have, err := os.ReadFile("../docs/methods.md")
	if err != nil {
		t.Fatalf("docs/methods.md: %v; generate it with `go generate ./cdpserver`", err)
	}
	if !bytes.Equal(have, MethodsMarkdown()) {
		t.Fatal("docs/methods.md is stale: the method table (cdpserver/methods.go) changed; " +
			"regenerate it with `go generate ./cdpserver` and commit it")
	}
}

// The pages' column: what a page refuses, with its reason; what it answers
// itself; what never reaches it. (These were the client realm's slots.)
func TestMethodTablePageColumn(t *testing.T) {
	refused := map[string]string{ // method → substring of the reason
		"Debugger.setBreakpoint":       "read-only",
		"Debugger.setBreakpointByUrl":  "read-only",
		"Debugger.continueToLocation":  "read-only",
		"Debugger.evaluateOnCallFrame": "read-only",
		"Debugger.setScriptSource":     "read-only",
		"Runtime.runScript":            "not kept",
	}
	for m, want := range refused {
		if r := pageRuleOf(m); r.Answer != pageRefusal || !strings.Contains(r.Reason, want) {
			t.Errorf("pages' column of %s = %+v, want a refusal mentioning %q", m, r, want)
		}
	}
	// The Debugger proper never reaches a page: pages never pause.
	for _, m := range []string{"Debugger.enable", "Debugger.pause", "Debugger.resume", "Debugger.stepOver"} {
		if r := pageRuleOf(m); r.Answer != pageHost {
			t.Errorf("pages' column of %s = %+v, want the host's", m, r)
		}
	}
	// Sources: read or answered for a client script.
	for m, want := range map[string]pagerealm.Answer{
		"Debugger.getScriptSource": pageScriptRead, "Debugger.getPossibleBreakpoints": pageLiteral,
		"Debugger.setBlackboxedRanges": pageLiteral,
	} {
		if r := pageRuleOf(m); r.Answer != want {
			t.Errorf("pages' column of %s = %+v, want answer %d", m, r, want)
		}
	}
	// Runtime: the agent's methods have handlers; another Runtime method
	// is refused by runtimeCommand, naming those.
	agent := []string{"Runtime.awaitPromise", "Runtime.callFunctionOn", "Runtime.compileScript", "Runtime.evaluate",
		"Runtime.getProperties", "Runtime.globalLexicalScopeNames", "Runtime.releaseObject"}
	for _, m := range agent {
		if r := pageRuleOf(m); r.Answer != pageAgent || r.Runtime == nil {
			t.Errorf("pages' column of %s = %+v, want the agent's handler", m, r)
		}
	}
	if got := pageAgentMethods(); !slices.Equal(got, agent) {
		t.Errorf("pageAgentMethods = %v, want %v", got, agent)
	}
	if r := pageRuleOf("Runtime.queryObjects"); r.Answer != pageAgent || r.Runtime != nil {
		t.Errorf("pages' column of Runtime.queryObjects = %+v, want the agent without a handler (refused, naming the served)", r)
	}
	// Domains a page never answers.
	for _, m := range []string{"Profiler.start", "Console.enable", "HeapProfiler.enable"} {
		if r := pageRuleOf(m); r.Answer != pageAbsent && r.Answer != pageHost {
			t.Errorf("pages' column of %s = %+v, want none", m, r)
		}
		if e, _ := lookupMethod(m); e.keys != 0 {
			t.Errorf("%s has realm keys %b, want the host only", m, e.keys)
		}
	}
}

// The watch column keeps the replay order --watch always had.
func TestMethodTableWatchColumn(t *testing.T) {
	want := []string{
		"Debugger.setPauseOnExceptions", "Debugger.setAsyncCallStackDepth", "Debugger.setBlackboxPatterns",
		"Debugger.setBreakpointsActive", "Debugger.setSkipAllPauses", "Runtime.setAsyncCallStackDepth",
	}
	if !slices.Equal(watchedSettings, want) {
		t.Errorf("watchedSettings = %v, want %v", watchedSettings, want)
	}
	// What hostrealm.WatchState is handed is the same column.
	if !slices.Equal(watchTable.Settings, want) {
		t.Errorf("watchTable.Settings = %v, want %v", watchTable.Settings, want)
	}
	for m, e := range methods {
		if got := watchTable.Rule(m); got != e.watch {
			t.Errorf("watchTable.Rule(%s) = %v, want the table's %v", m, got, e.watch)
		}
	}
	for _, m := range []string{"Runtime.enable", "Runtime.disable", "Debugger.enable", "Debugger.disable",
		"Profiler.enable", "Profiler.disable", "Debugger.setBreakpointByUrl", "Debugger.setBreakpoint", "Debugger.removeBreakpoint"} {
		if methods[m].watch == watchNo {
			t.Errorf("%s is not replayed by --watch", m)
		}
	}
	for m, e := range methods {
		if e.watch != watchNo && e.kind != answerRouted {
			t.Errorf("%s: --watch replays only what Node answers, but the entry is not routed", m)
		}
	}
}
