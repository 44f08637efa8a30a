//go:build linux

package cdpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// [[DOM]] of framework objects with the real frameworks: React 19
// (production builds of react, react-dom and scheduler from
// e2e/node_modules, loaded as CommonJS in a page by a small shim) and Vue 3
// (its global development build). Expanding a class component, a function
// component's Fiber, a host Fiber, a Vue public instance and a Vue
// internal instance shows the DOM node(s) they stand for, and a node
// found there reveals in Elements like any node.

// e2eFile is the text of a file under e2e/node_modules, where `npm ci` in
// e2e/ installs React and Vue (scripts/e2e.sh runs it). Without them the
// test fails under CI=true and skips with a visible line elsewhere.
func e2eFile(t *testing.T, rel string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "e2e", "node_modules", rel)
	b, err := os.ReadFile(p)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no %s: CI must install it (cd e2e && npm ci)", p)
		}
		t.Skipf("SKIPPED: no %s; run `cd e2e && npm ci` to run this test", p)
	}
	return string(b)
}

// cjsModule wraps a CommonJS file as a classic script that registers its
// exports as window.__mods[name]; require reads the same table.
func cjsModule(name, src string) string {
	return `(function () { var module = { exports: {} }, exports = module.exports;` +
		` var process = { env: { NODE_ENV: 'production' } };` +
		` var require = function (n) { return window.__mods[n]; };` + "\n" + src +
		"\n;(window.__mods = window.__mods || {})[" + jsString(name) + "] = module.exports; })();"
}

const frameworksApp = `
(function () {
  var h = __mods.react.createElement, Component = __mods.react.Component;
  class Counter extends Component { render() { return h('p', { id: 'count' }, 'count ' + this.props.n); } }
  function List() { return [h('li', { key: 1, id: 'li1' }, 'a'), h('li', { key: 2, id: 'li2' }, 'b')]; }
  function App() { return h('div', { id: 'app' }, h(Counter, { n: 1, ref: function (c) { window.__counter = c; } }), h('ul', null, h(List))); }
  __mods['react-dom/client'].createRoot(document.getElementById('root')).render(h(App));

  var V = Vue;
  var Item = { props: ['t'], render: function () { return V.h('li', { class: 'vi' }, this.t); } };
  var Frag = { render: function () { return [V.h('span', { id: 'f1' }, 'x'), V.h('span', { id: 'f2' }, 'y')]; } };
  V.createApp({ mounted: function () { window.__vueRoot = this; },
    render: function () { return V.h('section', { id: 'vue' }, [V.h(Item, { t: 'one' }), V.h(Frag)]); } }).mount('#vroot');
})();
`

type internalProp struct {
	Name  string       `json:"name"`
	Value remoteObject `json:"value"`
}

// domInternal is the [[DOM]] internal property of the object expr
// evaluates to (nil when it has none).
func domInternal(t *testing.T, c *cdptest.Client, ctx ctxEvent, expr string) *remoteObject {
	t.Helper()
	obj := evalIn(t, c, ctx, expr, "frameworks-test")
	if obj.ExceptionDetails != nil || obj.Result.ObjectID == "" {
		t.Fatalf("%s: %+v", expr, obj)
	}
	m := c.MustCall("Runtime.getProperties", map[string]any{"objectId": obj.Result.ObjectID, "ownProperties": true})
	var ans struct {
		Internal []internalProp `json:"internalProperties"`
	}
	if err := json.Unmarshal(m.Result, &ans); err != nil {
		t.Fatalf("getProperties of %s: %s", expr, m.Raw)
	}
	for _, p := range ans.Internal {
		if p.Name == "[[DOM]]" {
			return &p.Value
		}
	}
	return nil
}

// arrayNodes is the node descriptions of an array object's elements.
func arrayNodes(t *testing.T, c *cdptest.Client, arr *remoteObject) []string {
	t.Helper()
	m := c.MustCall("Runtime.getProperties", map[string]any{"objectId": arr.ObjectID, "ownProperties": true})
	var ans struct {
		Result []internalProp `json:"result"`
	}
	if err := json.Unmarshal(m.Result, &ans); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ans.Result {
		if p.Name != "length" && p.Value.Subtype == "node" {
			out = append(out, p.Value.Description)
		}
	}
	return out
}

