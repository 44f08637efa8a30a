//go:build linux

package cdpserver

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
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
	ShadowRoots     []*domNode `json:"shadowRoots"`
	ShadowRootType  string     `json:"shadowRootType"`
	TemplateContent *domNode   `json:"templateContent"`
	known           bool       // children known (sent)
}

// beside are n's shadow roots and template content, which the tree holds
// beside its children.
func (n *domNode) beside() []*domNode {
	out := append([]*domNode(nil), n.ShadowRoots...)
	if n.TemplateContent != nil {
		out = append(out, n.TemplateContent)
	}
	return out
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
	// allowReset: documentUpdated is expected (counted in resets); the
	// tree is stale after one until newDOMTree.
	allowReset bool
	resets     int
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
	for _, b := range n.beside() {
		tr.index(b)
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
	for _, b := range n.beside() {
		tr.forget(b)
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
		HostID         int64    `json:"hostId"`
		Root           *domNode `json:"root"`
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
	case "DOM.shadowRootPushed":
		host := tr.must(p.HostID, m)
		if len(host.ShadowRoots) > 0 {
			tr.t.Fatalf("%s: host %d has a shadow root already", m.Raw, p.HostID)
		}
		host.ShadowRoots = []*domNode{p.Root}
		tr.index(p.Root)
	case "DOM.documentUpdated":
		if !tr.allowReset {
			tr.t.Fatalf("documentUpdated: the page overflowed; the test's burst is meant to stay under the bound")
		}
		tr.resets++
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
			for _, b := range n.beside() {
				walk(b)
			}
			if n.ContentDocument != nil && n.NodeType == 1 {
				walk(n.ContentDocument)
			}
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
		for _, r := range n.ShadowRoots {
			b.WriteString("<#shadow-root " + r.ShadowRootType + ">")
			for _, c := range r.Children {
				serialize(c, b)
			}
			b.WriteString("</#shadow-root>")
		}
		if tc := n.TemplateContent; tc != nil {
			b.WriteString("<#content>")
			for _, c := range tc.Children {
				serialize(c, b)
			}
			b.WriteString("</#content>")
		}
		if cd := n.ContentDocument; cd != nil {
			b.WriteString("<#frame>")
			serialize(cd, b)
			b.WriteString("</#frame>")
		}
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
      var root = n.shadowRoot || (window.__closedRoots && window.__closedRoots.get(n));
      if (root && n.localName !== 'inspector-worker-overlay') {
        s += '<#shadow-root ' + root.mode + '>';
        for (var r = root.firstChild; r; r = r.nextSibling) s += ser(r);
        s += '</#shadow-root>';
      }
      if (n.localName === 'template' && n.content) {
        s += '<#content>';
        for (var t = n.content.firstChild; t; t = t.nextSibling) s += ser(t);
        s += '</#content>';
      }
      var cd = null;
      try { cd = n.localName === 'iframe' ? n.contentDocument : null; } catch (e) { cd = null; }
      if (cd) s += '<#frame>' + ser(cd) + '</#frame>';
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
