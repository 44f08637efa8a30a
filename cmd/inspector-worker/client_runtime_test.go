package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// The whole path with real parts: a page in headless Chromium, the worker
// under `run`, a DevTools client. Evaluating in the page's context answers
// with the page's value; an object result expands; a logged object carries
// an objectId that expands; a throwing expression answers with
// exceptionDetails; a page objectId never reaches the host.
func TestClientPageEvaluateAndExpand(t *testing.T) {
	_, c, pageURL := startPageHost(t, `window.cart = {items: [{sku: 'A-1', qty: 2}], total: 7};
console.log('cart', window.cart);`)
	openPage(t, pageURL)
	ctxEv := c.ExpectEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `"id":-`) })
	var created struct {
		Context struct {
			ID       int    `json:"id"`
			UniqueID string `json:"uniqueId"`
		} `json:"context"`
	}
	json.Unmarshal(ctxEv.Params, &created)

	title := c.MustCall("Runtime.evaluate", map[string]any{"expression": "document.title", "contextId": created.Context.ID})
	if !strings.Contains(string(title.Result), `"value":"Test page"`) {
		t.Fatalf("document.title in the page: %s", title.Raw)
	}
	// What the frontend sends while the user types: a side-effect-free read
	// (completions, eager preview) is answered, a write refused as V8 does,
	// and an unfinished line is told apart by the syntax check.
	eager := c.MustCall("Runtime.evaluate", map[string]any{"expression": "document.title", "contextId": created.Context.ID, "throwOnSideEffect": true})
	if !strings.Contains(string(eager.Result), `"value":"Test page"`) {
		t.Fatalf("side-effect-free document.title: %s", eager.Raw)
	}
	write := c.MustCall("Runtime.evaluate", map[string]any{"expression": "document.title = 'x'", "contextId": created.Context.ID, "throwOnSideEffect": true})
	if !strings.Contains(string(write.Result), "Possible side-effect") {
		t.Fatalf("a write with throwOnSideEffect: %s", write.Raw)
	}
	// The frontend treats "Unexpected end of input" and "Unterminated template
	// literal" as an unfinished line; any other answer as complete.
	const unfinished = `"description":"SyntaxError: (Unexpected end of input|Unterminated template literal)`
	for expr, want := range map[string]string{"a(": unfinished, "if (x) {": unfinished, "`abc": unfinished,
		"a(}": `"description":"SyntaxError: Unexpected token '}'`, "a(1)": `^\{\}$`, "return 1": `^\{\}$`} {
		cs := c.MustCall("Runtime.compileScript", map[string]any{"expression": expr, "sourceURL": "", "persistScript": false, "executionContextId": created.Context.ID})
		if !regexp.MustCompile(want).Match(cs.Result) || strings.Contains(string(cs.Result), "objectId") {
			t.Fatalf("compileScript(%q) = %s, want %s and no objectId", expr, cs.Raw, want)
		}
	}
	byUnique := c.MustCall("Runtime.evaluate", map[string]any{"expression": "location.pathname", "uniqueContextId": created.Context.UniqueID})
	if !strings.Contains(string(byUnique.Result), `"value":"/"`) {
		t.Fatalf("evaluate by uniqueContextId: %s", byUnique.Raw)
	}

	waitPageGlobal(t, c, created.Context.ID, "cart")
	obj := c.MustCall("Runtime.evaluate", map[string]any{"expression": "window.cart", "contextId": created.Context.ID, "objectGroup": "console"})
	var res struct {
		Result struct {
			ObjectID string `json:"objectId"`
		} `json:"result"`
	}
	json.Unmarshal(obj.Result, &res)
	if !strings.HasPrefix(res.Result.ObjectID, "iw:") {
		t.Fatalf("object result without a worker objectId: %s", obj.Raw)
	}
	props := c.MustCall("Runtime.getProperties", map[string]any{"objectId": res.Result.ObjectID, "ownProperties": true})
	if !strings.Contains(string(props.Result), `"name":"items"`) || !strings.Contains(string(props.Result), `"name":"total"`) {
		t.Fatalf("getProperties: %s", props.Raw)
	}

	// The load-time message: the page logged it before its connection to the
	// worker was open; the client held it until it knew this window
	// (console.enable), so it carries this window's handles too. So does a
	// message logged now.
	loadTime := c.ExpectEvent("Runtime.consoleAPICalled", isClientConsole)
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "console.log('again', window.cart)", "contextId": created.Context.ID})
	again := c.ExpectEvent("Runtime.consoleAPICalled", isClientConsole)
	for _, logged := range []cdptest.Msg{loadTime, again} {
		var ev struct {
			Args []struct {
				ObjectID string `json:"objectId"`
			} `json:"args"`
		}
		json.Unmarshal(logged.Params, &ev)
		if len(ev.Args) != 2 || !strings.HasPrefix(ev.Args[1].ObjectID, "iw:") {
			t.Fatalf("the logged object has no objectId: %s", logged.Raw)
		}
		nested := c.MustCall("Runtime.getProperties", map[string]any{"objectId": ev.Args[1].ObjectID, "ownProperties": true})
		if !strings.Contains(string(nested.Result), `"name":"items"`) {
			t.Fatalf("the logged object does not expand: %s", nested.Raw)
		}
	}

	thrown := c.MustCall("Runtime.evaluate", map[string]any{"expression": "missingThing.x", "contextId": created.Context.ID})
	if !strings.Contains(string(thrown.Result), `"exceptionDetails"`) || !strings.Contains(string(thrown.Result), "ReferenceError") {
		t.Fatalf("a throwing expression: %s", thrown.Raw)
	}

	host := c.Call("Runtime.callFunctionOn", map[string]any{"objectId": res.Result.ObjectID, "functionDeclaration": "function () { return process.pid; }"})
	if host.Error == nil && strings.Contains(string(host.Result), `"type":"number"`) {
		t.Fatalf("a page objectId reached the host: %s", host.Raw)
	}
}
