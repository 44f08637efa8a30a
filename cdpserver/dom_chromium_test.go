//go:build linux

package cdpserver

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	clientjs "github.com/inspector-worker/inspector-worker/client/js"
	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
)

// The pages' DOM in one window, with real pages: headless Chromium loads
// two pages with the shipped client.js; a DevTools client reads and edits
// their DOM through the worker, and its tree (built from the worker's
// answers and events only, as the frontend builds it) is compared with the
// page's own DOM, read by evaluation in the page.

// domPageHTML is a test page: before client.js, it counts the
// MutationObservers the page makes (the agent must make none until a
// window asks for the page's nodes).
func domPageHTML(title, carrierAddr string, token sourceproto.Token) string {
	return `<!doctype html><html><head><title>` + title + `</title>` +
		`<script>window.__moCount = 0; (function () { var MO = window.MutationObserver;` +
		` window.MutationObserver = function (cb) { window.__moCount++; return new MO(cb); }; })();</script>` +
		`<script src="/client.js" data-endpoint="ws://` + carrierAddr + `/client" data-token="` + token.Reveal() + `"></script>` +
		`</head><body><h1 id="title" class="big">` + title + `</h1><ul id="list"><li>one</li><li>two</li></ul>` +
		`<!-- a comment --><p>text <b>bold</b></p></body></html>`
}

// domPages serves one page per title (/0, /1 …) and opens each in a
// headless Chromium.
func domPages(t *testing.T, reg *sourceproto.Registry, token sourceproto.Token, titles ...string) {
	t.Helper()
	h, err := carrier.NewClientHandler(carrier.ClientOptions{Registry: reg, Token: token, ClientJS: clientjs.ClientJS(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/client", h)
	mux.Handle("/client.js", h)
	var urls []string
	for i, title := range titles {
		page := domPageHTML(title, ln.Addr().String(), token)
		mux.HandleFunc(fmt.Sprintf("/%d", i), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(page))
		})
		urls = append(urls, fmt.Sprintf("http://%s/%d", ln.Addr(), i))
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-background-timer-throttling", "--disable-renderer-backgrounding"}
	// One browser per page: headless Chromium opens one target per process.
	for _, u := range urls {
		cmd := exec.Command(chromiumBinary(t), append(args, "--user-data-dir="+t.TempDir(), u)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			proctest.AssertGone(t, cmd.Process.Pid)
		})
	}
}

// domWindow dials a window, enables Runtime and waits for every page's
// context (by title).
func domWindow(t *testing.T, w *worker, name string, titles ...string) (*cdptest.Client, map[string]ctxEvent) {
	t.Helper()
	c := w.dial(name)
	c.SetTimeout(2 * time.Minute)
	c.MustCall("Runtime.enable", nil)
	ctxs := map[string]ctxEvent{}
	for _, title := range titles {
		m := c.ExpectAnyEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool {
			return strings.Contains(string(m.Params), `"name":"`+title+`"`)
		})
		var ev ctxEvent
		if err := json.Unmarshal(m.Params, &ev); err != nil {
			t.Fatal(err)
		}
		ctxs[title] = ev
	}
	return c, ctxs
}

// domNode is a node of the window's tree, as the frontend keeps it.
type domNode struct {
	NodeID          int64      `json:"nodeId"`
	NodeType        int        `json:"nodeType"`
	NodeName        string     `json:"nodeName"`
	LocalName       string     `json:"localName"`
	NodeValue       string     `json:"nodeValue"`
	ChildNodeCount  int        `json:"childNodeCount"`
	Children        []*domNode `json:"children"`
	Attributes      []string   `json:"attributes"`
	FrameID         string     `json:"frameId"`
	DocumentURL     string     `json:"documentURL"`
	ContentDocument *domNode   `json:"contentDocument"`
	known           bool       // children known (sent)
}

// domTree is a window's DOM built from the worker's answers and events
// only: getDocument's root, then every DOM event in order.
type domTree struct {
	t      *testing.T
	c      *cdptest.Client
	root   *domNode
	byID   map[int64]*domNode
	seen   int // messages of c applied so far
	events int
}

func newDOMTree(t *testing.T, c *cdptest.Client) *domTree {
	m := c.MustCall("DOM.getDocument", map[string]any{})
	var ans struct {
		Root *domNode `json:"root"`
	}
	if err := json.Unmarshal(m.Result, &ans); err != nil {
		t.Fatal(err)
	}
	tr := &domTree{t: t, c: c, root: ans.Root, byID: map[int64]*domNode{}}
	tr.index(ans.Root)
	tr.seen = len(c.All())
	return tr
}

func (tr *domTree) index(n *domNode) {
	tr.byID[n.NodeID] = n
	if n.Children != nil {
		n.known = true
	}
	for _, c := range n.Children {
		tr.index(c)
	}
	if n.ContentDocument != nil {
		tr.index(n.ContentDocument)
	}
}

