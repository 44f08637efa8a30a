package cdpserver

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
)

// /json/protocol: Node's own protocol description with the method table
// (methods.go) merged in. Clients build their typed API from it
// (chrome-remote-interface creates client.<Domain>.<name> for each listed
// command and event, and a domain listed twice replaces the first), so each
// domain appears exactly once: the worker's commands and events join Node's
// entry for a domain Node describes, and the worker's own domains get one
// entry each.

// workerEvents are the events the worker sends itself, by domain, for the
// domains it adds or extends. Node describes the events of its own domains
// (Runtime.executionContextCreated, Debugger.scriptParsed … which the worker
// also sends for client realms).
var workerEvents = map[string][]string{
	// pagerealm/cdp.go: one child frame per client page.
	"Page": {"frameAttached", "frameNavigated", "documentOpened", "frameDetached"},
	// cdpwire.LogEntry: the worker's own warnings.
	"Log": {"entryAdded"},
	// The Network panel's events, sent by package network from the fetch
	// journal (Node 20 lists four of them itself).
	"Network": {"requestWillBeSent", "responseReceived", "dataReceived", "loadingFinished", "loadingFailed"},
}

// protocolVersionJSON is used when Node's description is unavailable.
const protocolVersionJSON = `{"major":"1","minor":"3"}`

func (s *Server) handleProtocol(w http.ResponseWriter, r *http.Request) {
	raw, err := s.hostProtocol(r)
	if err != nil {
		s.logf("/json/protocol: Node's protocol description is unavailable (%v); serving the worker's domains only", err)
		raw = nil
	}
	writeJSON(w, buildProtocol(raw))
}

type protocolDoc struct {
	Version json.RawMessage   `json:"version"`
	Domains []json.RawMessage `json:"domains"`
}

type protocolDomain struct {
	Domain      string         `json:"domain"`
	Description string         `json:"description"`
	Commands    []protocolItem `json:"commands"`
	Events      []protocolItem `json:"events,omitempty"`
}

// protocolItem is a command or an event. The worker lists no parameters:
// its answers are the fixed shapes of the method table.
type protocolItem struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// buildProtocol merges the method table into Node's description nodeDoc
// (nil or unparseable: the worker's domains alone). Node's domains keep their
// order and every member Node gave them; the worker's own domains follow,
// sorted.
func buildProtocol(nodeDoc []byte) protocolDoc {
	var doc protocolDoc
	if nodeDoc != nil {
		_ = json.Unmarshal(nodeDoc, &doc)
	}
	if doc.Version == nil {
		doc.Version = json.RawMessage(protocolVersionJSON)
	}
	mine := workerDomains()
	var out []json.RawMessage
	seen := map[string]bool{}
	for _, raw := range doc.Domains {
		var d map[string]json.RawMessage
		var name string
		if json.Unmarshal(raw, &d) != nil || json.Unmarshal(d["domain"], &name) != nil || seen[name] {
			continue // a domain Node listed twice keeps its first entry
		}
		seen[name] = true
		if w, ok := mine[name]; ok {
			d["commands"] = mergeItems(d["commands"], w.Commands)
			if len(w.Events) > 0 {
				d["events"] = mergeItems(d["events"], w.Events)
			}
			raw, _ = json.Marshal(d)
		}
		out = append(out, raw)
	}
	names := make([]string, 0, len(mine))
	for name := range mine {
		if !seen[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		b, _ := json.Marshal(mine[name])
		out = append(out, b)
	}
	doc.Domains = out
	return doc
}

// mergeItems appends to Node's list (a JSON array, possibly absent) the
// worker's items it lacks, by name. Node's own items stay untouched.
func mergeItems(nodeList json.RawMessage, add []protocolItem) json.RawMessage {
	var items []json.RawMessage
	_ = json.Unmarshal(nodeList, &items)
	have := map[string]bool{}
	for _, it := range items {
		var named struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(it, &named) == nil {
			have[named.Name] = true
		}
	}
	for _, it := range add {
		if !have[it.Name] {
			b, _ := json.Marshal(it)
			items = append(items, b)
		}
	}
	b, _ := json.Marshal(items)
	return b
}

// workerDomains lists the method table and workerEvents by domain, each
// list sorted by name.
func workerDomains() map[string]*protocolDomain {
	out := map[string]*protocolDomain{}
	get := func(name string) *protocolDomain {
		d := out[name]
		if d == nil {
			d = &protocolDomain{Domain: name, Description: "served by inspector-worker", Commands: []protocolItem{}}
			out[name] = d
		}
		return d
	}
	for m, e := range methods {
		domain, name, _ := strings.Cut(m, ".")
		d := get(domain)
		d.Commands = append(d.Commands, protocolItem{Name: name, Description: e.describe()})
	}
	for domain, events := range workerEvents {
		d := get(domain)
		for _, name := range events {
			d.Events = append(d.Events, protocolItem{Name: name, Description: "sent by inspector-worker"})
		}
	}
	for _, d := range out {
		sort.Slice(d.Commands, func(i, j int) bool { return d.Commands[i].Name < d.Commands[j].Name })
		sort.Slice(d.Events, func(i, j int) bool { return d.Events[i].Name < d.Events[j].Name })
	}
	return out
}
