//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// The client Runtime with real pages (headless Chromium running the shipped
// client.js) through the real worker: callFunctionOn, awaitPromise and
// release; evaluation while the host is paused; two windows whose objects
// are independent; 10,000 evaluate+release cycles that leave nothing in the
// page; a page that loops forever answered at the deadline while the host
// and another page stay responsive; a page closed mid-request.
func TestClientPageRuntimeRealPages(t *testing.T) {
	// The page deadline bounds every page call of the test, not only the
	// loop below: 3s failed a plain evaluate once on a heavily loaded machine.
	w, a, page := startPageHost(t, `window.cart = {items: [{sku: 'A-1', qty: 2}], total: 7};`, "--page-timeout", "8s")
	a.MustCall("Debugger.enable", nil)
	openPage(t, page)
	ctx := pageContextID(t, a)
	eval := func(c *cdptest.Client, expr string, more map[string]any) cdptest.Msg {
		p := map[string]any{"expression": expr, "contextId": ctx}
		for k, v := range more {
			p[k] = v
		}
		return c.MustCall("Runtime.evaluate", p)
	}
	objectID := func(m cdptest.Msg) string {
		var r struct {
			Result struct {
				ObjectID string `json:"objectId"`
			} `json:"result"`
		}
		json.Unmarshal(m.Result, &r)
		if !strings.HasPrefix(r.Result.ObjectID, "iw:") {
			t.Fatalf("no page objectId in %s", m.Raw)
		}
		return r.Result.ObjectID
	}
	// The page's own count of handles, per DevTools session.
	pageSessions := func() map[string]int {
		m := eval(a, "JSON.stringify(__inspectorWorkerClient.stats().runtime.perSession)", map[string]any{"returnByValue": true})
		var r struct {
			Result struct {
				Value string `json:"value"`
			} `json:"result"`
		}
		json.Unmarshal(m.Result, &r)
		per := map[string]int{}
		if err := json.Unmarshal([]byte(r.Result.Value), &per); err != nil {
			t.Fatalf("page stats %s: %v", m.Raw, err)
		}
		return per
	}

	waitPageGlobal(t, a, ctx, "cart")

	// callFunctionOn: on a page object, with a page object as argument.
	cart := objectID(eval(a, "window.cart", map[string]any{"objectGroup": "g1"}))
	m := a.MustCall("Runtime.callFunctionOn", map[string]any{"objectId": cart, "functionDeclaration": "function (o) { return this.items.length + (o === this ? 10 : 0); }",
		"arguments": []map[string]any{{"objectId": cart}}, "returnByValue": true})
	if !strings.Contains(string(m.Result), `"value":11`) {
		t.Fatalf("callFunctionOn: %s", m.Raw)
	}
	// awaitPromise on a promise the page made.
	promise := objectID(eval(a, "new Promise((r) => setTimeout(() => r(7), 10))", map[string]any{"objectGroup": "g1"}))
	if m = a.MustCall("Runtime.awaitPromise", map[string]any{"promiseObjectId": promise, "returnByValue": true}); !strings.Contains(string(m.Result), `"value":7`) {
		t.Fatalf("awaitPromise: %s", m.Raw)
	}
	// release: the object is gone for the window.
	a.MustCall("Runtime.releaseObject", map[string]any{"objectId": cart})
	if m = a.Call("Runtime.getProperties", map[string]any{"objectId": cart, "ownProperties": true}); m.Error == nil {
		t.Fatalf("getProperties of a released object: %s", m.Raw)
	}
	a.MustCall("Runtime.releaseObjectGroup", map[string]any{"objectGroup": "g1"})

	// The host paused at a breakpoint: the page still answers.
	a.MustCall("Runtime.evaluate", map[string]any{"expression": "pauseHost()"})
	a.ExpectEvent("Debugger.paused", nil)
	if m = eval(a, "document.title", nil); !strings.Contains(string(m.Result), `"value":"Test page"`) {
		t.Fatalf("page evaluate while the host is paused: %s", m.Raw)
	}
	a.MustCall("Debugger.resume", nil)
	a.ExpectEvent("Debugger.resumed", nil)

	// Two windows: discarding in one leaves the other's objects valid;
	// closing one frees its handles in the page.
	b := cdptest.Dial(t, "B", pageURL(t, w.addr()), nil)
	b.MustCall("Runtime.enable", nil)
	if got := pageContextID(t, b); got != ctx {
		t.Fatalf("window B sees the page as context %d, A as %d", got, ctx)
	}
	keepA := objectID(eval(a, "window.cart", map[string]any{"objectGroup": "keep"}))
	inA := objectID(eval(a, "window.cart", map[string]any{"objectGroup": "shared"}))
	inB := objectID(eval(b, "window.cart", map[string]any{"objectGroup": "shared"}))
	a.MustCall("Runtime.releaseObjectGroup", map[string]any{"objectGroup": "shared"})
	if m = b.MustCall("Runtime.getProperties", map[string]any{"objectId": inB, "ownProperties": true}); !strings.Contains(string(m.Result), `"name":"items"`) {
		t.Fatalf("B's object after A released its group: %s", m.Raw)
	}
	if m = a.Call("Runtime.getProperties", map[string]any{"objectId": inA}); m.Error == nil {
		t.Fatalf("A's released object still answers: %s", m.Raw)
	}
	if per := pageSessions(); len(per) != 2 {
		t.Fatalf("page handle tables before B closes: %v, want A's and B's", per)
	}
	b.Conn().CloseNow()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		per := pageSessions()
		if len(per) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page still holds B's handles 30 s after B closed: %v", per)
		}
	}
	before := pageSessions()

	// 10,000 evaluate+release cycles, 100 in flight: nothing left behind.
	const cycles, batch = 10000, 100
	for done := 0; done < cycles; done += batch {
		a.Forget()
		ids := make([]int64, batch)
		for i := range ids {
			ids[i] = a.Send("Runtime.evaluate", map[string]any{"expression": "({n: " + fmt.Sprint(done+i) + "})", "contextId": ctx, "objectGroup": "cycle"})
		}
		objs := make([]string, batch)
		for i, id := range ids {
			objs[i] = objectID(a.ExpectResponse(id))
		}
		for i, o := range objs {
			ids[i] = a.Send("Runtime.releaseObject", map[string]any{"objectId": o})
		}
		for _, id := range ids {
			if r := a.ExpectResponse(id); r.Error != nil {
				t.Fatalf("releaseObject: %s", r.Raw)
			}
		}
	}
	if after := pageSessions(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("page handles after %d cycles: %v, before: %v", cycles, after, before)
	}
	if m = a.MustCall("Runtime.getProperties", map[string]any{"objectId": keepA, "ownProperties": true}); !strings.Contains(string(m.Result), `"name":"total"`) {
		t.Fatalf("A's kept object after the cycles: %s", m.Raw)
	}

	// A page that loops forever: answered at the deadline (--page-timeout
	// 8s); the host and another page stay responsive.
	closeOther := openClosablePage(t, page)
	other := a.ExpectEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"id":-`) && !strings.Contains(string(m.Params), fmt.Sprintf(`"id":%d,`, ctx))
	})
	var oc struct {
		Context struct {
			ID int `json:"id"`
		} `json:"context"`
	}
	json.Unmarshal(other.Params, &oc)
	loop := a.Send("Runtime.evaluate", map[string]any{"expression": "for (;;) {}", "contextId": ctx})
	if m = a.MustCall("Runtime.evaluate", map[string]any{"expression": "document.title", "contextId": oc.Context.ID}); !strings.Contains(string(m.Result), "Test page") {
		t.Fatalf("the other page while one loops: %s", m.Raw)
	}
	if m = a.MustCall("Runtime.evaluate", map[string]any{"expression": "6 * 7"}); !strings.Contains(string(m.Result), `"value":42`) {
		t.Fatalf("the host while a page loops: %s", m.Raw)
	}
	if m = a.ExpectResponse(loop); m.Error == nil || !strings.Contains(m.Error.Message, "did not answer within 8s") {
		t.Fatalf("the looping evaluation: %s", m.Raw)
	}

	// The other page closes while a request waits for it.
	pending := a.Send("Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true, "contextId": oc.Context.ID})
	time.Sleep(200 * time.Millisecond) // the command reached the page (an answer in any case is what is checked)
	closeOther()
	if m = a.ExpectResponse(pending); m.Error == nil || !strings.Contains(m.Error.Message, "closed before it answered") {
		t.Fatalf("a request to a page that closed: %s", m.Raw)
	}
}