func (tr *domTree) forget(n *domNode) {
	delete(tr.byID, n.NodeID)
	for _, c := range n.Children {
		tr.forget(c)
	}
	if n.ContentDocument != nil {
		tr.forget(n.ContentDocument)
	}
}

// sync applies the DOM events received since the last sync.
func (tr *domTree) sync() {
	all := tr.c.All()
	for _, m := range all[tr.seen:] {
		if m.ID != nil || !strings.HasPrefix(m.Method, "DOM.") {
			continue
		}
		tr.events++
		tr.apply(m)
	}
	tr.seen = len(all)
}

func (tr *domTree) apply(m cdptest.Msg) {
	var p struct {
		ParentID       int64    `json:"parentId"`
		ParentNodeID   int64    `json:"parentNodeId"`
		PreviousNodeID int64    `json:"previousNodeId"`
		NodeID         int64    `json:"nodeId"`
		Node           *domNode `json:"node"`
		Nodes          []*domNode
		Name           string `json:"name"`
		Value          string `json:"value"`
		CharacterData  string `json:"characterData"`
		ChildNodeCount int    `json:"childNodeCount"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		tr.t.Fatalf("%s: %v", m.Raw, err)
	}
	switch m.Method {
	case "DOM.setChildNodes":
		parent := tr.must(p.ParentID, m)
		for _, c := range parent.Children {
			tr.forget(c)
		}
		parent.Children, parent.known, parent.ChildNodeCount = p.Nodes, true, len(p.Nodes)
		for _, c := range p.Nodes {
			tr.index(c)
		}
	case "DOM.childNodeInserted":
		parent := tr.must(p.ParentNodeID, m)
		at := 0
		if p.PreviousNodeID != 0 {
			at = -1
			for i, c := range parent.Children {
				if c.NodeID == p.PreviousNodeID {
					at = i + 1
				}
			}
			if at < 0 {
				tr.t.Fatalf("%s: no previous node %d under %d", m.Raw, p.PreviousNodeID, p.ParentNodeID)
			}
		}
		parent.Children = append(parent.Children[:at], append([]*domNode{p.Node}, parent.Children[at:]...)...)
		parent.ChildNodeCount = len(parent.Children)
		tr.index(p.Node)
	case "DOM.childNodeRemoved":
		parent := tr.must(p.ParentNodeID, m)
		for i, c := range parent.Children {
			if c.NodeID == p.NodeID {
				parent.Children = append(parent.Children[:i], parent.Children[i+1:]...)
				tr.forget(c)
				parent.ChildNodeCount = len(parent.Children)
				return
			}
		}
		tr.t.Fatalf("%s: node %d is not a child of %d", m.Raw, p.NodeID, p.ParentNodeID)
	case "DOM.childNodeCountUpdated":
		n := tr.must(p.NodeID, m)
		if n.known {
			tr.t.Fatalf("%s: a count update for a node whose children the window has", m.Raw)
		}
		n.ChildNodeCount = p.ChildNodeCount
	case "DOM.attributeModified":
		n := tr.must(p.NodeID, m)
		for i := 0; i < len(n.Attributes); i += 2 {
			if n.Attributes[i] == p.Name {
				n.Attributes[i+1] = p.Value
				return
			}
		}
		n.Attributes = append(n.Attributes, p.Name, p.Value)
	case "DOM.attributeRemoved":
		n := tr.must(p.NodeID, m)
		for i := 0; i < len(n.Attributes); i += 2 {
			if n.Attributes[i] == p.Name {
				n.Attributes = append(n.Attributes[:i], n.Attributes[i+2:]...)
				return
			}
		}
	case "DOM.characterDataModified":
		tr.must(p.NodeID, m).NodeValue = p.CharacterData
	case "DOM.documentUpdated":
		tr.t.Fatalf("documentUpdated: the page overflowed; the test's burst is meant to stay under the bound")
	}
}

func (tr *domTree) must(id int64, m cdptest.Msg) *domNode {
	n := tr.byID[id]
	if n == nil {
		tr.t.Fatalf("%s: node %d is not in the window's tree", m.Raw, id)
	}
	return n
}

// expandAll asks for the children of every node whose children the window
// does not have yet, as a user expanding the whole tree does.
func (tr *domTree) expandAll(doc *domNode) {
	for {
		tr.sync()
		var todo []int64
		var walk func(n *domNode)
		walk = func(n *domNode) {
			if !n.known && n.ChildNodeCount > 0 {
				todo = append(todo, n.NodeID)
				return
			}
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(doc)
		if len(todo) == 0 {
			return
		}
		for _, id := range todo {
			tr.c.MustCall("DOM.requestChildNodes", map[string]any{"nodeId": id, "depth": -1})
		}
	}
}

// serialize writes a subtree in one fixed form, the same as pageSerializer
// in the page (whitespace-only text left out, as the Elements panel does).
func serialize(n *domNode, b *strings.Builder) {
	switch n.NodeType {
	case 1:
		b.WriteString("<" + strings.ToLower(n.NodeName))
		for i := 0; i+1 < len(n.Attributes); i += 2 {
			fmt.Fprintf(b, " %s=%q", n.Attributes[i], n.Attributes[i+1])
		}
		b.WriteString(">")
		for _, c := range n.Children {
			serialize(c, b)
		}
		b.WriteString("</" + strings.ToLower(n.NodeName) + ">")
	case 3:
		b.WriteString("#" + n.NodeValue)
	case 8:
		b.WriteString("<!--" + n.NodeValue + "-->")
	case 9:
		for _, c := range n.Children {
			serialize(c, b)
		}
	case 10:
		b.WriteString("<!doctype " + n.NodeName + ">")
	}
}

// pageSerializer is serialize in the page.
const pageSerializer = `(function ser(n) {
  switch (n.nodeType) {
    case 1: {
      var s = '<' + n.nodeName.toLowerCase();
      for (var i = 0; i < n.attributes.length; i++) s += ' ' + n.attributes[i].name + '=' + JSON.stringify(n.attributes[i].value);
      s += '>';
      for (var c = n.firstChild; c; c = c.nextSibling) s += ser(c);
      return s + '</' + n.nodeName.toLowerCase() + '>';
    }
    case 3: return /\S/.test(n.data) ? '#' + n.data : '';
    case 8: return '<!--' + n.data + '-->';
    case 9: { var d = ''; for (var k = n.firstChild; k; k = k.nextSibling) d += ser(k); return d; }
    case 10: return '<!doctype ' + n.name + '>';
  }
  return '';
})(document)`

func pageTreeText(t *testing.T, c *cdptest.Client, ctx ctxEvent) string {
	t.Helper()
	// In parts: one string by value is cut at the frame's string bound.
	ans := evalValue(t, c, ctx, `(function (s) { var out = []; for (var i = 0; i < s.length; i += 16000) out.push(s.slice(i, i + 16000)); return out; })(`+pageSerializer+`)`)
	var parts []string
	if err := json.Unmarshal(ans, &parts); err != nil {
		t.Fatalf("page serialization %s: %v", ans, err)
	}
	return strings.Join(parts, "")
}

func evalValue(t *testing.T, c *cdptest.Client, ctx ctxEvent, expr string) json.RawMessage {
	t.Helper()
	m := c.MustCall("Runtime.evaluate", map[string]any{"expression": expr, "uniqueContextId": ctx.Context.UniqueID, "returnByValue": true, "awaitPromise": true})
	var ans evalAnswer
	if err := json.Unmarshal(m.Result, &ans); err != nil || ans.ExceptionDetails != nil {
		t.Fatalf("evaluate %q: %s", expr, m.Raw)
	}
	return ans.Result.Value
}

// owners are the frame owners in the window's host <body>, by frame id.
func (tr *domTree) owners() map[string]*domNode {
	out := map[string]*domNode{}
	body := tr.byID[int64(4)]
	if body == nil {
		tr.t.Fatalf("no host <body> (node 4) in the window's tree")
	}
	for _, c := range body.Children {
		if c.NodeName == "IFRAME" {
			out[c.FrameID] = c
		}
	}
	return out
}

func windowDOM(doc *domNode) string {
	var b strings.Builder
	serialize(doc, &b)
	return b.String()
}

// Two pages: no MutationObserver (nor any DOM agent) in either before a
// window asks for its nodes, DOM.enable and getDocument included; the one
// tree shows both documents under frame owners whose frameIds are
// Page.getResourceTree's pages; expanding one page's document runs the
// agent in that page only; after a burst of mutations the window's tree
// equals the page's DOM.
func TestDOMPagesInOneTree(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	titles := []string{"DOM page one", "DOM page two"}
	domPages(t, reg, token, titles...)
	a, ctxs := domWindow(t, w, "A", titles...)
	one, two := ctxs[titles[0]], ctxs[titles[1]]

	// The client's own observer (new scripts, the title) is there from the
	// start; the DOM agent adds one only once a window asks for nodes.
	base := map[string]int{}
	for _, title := range titles {
		var n int
		_ = json.Unmarshal(evalValue(t, a, ctxs[title], `window.__moCount`), &n)
		base[title] = n
	}
	noAgent := func(when string) {
		for _, title := range titles {
			want := fmt.Sprintf("[%d,null]", base[title])
			if got := string(evalValue(t, a, ctxs[title], `[window.__moCount, __inspectorWorkerClient.stats().dom]`)); got != want {
				t.Fatalf("%s: page %q has made [MutationObservers, DOM agent stats] %s, want %s", when, title, got, want)
			}
		}
	}
	noAgent("before DOM.enable")
	a.MustCall("DOM.enable", nil)
	tr := newDOMTree(t, a)
	noAgent("after DOM.enable and DOM.getDocument")

	// The owners are the resource tree's child frames, with the pages'
	// documents.
	m := a.MustCall("Page.getResourceTree", nil)
	var rt struct {
		FrameTree struct {
			ChildFrames []struct {
				Frame struct {
					ID  string `json:"id"`
					URL string `json:"url"`
				} `json:"frame"`
			} `json:"childFrames"`
		} `json:"frameTree"`
	}
	_ = json.Unmarshal(m.Result, &rt)
	owners := tr.owners()
	var got, want []string
	for id, o := range owners {
		got = append(got, id+" "+o.ContentDocument.DocumentURL)
	}
	for _, f := range rt.FrameTree.ChildFrames {
		want = append(want, f.Frame.ID+" "+f.Frame.URL)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != 2 {
		t.Fatalf("frame owners %q, want the resource tree's pages %q", got, want)
	}
	ownerOf := func(ctx ctxEvent) *domNode { return owners[ctx.Context.AuxData.FrameID] }
	fo := a.MustCall("DOM.getFrameOwner", map[string]any{"frameId": one.Context.AuxData.FrameID})
	if !strings.Contains(string(fo.Result), fmt.Sprintf(`"nodeId":%d`, ownerOf(one).NodeID)) {
		t.Fatalf("DOM.getFrameOwner %s, want node %d", fo.Raw, ownerOf(one).NodeID)
	}

	doc1 := ownerOf(one).ContentDocument
	a.MustCall("DOM.requestChildNodes", map[string]any{"nodeId": doc1.NodeID, "depth": 1})
	tr.sync()
	if !doc1.known || len(doc1.Children) != 2 || doc1.Children[1].NodeName != "HTML" {
		t.Fatalf("page one's document children %+v", doc1.Children)
	}
	tr.expandAll(doc1)
	if w, p := windowDOM(doc1), pageTreeText(t, a, one); w != p {
		t.Fatalf("window's tree of page one:\n%s\npage:\n%s", w, p)
	}
	if got, want := string(evalValue(t, a, two, `window.__moCount`)), fmt.Sprint(base[titles[1]]); got != want {
		t.Fatalf("page two made %s MutationObservers, want %s: only page one was expanded", got, want)
	}
	if got, want := string(evalValue(t, a, one, `window.__moCount`)), fmt.Sprint(base[titles[0]]+1); got != want {
		t.Fatalf("page one made %s MutationObservers, want %s (the DOM agent's)", got, want)
	}

	// A burst: 2,000 nodes added, moved, edited and removed in 20 tasks.
	tr.sync()
	tr.events = 0
	start := time.Now()
	evalValue(t, a, one, `new Promise(function (done) {
	  var list = document.getElementById('list'), n = 0;
	  function step() {
	    for (var i = 0; i < 100; i++, n++) {
	      var li = document.createElement('li');
	      li.setAttribute('data-n', n);
	      li.appendChild(document.createTextNode('item ' + n));
	      if (n % 3 === 0) li.appendChild(document.createElement('span')).textContent = 'inner ' + n;
	      list.insertBefore(li, n % 2 ? list.firstChild : null);
	      if (n % 7 === 0 && list.children.length > 3) list.removeChild(list.children[1]);
	      if (n % 11 === 0) list.appendChild(list.firstElementChild);
	      if (n % 5 === 0) list.lastElementChild.setAttribute('class', 'c' + n);
	      if (n % 13 === 0 && list.firstElementChild.firstChild) list.firstElementChild.firstChild.data = 'edited ' + n;
	      if (n % 17 === 0) list.firstElementChild.removeAttribute('data-n');
	    }
	    document.getElementById('title').setAttribute('data-step', n);
	    if (n < 2000) setTimeout(step, 10); else done(n);
	  }
	  step();
	})`)
	// Quiet: two flush windows with no DOM event.
	last := -1
	for quiet := 0; quiet < 3; time.Sleep(150 * time.Millisecond) {
		tr.sync()
		if tr.events == last {
			quiet++
		} else {
			quiet, last = 0, tr.events
		}
	}
	elapsed, burstEvents := time.Since(start), tr.events
	tr.expandAll(doc1)
	if w, p := windowDOM(doc1), pageTreeText(t, a, one); w != p {
		i := 0
		for i < len(w) && i < len(p) && w[i] == p[i] {
			i++
		}
		from := max(0, i-300)
		t.Fatalf("after the burst, the window's tree of page one differs from the page at byte %d:\nwindow (%d bytes): …%.600s\npage (%d bytes): …%.600s", i, len(w), w[from:], len(p), p[from:])
	}
	var st struct {
		Flushes, Events, Overflows int
	}
	_ = json.Unmarshal(evalValue(t, a, one, `__inspectorWorkerClient.stats().dom`), &st)
	t.Logf("burst: %d DOM events in the window over %v (%d flushes, %d events sent by the page, %d overflows)",
		burstEvents, elapsed.Round(time.Millisecond), st.Flushes, st.Events, st.Overflows)
}

// domError calls method and returns its error message, failing when it
// succeeds.
func domError(t *testing.T, c *cdptest.Client, method string, params map[string]any) string {
	t.Helper()
	m := c.Call(method, params)
	if m.Error == nil {
		t.Fatalf("%s %v succeeded, want an error: %s", method, params, m.Raw)
	}
	return m.Error.Message
}

// expanded opens a window's tree down to page ctx's <body> and returns it.
func expanded(t *testing.T, tr *domTree, ctx ctxEvent) *domNode {
	t.Helper()
	doc := tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument
	tr.expandAll(doc)
	var body *domNode
	var walk func(n *domNode)
	walk = func(n *domNode) {
		if n.NodeName == "BODY" {
			body = n
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(doc)
	if body == nil {
		t.Fatalf("no <body> in the window's tree of %q", ctx.Context.Name)
	}
	return body
}

// Node ids are the window's own: a forged id, a page's id the page does not
// have, another page's node passed with a page's context, an id of an
// earlier document and another window's id are all refused by name, and
// the pages never see them.
func TestDOMNodeIDsRefused(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	titles := []string{"DOM ids one", "DOM ids two"}
	domPages(t, reg, token, titles...)
	a, ctxs := domWindow(t, w, "A", titles...)
	one, two := ctxs[titles[0]], ctxs[titles[1]]
	tr := newDOMTree(t, a)
	h1 := expanded(t, tr, one).Children[0]
	if h1.NodeName != "H1" {
		t.Fatalf("first child of page one's body %+v", h1)
	}
	ns := h1.NodeID >> 32

	for _, tc := range []struct {
		name   string
		method string
		params map[string]any
		want   string
	}{
		{"forged namespace", "DOM.describeNode", map[string]any{"nodeId": int64(1<<20)<<32 | 5}, "no node with id"},
		{"forged host id", "DOM.getOuterHTML", map[string]any{"nodeId": 77}, "no node with id 77"},
		{"unknown id in a page", "DOM.describeNode", map[string]any{"nodeId": ns<<32 | 999999}, "no node with id 999999 in this page"},
		{"another page's node with a page's context", "DOM.resolveNode",
			map[string]any{"nodeId": h1.NodeID, "executionContextId": two.Context.ID}, "nodes cannot cross pages"},
		{"the host's placeholder", "DOM.setAttributeValue", map[string]any{"nodeId": 4, "name": "a", "value": "b"}, "placeholders"},
		{"a host object", "DOM.requestNode", map[string]any{"objectId": "1234567.1.1"}, "Node.js host, which has no DOM"},
	} {
		if got := domError(t, a, tc.method, tc.params); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %s answered %q, want it to say %q", tc.name, tc.method, got, tc.want)
		}
	}
	// The page's own node, in its own context, resolves.
	m := a.MustCall("DOM.resolveNode", map[string]any{"nodeId": h1.NodeID, "executionContextId": one.Context.ID})
	if !strings.Contains(string(m.Result), `"subtype":"node"`) {
		t.Fatalf("DOM.resolveNode of page one's <h1>: %s", m.Raw)
	}

	// Another window cannot use A's ids.
	b, _ := domWindow(t, w, "B", titles...)
	newDOMTree(t, b)
	if got := domError(t, b, "DOM.describeNode", map[string]any{"nodeId": h1.NodeID}); !strings.Contains(got, "another window's") {
		t.Errorf("window B using A's node: %q", got)
	}
	// A new document: A's old ids are stale.
	newDOMTree(t, a)
	if got := domError(t, a, "DOM.getOuterHTML", map[string]any{"nodeId": h1.NodeID}); !strings.Contains(got, "no longer holds") {
		t.Errorf("an id of A's earlier document: %q", got)
	}
}

// Closing a window (and DOM.disable) frees its node ids in the page: the
// page's DOM agent holds no session and no node and stops observing, while
// the window that watches it never asked for nodes.
func TestDOMWindowCloseFreesPageNodes(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM close page"
	domPages(t, reg, token, title)
	watch, ctxs := domWindow(t, w, "watch", title)
	ctx := ctxs[title]
	type domStats struct {
		Observing bool `json:"observing"`
		Sessions  int  `json:"sessions"`
		Nodes     int  `json:"nodes"`
	}
	stats := func() domStats {
		var st domStats
		_ = json.Unmarshal(evalValue(t, watch, ctx, `__inspectorWorkerClient.stats().dom`), &st)
		return st
	}
	waitFor := func(what string, ok func(domStats) bool) domStats {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			st := stats()
			if ok(st) {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: page DOM agent %+v", what, st)
			}
		}
	}
	for round, end := range []string{"DOM.disable", "close"} {
		a, _ := domWindow(t, w, fmt.Sprintf("A%d", round), title)
		tr := newDOMTree(t, a)
		expanded(t, tr, ctx)
		held := waitFor("while expanded", func(st domStats) bool { return st.Sessions == 1 && st.Nodes > 10 && st.Observing })
		if end == "close" {
			_ = a.Conn().CloseNow()
		} else {
			a.MustCall("DOM.disable", nil)
		}
		freed := waitFor("after "+end, func(st domStats) bool { return st.Sessions == 0 && st.Nodes == 0 && !st.Observing })
		t.Logf("%s: page agent %+v, then %+v", end, held, freed)
	}
}

// Console ↔ Elements: a page object that is a node becomes the window's
// node (DOM.requestNode, with its path pushed) and back (DOM.resolveNode);
// describeNode and getOuterHTML name it; edits change the page's DOM and
// come back as events before their answers.
func TestDOMRevealAndEdit(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM reveal page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	tr := newDOMTree(t, a)

	obj := evalIn(t, a, ctx, `document.querySelector('#list li + li')`, "console")
	if obj.Result.Subtype != "node" {
		t.Fatalf("a page element evaluates to %+v, want subtype node", obj.Result)
	}
	m := a.MustCall("DOM.requestNode", map[string]any{"objectId": obj.Result.ObjectID})
	var rn struct {
		NodeID int64 `json:"nodeId"`
	}
	_ = json.Unmarshal(m.Result, &rn)
	tr.sync()
	li := tr.byID[rn.NodeID]
	if li == nil || li.NodeName != "LI" {
		t.Fatalf("DOM.requestNode answered %s; the window's tree has %+v for it", m.Raw, li)
	}
	d := a.MustCall("DOM.describeNode", map[string]any{"objectId": obj.Result.ObjectID})
	if !strings.Contains(string(d.Result), fmt.Sprintf(`"backendNodeId":%d`, rn.NodeID)) {
		t.Fatalf("DOM.describeNode by objectId %s, want backendNodeId %d", d.Raw, rn.NodeID)
	}
	p := a.MustCall("DOM.pushNodesByBackendIdsToFrontend", map[string]any{"backendNodeIds": []int64{rn.NodeID, 3}})
	if want := fmt.Sprintf(`{"nodeIds":[%d,3]}`, rn.NodeID); compact(t, p.Result) != want {
		t.Fatalf("pushNodesByBackendIdsToFrontend %s, want %s", p.Raw, want)
	}
	r := a.MustCall("DOM.resolveNode", map[string]any{"nodeId": rn.NodeID, "objectGroup": "g"})
	var ro struct {
		Object remoteObject `json:"object"`
	}
	_ = json.Unmarshal(r.Result, &ro)
	if got := string(evalValue(t, a, ctx, `1`)); got != "1" || ro.Object.Subtype != "node" {
		t.Fatalf("DOM.resolveNode %s", r.Raw)
	}
	cf := a.MustCall("Runtime.callFunctionOn", map[string]any{"objectId": ro.Object.ObjectID,
		"functionDeclaration": "function () { return this.textContent; }", "returnByValue": true})
	if !strings.Contains(string(cf.Result), `"value":"two"`) {
		t.Fatalf("the resolved object is not the page's second <li>: %s", cf.Raw)
	}

	a.MustCall("DOM.setAttributeValue", map[string]any{"nodeId": rn.NodeID, "name": "data-x", "value": "1"})
	a.MustCall("DOM.setAttributesAsText", map[string]any{"nodeId": rn.NodeID, "text": `class="picked" title='t'`, "name": "data-x"})
	a.MustCall("DOM.requestChildNodes", map[string]any{"nodeId": rn.NodeID})
	tr.sync()
	if len(li.Children) != 1 {
		t.Fatalf("the <li>'s children: %+v", li.Children)
	}
	a.MustCall("DOM.setNodeValue", map[string]any{"nodeId": li.Children[0].NodeID, "value": "TWO"})
	html := a.MustCall("DOM.getOuterHTML", map[string]any{"nodeId": rn.NodeID})
	if want := `{"outerHTML":"<li class=\"picked\" title=\"t\">TWO</li>"}`; compact(t, html.Result) != want {
		t.Fatalf("DOM.getOuterHTML after the edits %s, want %s", html.Result, want)
	}
	tr.sync() // the edits' events came before their answers
	var b strings.Builder
	serialize(li, &b)
	if got := b.String(); got != `<li class="picked" title="t">#TWO</li>` {
		t.Fatalf("the window's <li> after the edits: %s", got)
	}
	a.MustCall("DOM.removeNode", map[string]any{"nodeId": rn.NodeID})
	tr.sync()
	if tr.byID[rn.NodeID] != nil {
		t.Fatalf("removed node %d is still in the window's tree", rn.NodeID)
	}
	if got := string(evalValue(t, a, ctx, `document.querySelectorAll('#list li').length`)); got != "1" {
		t.Fatalf("the page has %s <li> after DOM.removeNode, want 1", got)
	}
}

