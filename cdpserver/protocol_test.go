package cdpserver

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

type protoItemJSON struct {
	Name string `json:"name"`
}

type protoDomainJSON struct {
	Domain      string          `json:"domain"`
	Description string          `json:"description"`
	Commands    []protoItemJSON `json:"commands"`
	Events      []protoItemJSON `json:"events"`
	Types       []any           `json:"types"`
}

type protoDocJSON struct {
	Version struct{ Major, Minor string } `json:"version"`
	Domains []protoDomainJSON             `json:"domains"`
}

// checkProtocol decodes a /json/protocol document and checks what
// chrome-remote-interface relies on: each domain once (a second entry would
// replace the first, events and all), each command and event once per
// domain, and every method of the table listed as a command of its domain.
// It returns the domains by name.
func checkProtocol(t *testing.T, b []byte) map[string]protoDomainJSON {
	t.Helper()
	var doc protoDocJSON
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not a protocol document: %v", err)
	}
	if doc.Version.Major == "" {
		t.Errorf("no version: %s", truncate(string(b), 200))
	}
	byName := map[string]protoDomainJSON{}
	for _, d := range doc.Domains {
		if _, dup := byName[d.Domain]; dup {
			t.Errorf("domain %s listed twice", d.Domain)
		}
		byName[d.Domain] = d
		for kind, items := range map[string][]protoItemJSON{"command": d.Commands, "event": d.Events} {
			seen := map[string]bool{}
			for _, it := range items {
				if seen[it.Name] {
					t.Errorf("%s %s.%s listed twice", kind, d.Domain, it.Name)
				}
				seen[it.Name] = true
			}
		}
	}
	for _, method := range sortedKeys(methods) {
		domain, name, _ := strings.Cut(method, ".")
		if !hasItem(byName[domain].Commands, name) {
			t.Errorf("table method %s is not a command in /json/protocol", method)
		}
	}
	return byName
}

func hasItem(items []protoItemJSON, name string) bool {
	for _, it := range items {
		if it.Name == name {
			return true
		}
	}
	return false
}

// /json/protocol from a real worker in front of a real Node: each domain
// once; Node's domains keep their events and types (Node 20 describes
// Network too, which the worker extends rather than repeats); the worker's
// domains carry the events it sends.
func TestProtocolListsEachDomainOnce(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	resp, err := w.get("/json/protocol", "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	domains := checkProtocol(t, b)
	rt := domains["Runtime"]
	if !hasItem(rt.Events, "executionContextCreated") || !hasItem(rt.Events, "consoleAPICalled") || len(rt.Types) == 0 ||
		rt.Description == "served by inspector-worker" {
		t.Errorf("Runtime lost Node's description: %d events, %d types, %q", len(rt.Events), len(rt.Types), rt.Description)
	}
	for domain, want := range map[string][]string{
		"Network": {"requestWillBeSent", "responseReceived", "loadingFinished", "loadingFailed"},
		"Page":    {"frameAttached", "frameNavigated", "documentOpened", "frameDetached"},
		"Log":     {"entryAdded"},
	} {
		for _, ev := range want {
			if !hasItem(domains[domain].Events, ev) {
				t.Errorf("event %s.%s missing from /json/protocol", domain, ev)
			}
		}
	}
	if !hasItem(domains["Debugger"].Commands, "setBlackboxExecutionContexts") || !hasItem(domains["Debugger"].Events, "scriptParsed") {
		t.Errorf("Debugger: the worker's no-op is not merged into Node's domain, or Node's events are gone")
	}
}

// The merge keeps every member of Node's domains, adds only what Node lacks,
// and without Node's description still serves the worker's domains once.
func TestBuildProtocolMerge(t *testing.T) {
	node := `{"version":{"major":"1","minor":"0"},"domains":[
	 {"domain":"Runtime","experimental":true,"commands":[{"name":"enable","parameters":[]}],"events":[{"name":"executionContextCreated"}],"types":[{"id":"RemoteObject"}]},
	 {"domain":"Network","description":"Node's","commands":[{"name":"enable"},{"name":"disable"}],"events":[{"name":"requestWillBeSent","parameters":[{"name":"requestId"}]}]},
	 {"domain":"Runtime","commands":[{"name":"bogus"}]}]}`
	b, err := json.Marshal(buildProtocol([]byte(node)))
	if err != nil {
		t.Fatal(err)
	}
	domains := checkProtocol(t, b)
	if d := domains["Runtime"]; len(d.Types) != 1 || hasItem(d.Commands, "bogus") || !strings.Contains(string(b), `"experimental":true`) {
		t.Errorf("Runtime: Node's first entry not kept as it was: %s", b)
	}
	nw := domains["Network"]
	if nw.Description != "Node's" || !hasItem(nw.Commands, "setCacheDisabled") || !hasItem(nw.Events, "loadingFinished") ||
		!strings.Contains(string(b), `"parameters":[{"name":"requestId"}]`) {
		t.Errorf("Network not merged into Node's entry: %+v", nw)
	}
	b, _ = json.Marshal(buildProtocol(nil))
	domains = checkProtocol(t, b)
	if !hasItem(domains["Page"].Commands, "disable") || !hasItem(domains["Network"].Events, "requestWillBeSent") {
		t.Errorf("worker domains without Node: %s", truncate(string(b), 300))
	}
}

// Page.disable reaches the client hub: a page that connects afterwards
// brings its execution context but no frame events.
func TestPageDisableStopsFrameEvents(t *testing.T) {
	w, reg, token := clientWorker(t)
	a := w.dial("A")
	enableAll(a)
	a.MustCall("Page.disable", nil)
	pg := openPage(t, reg, token, "page-1", "http://127.0.0.1:3000/", "Shop")
	pg.ingest(pg.p.Replace(t, sourceproto.ReplaceInitial,
		sourceproto.Item{Topic: sourceproto.TopicPage, Page: &sourceproto.PageInfo{URL: "http://127.0.0.1:3000/", Title: "Shop"}}))
	// Frame events would be queued before the context's (SourceOpened), so
	// once the context is here they would be too.
	clientContextEvent(t, a)
	for _, ev := range []string{"Page.frameAttached", "Page.frameNavigated", "Page.documentOpened"} {
		if got := a.Events(ev); len(got) != 0 {
			t.Fatalf("%s after Page.disable: %s", ev, got[0].Raw)
		}
	}
	b := w.dial("B")
	b.MustCall("Page.enable", nil)
	b.MustCall("Runtime.enable", nil)
	tree := b.MustCall("Page.getResourceTree", nil)
	if !strings.Contains(string(tree.Result), "127.0.0.1:3000") {
		t.Fatalf("control: the page is not a frame for a window with Page enabled: %s", tree.Result)
	}
}
