//go:build linux

package cdpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	cdptarget "github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// attachedSession returns the sessionId of the attachedToTarget event for
// targetID among the messages received.
func attachedSession(cl *cdptest.Client, targetID string) string {
	for _, m := range cl.All() {
		if m.Method != "Target.attachedToTarget" {
			continue
		}
		var p struct {
			SessionID  string     `json:"sessionId"`
			TargetInfo targetInfo `json:"targetInfo"`
		}
		if json.Unmarshal(m.Params, &p) == nil && string(p.TargetInfo.TargetID) == targetID {
			return p.SessionID
		}
	}
	return ""
}

// TestBrowserPageTargets: with two real pages connected, the browser
// endpoint discovers the combined target and each page's own target,
// auto-attaches all three (Puppeteer's filter, which excludes "page"),
// and each page's session evaluates in that page alone. A page that
// closes is destroyed and its session detached; the others go on.
func TestBrowserPageTargets(t *testing.T) {
	w, reg, token := targetWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	titles := []string{"Browser page A", "Browser page B"}
	_, kill := targetPages(t, reg, token, titles...)
	list := listTargets(t, w, 3)
	ta, tb := targetByTitle(t, list, titles[0]), targetByTitle(t, list, titles[1])

	cl := w.dialBrowser(t, "browser")
	cl.SetTimeout(2 * time.Minute)
	cl.MustCall("Target.setDiscoverTargets", map[string]any{"discover": true, "filter": []map[string]any{{}}})
	for _, id := range []string{w.srv.TargetID(), ta.ID, tb.ID} {
		cl.ExpectAnyEvent("Target.targetCreated", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), id) })
	}
	m := cl.MustCall("Target.getTargets", nil)
	for _, id := range []string{w.srv.TargetID(), ta.ID, tb.ID} {
		if !strings.Contains(string(m.Result), id) {
			t.Fatalf("Target.getTargets lacks %s: %s", id, m.Result)
		}
	}
	cl.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true,
		"filter": []map[string]any{{"type": "page", "exclude": true}, {}}})
	sa, sb, sc := attachedSession(cl, ta.ID), attachedSession(cl, tb.ID), attachedSession(cl, w.srv.TargetID())
	if sa == "" || sb == "" || sc == "" {
		t.Fatalf("auto-attach before the answer: page A %q, page B %q, combined %q", sa, sb, sc)
	}
	for _, c := range []struct{ session, title string }{{sa, titles[0]}, {sb, titles[1]}} {
		r := cl.CallIn(c.session, "Runtime.evaluate", map[string]any{"expression": "document.title + ' ' + typeof process", "returnByValue": true})
		if !strings.Contains(string(r.Result), `"value":"`+c.title+` undefined"`) {
			t.Fatalf("session %s: document.title: %s", c.session, r.Raw)
		}
	}
	if got := evalPID(t, cl, sc); got != w.proc.PID() {
		t.Fatalf("combined session: process.pid = %d", got)
	}

	// A request page B never answers is answered when B goes.
	waiting := cl.SendTo(sb, "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
	kill(1) // page B's browser goes
	if m := cl.ExpectResponse(waiting); m.Error == nil {
		t.Fatalf("the evaluation page B left waiting: %s", m.Raw)
	} else {
		t.Logf("page B gone: its waiting request answered %q", m.Error.Message)
	}
	cl.ExpectAnyEvent("Target.targetDestroyed", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), tb.ID) })
	cl.ExpectAnyEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), sb) })
	r := cl.CallIn(sa, "Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true})
	if !strings.Contains(string(r.Result), titles[0]) {
		t.Fatalf("page A after B closed: %s", r.Raw)
	}
}

// TestChromedpPageTarget: chromedp attaches to a connected page's own
// target through the worker's HTTP address and evaluates there.
func TestChromedpPageTarget(t *testing.T) {
	w, reg, token := targetWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	titles := []string{"chromedp page"}
	targetPages(t, reg, token, titles...)
	tp := targetByTitle(t, listTargets(t, w, 2), titles[0])
	ctx, cancel := context.WithTimeout(context.Background(), 2*cdptest.Timeout)
	defer cancel()
	allocCtx, cancelAlloc := remote.NewAllocator(ctx, "http://"+w.srv.Addr())
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
	defer cancelBrowser()
	targets, err := chromedp.Targets(bctx)
	if err != nil {
		t.Fatalf("chromedp.Targets: %v", err)
	}
	if len(targets) != 2 {
		t.Fatalf("chromedp.Targets: %d targets, want the combined one and the page's", len(targets))
	}
	tctx, cancelTarget := chromedp.NewContext(bctx, chromedp.WithTargetID(cdptarget.ID(tp.ID)))
	defer cancelTarget()
	title, err := chromedp.Run(tctx, chromedp.Evaluate[string]("document.title"))
	if err != nil {
		t.Fatalf("chromedp.Evaluate in the page: %v", err)
	}
	if title != titles[0] {
		t.Fatalf("chromedp evaluated document.title = %q", title)
	}
}