// A page that reloads swaps its subtree: the old frame owner is removed
// from the window's tree and a new one, with the new load's document,
// inserted in its place; the old load's ids are refused.
func TestDOMPageReloadSwapsSubtree(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM reload page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	tr := newDOMTree(t, a)
	old := tr.owners()[ctx.Context.AuxData.FrameID]
	h1 := expanded(t, tr, ctx).Children[0]
	a.Send("Runtime.evaluate", map[string]any{"expression": "setTimeout(() => location.reload(), 50)", "uniqueContextId": ctx.Context.UniqueID})
	a.ExpectAnyEvent("DOM.childNodeRemoved", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), fmt.Sprintf(`"nodeId":%d`, old.NodeID))
	})
	a.ExpectAnyEvent("DOM.childNodeInserted", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), ctx.Context.AuxData.FrameID)
	})
	tr.sync()
	now := tr.owners()[ctx.Context.AuxData.FrameID]
	if now == nil || now.NodeID == old.NodeID || tr.byID[h1.NodeID] != nil {
		t.Fatalf("after the reload: owner %+v (was %d); the old <h1> %d still known: %v", now, old.NodeID, h1.NodeID, tr.byID[h1.NodeID] != nil)
	}
	if got := domError(t, a, "DOM.describeNode", map[string]any{"nodeId": h1.NodeID}); !strings.Contains(got, "no longer holds") {
		t.Errorf("an id of the earlier load: %q", got)
	}
	tr.expandAll(now.ContentDocument)
	newCtx := clientContextEventNamed(t, a, title, ctx.Context.UniqueID)
	if w, p := windowDOM(now.ContentDocument), pageTreeText(t, a, newCtx); w != p {
		t.Fatalf("the reloaded page in the window:\n%s\npage:\n%s", w, p)
	}
}

