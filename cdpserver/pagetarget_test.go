package cdpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// TestPageTargetMethodTableAnswers sends every method of the method table
// (and a few it does not list) to a page target's session, all at once,
// and requires exactly one answer to each, as the page-target column says:
// its literal for a no-op, its reason for a refusal, -32601 for a method
// it does not know. A page played by fakeAgent; its Runtime deadline is
// short, so a command nobody answers is answered by it.
func TestPageTargetMethodTableAnswers(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: 2 * time.Second})
	openAgent(t, reg, token, "p1", "Table page")
	pt := targetByTitle(t, listTargets(t, w, 2), "Table page")
	c := cdptest.Dial(t, "target", pt.WebSocketDebuggerURL, nil)
	extra := []string{"Runtime.addBinding", "Debugger.enable", "Profiler.start", "HeapProfiler.enable", "NoSuch.method"}
	ms := append(sortedMethods(), extra...)
	ids := make(map[string]int64, len(ms))
	for _, m := range ms {
		ids[m] = c.Send(m, map[string]any{})
	}
	for _, m := range ms {
		ans := c.ExpectResponse(ids[m])
		e, ok := targetEntryOf(m)
		switch {
		case !ok:
			if ans.Error == nil || ans.Error.Code != -32601 {
				t.Errorf("%s: %s, want -32601", m, ans.Raw)
			}
		case e.kind == answerNoop:
			if ans.Error != nil || string(ans.Result) != e.result {
				t.Errorf("%s: %s, want the no-op's %s", m, ans.Raw, e.result)
			}
		case e.kind == answerRefusal:
			if ans.Error == nil || ans.Error.Message != e.reason {
				t.Errorf("%s: %s, want the refusal %q", m, ans.Raw, e.reason)
			}
		}
	}
	// Exactly once: nothing answers any request a second time.
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "1"})
	seen := map[int64]int{}
	for _, m := range c.All() {
		if m.ID != nil {
			seen[*m.ID]++
		}
	}
	for m, id := range ids {
		if seen[id] != 1 {
			t.Errorf("%s was answered %d times", m, seen[id])
		}
	}
	t.Logf("%d methods, each answered once", len(ms))
}

// listTargets waits until /json/list lists n targets and returns them.
func listTargets(t *testing.T, w *worker, n int) []targetJSON {
	t.Helper()
	deadline := time.Now().Add(cdptest.Timeout)
	for {
		resp, err := w.get("/json/list", "")
		if err != nil {
			t.Fatal(err)
		}
		var list []targetJSON
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == n {
			return list
		}
		if time.Now().After(deadline) {
			t.Fatalf("/json/list lists %d targets, want %d: %+v", len(list), n, list)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// targetByTitle finds a page target in list.
func targetByTitle(t *testing.T, list []targetJSON, title string) targetJSON {
	t.Helper()
	for _, tj := range list[1:] {
		if tj.Title == title {
			return tj
		}
	}
	t.Fatalf("no page target titled %q in %+v", title, list)
	return targetJSON{}
}

// refused calls method and requires an error whose message contains want.
func refused(t *testing.T, c *cdptest.Client, method string, params any, want string) string {
	t.Helper()
	m := c.Call(method, params)
	if m.Error == nil {
		t.Fatalf("%s %v was answered %s, want an error saying %q", method, params, m.Result, want)
	}
	if !strings.Contains(m.Error.Message, want) {
		t.Fatalf("%s %v: error %q, want it to say %q", method, params, m.Error.Message, want)
	}
	return m.Error.Message
}
