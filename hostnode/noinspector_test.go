package hostnode

import (
	"slices"
	"strings"
	"testing"
)

// With NoInspector, Start returns without waiting for a URL (a script that
// never prints one is not an error), node gets no inspect flag, and its
// output and exit code come through as usual.
func TestStartNoInspector(t *testing.T) {
	ctx := testCtx(t)
	out := newLineSink()
	p := startNode(t, ctx, Options{
		Argv:        []string{"node", writeScript(t, `console.log(String(require("node:inspector").url())); process.exitCode = 4`)},
		NoInspector: true, Wait: true, Stdout: out,
	})
	if p.InspectorURL() != "" {
		t.Errorf("InspectorURL = %q, want none", p.InspectorURL())
	}
	if i := slices.IndexFunc(p.NodeArgs(), func(a string) bool { return strings.HasPrefix(a, "--inspect") }); i >= 0 {
		t.Errorf("node got %q: %q", p.NodeArgs()[i], p.NodeArgs())
	}
	<-p.Done()
	if got := p.ExitCode(); got != 4 {
		t.Errorf("ExitCode = %d, want 4; stderr:\n%s", got, p.StderrTail())
	}
	if got := strings.TrimSpace(out.String()); got != "undefined" {
		t.Errorf("inspector.url() in node = %q, want undefined (no inspector)", got)
	}
}