// clientContextEventNamed waits for a page context named title other than
// the one with uniqueID not.
func clientContextEventNamed(t *testing.T, c *cdptest.Client, title, not string) ctxEvent {
	t.Helper()
	m := c.ExpectAnyEvent("Runtime.executionContextCreated", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"name":"`+title+`"`) && !strings.Contains(string(m.Params), not)
	})
	var ev ctxEvent
	if err := json.Unmarshal(m.Params, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// The overflow policy: a page that changes more of what a window shows in
// one flush than MAX_EVENTS_PER_FLUSH (client/js/dom.mjs) sends that window
// documentUpdated instead of the events and forgets its nodes; the window
// asks for the document again and then shows the page as it is.
func TestDOMOverflowSendsDocumentUpdated(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM overflow page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	tr := newDOMTree(t, a)
	expanded(t, tr, ctx) // the <ul>'s children are the window's
	before := len(a.Events("DOM.childNodeInserted"))
	// 5,000 insertions in one task: one flush, over the bound.
	evalValue(t, a, ctx, `(function () { var l = document.getElementById('list');
	  for (var i = 0; i < 5000; i++) l.appendChild(document.createElement('li')).textContent = 'n' + i; return 1; })()`)
	a.ExpectAnyEvent("DOM.documentUpdated", nil)
	if n := len(a.Events("DOM.childNodeInserted")) - before; n > 0 {
		t.Errorf("%d childNodeInserted events sent besides documentUpdated", n)
	}
	var st struct{ Sessions, Nodes, Overflows int }
	_ = json.Unmarshal(evalValue(t, a, ctx, `__inspectorWorkerClient.stats().dom`), &st)
	if st.Overflows != 1 || st.Sessions != 0 || st.Nodes != 0 {
		t.Errorf("page DOM agent after the overflow: %+v, want 1 overflow and the window's nodes forgotten", st)
	}
	tr = newDOMTree(t, a)
	doc := tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument
	tr.expandAll(doc)
	if w, p := windowDOM(doc), pageTreeText(t, a, ctx); w != p {
		t.Fatalf("after documentUpdated and a new document, the window differs from the page (%d vs %d bytes)", len(w), len(p))
	}
}

// A child moved within its parent costs the window two events (out, and in
// at its new place), however long the list: the rest keep their ids. The
// first diff kept only children matching the old order greedily from the
// front, so moving the first of 1,500 children to the end re-sent all of
// them and overflowed into documentUpdated.
func TestDOMMoveIsTwoEvents(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	title := "DOM move page"
	domPages(t, reg, token, title)
	a, ctxs := domWindow(t, w, "A", title)
	ctx := ctxs[title]
	evalValue(t, a, ctx, `(function () { var l = document.getElementById('list');
	  for (var i = 0; i < 1500; i++) l.appendChild(document.createElement('li')).textContent = 'n' + i; return 1; })()`)
	tr := newDOMTree(t, a)
	doc := tr.owners()[ctx.Context.AuxData.FrameID].ContentDocument
	tr.expandAll(doc)
	tr.events = 0
	for _, move := range []string{"l.appendChild(l.firstElementChild)", "l.insertBefore(l.lastElementChild, l.firstElementChild)",
		"l.insertBefore(l.children[700], l.children[10])"} {
		before := tr.events
		evalValue(t, a, ctx, `(function () { var l = document.getElementById('list'); `+move+`; return 1; })()`)
		a.Expect("a DOM event", func(m cdptest.Msg) bool {
			return m.Method == "DOM.childNodeInserted" || m.Method == "DOM.documentUpdated"
		})
		time.Sleep(300 * time.Millisecond) // six flush windows: anything else would have come
		tr.sync()
		if got := tr.events - before; got != 2 || len(a.Events("DOM.documentUpdated")) > 0 {
			t.Errorf("%s: %d DOM events (documentUpdated: %d), want 2", move, got, len(a.Events("DOM.documentUpdated")))
		}
		a.Forget()
		tr.seen = 0
	}
	if w, p := windowDOM(doc), pageTreeText(t, a, ctx); w != p {
		t.Fatalf("after the moves the window differs from the page (%d vs %d bytes)", len(w), len(p))
	}
}

// Ctrl-F in Elements over two pages: DOM.performSearch counts the matches
// of every page (a CSS selector here), and DOM.getSearchResults pushes each
// match with its path from the page that holds it.
func TestDOMSearchAcrossPages(t *testing.T) {
	w, reg, token := runtimeWorker(t, Options{ClientRuntimeTimeout: time.Minute})
	titles := []string{"DOM search one", "DOM search two"}
	domPages(t, reg, token, titles...)
	a, ctxs := domWindow(t, w, "A", titles...)
	tr := newDOMTree(t, a)
	m := a.MustCall("DOM.performSearch", map[string]any{"query": "#list li"})
	var ps struct {
		SearchID    string `json:"searchId"`
		ResultCount int    `json:"resultCount"`
	}
	_ = json.Unmarshal(m.Result, &ps)
	if ps.ResultCount != 4 {
		t.Fatalf("DOM.performSearch #list li over two pages of two <li> each: %s", m.Raw)
	}
	got := map[string]int{}
	for i := range 4 {
		r := a.MustCall("DOM.getSearchResults", map[string]any{"searchId": ps.SearchID, "fromIndex": i, "toIndex": i + 1})
		var ans struct {
			NodeIDs []int64 `json:"nodeIds"`
		}
		_ = json.Unmarshal(r.Result, &ans)
		tr.sync()
		if len(ans.NodeIDs) != 1 || tr.byID[ans.NodeIDs[0]] == nil || tr.byID[ans.NodeIDs[0]].NodeName != "LI" {
			t.Fatalf("result %d: %s (in the window's tree: %+v)", i, r.Raw, tr.byID[ans.NodeIDs[0]])
		}
		for title, ctx := range ctxs {
			if owner := tr.owners()[ctx.Context.AuxData.FrameID]; owner.NodeID>>32 == ans.NodeIDs[0]>>32 {
				got[title]++
			}
		}
	}
	if got[titles[0]] != 2 || got[titles[1]] != 2 {
		t.Fatalf("results by page %v, want two in each", got)
	}
	if e := domError(t, a, "DOM.getSearchResults", map[string]any{"searchId": ps.SearchID, "fromIndex": 1, "toIndex": 3}); !strings.Contains(e, "span two pages") {
		t.Errorf("a range over two pages: %q", e)
	}
	a.MustCall("DOM.discardSearchResults", map[string]any{"searchId": ps.SearchID})
	if e := domError(t, a, "DOM.getSearchResults", map[string]any{"searchId": ps.SearchID, "fromIndex": 0, "toIndex": 1}); !strings.Contains(e, "no search") {
		t.Errorf("a discarded search: %q", e)
	}
	none := a.MustCall("DOM.performSearch", map[string]any{"query": "no-such-thing-anywhere"})
	if !strings.Contains(string(none.Result), `"resultCount":0`) {
		t.Errorf("a search that finds nothing: %s", none.Raw)
	}
}