func TestFrameworkObjectsShowTheirDOM(t *testing.T) {
	files := map[string]string{
		"scheduler.js":        cjsModule("scheduler", e2eFile(t, "scheduler/cjs/scheduler.production.js")),
		"react.js":            cjsModule("react", e2eFile(t, "react/cjs/react.production.js")),
		"react-dom.js":        cjsModule("react-dom", e2eFile(t, "react-dom/cjs/react-dom.production.js")),
		"react-dom-client.js": cjsModule("react-dom/client", e2eFile(t, "react-dom/cjs/react-dom-client.production.js")),
		"vue.js":              e2eFile(t, "vue/dist/vue.global.js"),
		"app.js":              frameworksApp,
	}
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "Frameworks page"
	servePage(t, reg, token, func(addr string) string {
		return `<!doctype html><html><head><title>` + title + `</title>` +
			`<script src="/client.js" data-endpoint="ws://` + addr + `/client" data-token="` + token.Reveal() + `"></script>` +
			`</head><body><div id="root"></div><div id="vroot"></div>` +
			`<script src="/scheduler.js"></script><script src="/react.js"></script><script src="/react-dom.js"></script>` +
			`<script src="/react-dom-client.js"></script><script src="/vue.js"></script><script src="/app.js"></script></body></html>`
	}, files)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	newDOMTree(t, a)
	evalValue(t, a, ctx, `new Promise((r) => { const f = () => document.getElementById('li2') && window.__vueRoot ? r(1) : setTimeout(f, 20); f(); })`)
	fiber := `(function (el) { return el[Object.keys(el).find(function (k) { return k.indexOf('__reactFiber$') === 0; })]; })(document.getElementById('li1'))`

	one := []struct{ name, expr, want string }{
		{"React class component", `window.__counter`, "p#count"},
		{"React host Fiber", fiber, "li#li1"},
		{"Vue public instance", `window.__vueRoot`, "section#vue"},
		{"Vue internal instance", `document.querySelector('.vi').__vueParentComponent`, "li.vi"},
	}
	for _, c := range one {
		d := domInternal(t, a, ctx, c.expr)
		if d == nil || d.Subtype != "node" || d.Description != c.want {
			t.Errorf("%s: [[DOM]] = %+v, want the node %s", c.name, d, c.want)
		}
	}
	many := []struct{ name, expr, want string }{
		{"React function component's Fiber", fiber + `.return`, "li#li1,li#li2"},
		{"React App component's Fiber", fiber + `.return.return.return.return`, "div#app"},
		{"Vue fragment component", `document.getElementById('f1').__vueParentComponent`, "span#f1,span#f2"},
	}
	for _, c := range many {
		d := domInternal(t, a, ctx, c.expr)
		var got string
		switch {
		case d == nil:
		case d.Subtype == "node":
			got = d.Description
		case d.Subtype == "array":
			got = strings.Join(arrayNodes(t, a, d), ",")
		}
		if got != c.want {
			t.Errorf("%s: [[DOM]] = %q (%+v), want %s", c.name, got, d, c.want)
		}
	}
	if d := domInternal(t, a, ctx, `({ tag: 1, stateNode: null, child: null })`); d != nil {
		t.Errorf("a plain object shaped a little like a Fiber has [[DOM]] %+v", d)
	}

	// The node reveals in Elements like any node.
	d := domInternal(t, a, ctx, `window.__counter`)
	m := a.MustCall("DOM.requestNode", map[string]any{"objectId": d.ObjectID})
	var rn struct {
		NodeID int64 `json:"nodeId"`
	}
	if err := json.Unmarshal(m.Result, &rn); err != nil || rn.NodeID == 0 {
		t.Fatalf("DOM.requestNode of [[DOM]]: %s", m.Raw)
	}
	m = a.MustCall("DOM.describeNode", map[string]any{"nodeId": rn.NodeID})
	if !strings.Contains(string(m.Result), `"count"`) {
		t.Errorf("the revealed node: %s, want p#count", m.Raw)
	}
}
