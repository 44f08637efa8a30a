package cdpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/pagerealm"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

var hostRef = sourceproto.SourceRef{ID: "host", Gen: 1, Role: sourceproto.RoleHost}

func appItems(from, n int) []sourceproto.Item {
	items := make([]sourceproto.Item, n)
	for i := range items {
		items[i] = sourceproto.Item{Topic: sourceproto.TopicApp, App: &sourceproto.AppEvent{
			Name: "tick", Timestamp: 1.7e12 + float64(from+i), Data: sourceproto.RawJSON(fmt.Sprintf(`{"i":%d}`, from+i))}}
	}
	return items
}

func logText(t *testing.T, m cdptest.Msg) (level, text string) {
	t.Helper()
	var p struct {
		Entry struct{ Level, Text string } `json:"entry"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("bad Log.entryAdded %s", m.Raw)
	}
	return p.Entry.Level, p.Entry.Text
}

func isObservation(m cdptest.Msg) bool {
	return strings.Contains(string(m.Params), `observe(\"tick\")`)
}

// Host observations (topic "app") show in the Console as info lines, live in
// an open window, replayed (the last pagerealm.MaxReplayPerContext, with the count of
// older ones) to a window that enables Runtime later, and forgotten when a
// window clears the console.
func TestHostObservationsInConsole(t *testing.T) {
	w, _, _ := clientWorker(t)
	live := w.dial("live")
	live.MustCall("Runtime.enable", nil)
	const n = pagerealm.MaxReplayPerContext + 5
	w.srv.clients.Appended(hostRef, 1, &sourceproto.Append{Items: appItems(0, n)})
	for i := range n {
		level, text := logText(t, live.ExpectEvent("Log.entryAdded", isObservation))
		if want := fmt.Sprintf(`observe("tick") {"i":%d}`, i); level != "info" || text != want {
			t.Fatalf("live observation %d: %s %q, want info %q", i, level, text, want)
		}
	}

	late := w.dial("late")
	late.MustCall("Runtime.enable", nil)
	_, warn := logText(t, late.ExpectEvent("Log.entryAdded", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "not replayed") }))
	if !strings.HasPrefix(warn, "[inspector-worker] 5 older host observations") {
		t.Errorf("replay warning %q", warn)
	}
	for i := 5; i < n; i++ {
		if _, text := logText(t, late.ExpectEvent("Log.entryAdded", isObservation)); text != fmt.Sprintf(`observe("tick") {"i":%d}`, i) {
			t.Fatalf("replayed observation %d: %q", i, text)
		}
	}

	late.MustCall("Runtime.discardConsoleEntries", nil)
	w.srv.clients.Appended(hostRef, 2, &sourceproto.Append{Items: []sourceproto.Item{
		{Topic: sourceproto.TopicApp, App: &sourceproto.AppEvent{Name: "nodata", Timestamp: 1.7e12}},
	}})
	third := w.dial("third")
	third.MustCall("Runtime.enable", nil)
	m := third.ExpectEvent("Log.entryAdded", nil)
	if _, text := logText(t, m); text != `observe("nodata")` {
		t.Errorf("after Runtime.discardConsoleEntries the replay starts with %q, want only the later observation", text)
	}
}

// TestHostObservationNameQuotedAsJSON: the Console line quotes an
// observation's name as JSON, like the data beside it. Go's %q wrote \a,
// \x7f and \xff, which JSON refuses and the Console's JavaScript reads as
// other characters ("\xff" is "ÿ", not the invalid byte).
func TestHostObservationNameQuotedAsJSON(t *testing.T) {
	for _, name := range []string{"bell\a", "del\x7f", "bad\xff", "sep\u2028", `q"uote`, "é"} {
		var m cdptest.Msg
		m.Params = []byte(strings.TrimSuffix(strings.TrimPrefix(string(cdpproject.AppObservation(&sourceproto.AppEvent{Name: name, Timestamp: 1.7e12}, time.Now())),
			`{"method":"Log.entryAdded","params":`), "}"))
		_, text := logText(t, m)
		quoted := strings.TrimSuffix(strings.TrimPrefix(text, "observe("), ")")
		var got string
		if err := json.Unmarshal([]byte(quoted), &got); err != nil || got != strings.ToValidUTF8(name, "\uFFFD") {
			t.Errorf("observe(%q) shows as %s: not the name quoted as JSON (%v, decoded %q)", name, text, err, got)
		}
	}
}

// Page.getResourceContent is answered for a page's document only; anything
// else is refused with the reason (never "wasn't found").
func TestResourceContentRefusals(t *testing.T) {
	w, reg, token := clientWorker(t)
	a := w.dial("A")
	enableAll(a)
	const url = "http://127.0.0.1:3000/"
	openPage(t, reg, token, "page-1", url, "Shop")
	ev := clientContextEvent(t, a)
	for _, tc := range []struct{ frame, url, want string }{
		{w.srv.TargetID(), "file:///tmp/", "the host frame has no document"},
		{ev.Context.AuxData.FrameID, url + "style.css", "is not the document of Shop"},
		{"nope", url, `no frame "nope"`},
	} {
		m := a.Call("Page.getResourceContent", map[string]any{"frameId": tc.frame, "url": tc.url})
		if m.Error == nil || m.Error.Code != codeServerError || !strings.Contains(m.Error.Message, tc.want) {
			t.Errorf("Page.getResourceContent(%s, %s) = %s, want -32000 containing %q", tc.frame, tc.url, m.Raw, tc.want)
		}
	}
}
