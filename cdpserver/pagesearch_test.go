package cdpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Debugger.searchInContent on a client script reads the script from its
// page and answers the matching lines; the host's scripts are still
// searched by Node.
func TestClientScriptSearchInContent(t *testing.T) {
	w, reg, token := clientWorker(t)
	a := w.dial("A")
	enableAll(a)
	host := a.ExpectEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), `"url":"file://`) })
	pg := openPage(t, reg, token, "page-1", "http://127.0.0.1:3000/", "Shop")
	pg.ingest(pg.p.Replace(t, sourceproto.ReplaceInitial,
		sourceproto.Item{Topic: sourceproto.TopicScript, Script: &sourceproto.ScriptInfo{URL: "http://127.0.0.1:3000/app.js"}}))
	sp := a.ExpectEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool { return strings.Contains(string(m.Params), "app.js") })
	var script struct {
		ScriptID string `json:"scriptId"`
	}
	json.Unmarshal(sp.Params, &script)

	id := a.Send("Debugger.searchInContent", map[string]any{"scriptId": script.ScriptID, "query": "cart"})
	body := "const cart = [];\nfunction pay() {}\nCart.push(1);\n"
	if read := serveScriptRead(t, pg, body); read.URL != "http://127.0.0.1:3000/app.js" {
		t.Fatalf("script.read %+v", read)
	}
	m := a.ExpectResponse(id)
	want := `{"result":[{"lineNumber":0,"lineContent":"const cart = [];"},{"lineNumber":2,"lineContent":"Cart.push(1);"}]}`
	if m.Error != nil || compact(t, m.Result) != want {
		t.Fatalf("searchInContent = %s, want result %s", m.Raw, want)
	}

	// A host script is Node's to search.
	var hs struct {
		ScriptID string `json:"scriptId"`
	}
	json.Unmarshal(host.Params, &hs)
	if m := a.Call("Debugger.searchInContent", map[string]any{"scriptId": hs.ScriptID, "query": "x"}); m.Error != nil || !strings.Contains(string(m.Result), `"result"`) {
		t.Fatalf("searchInContent in a host script: %s", m.Raw)
	}
}
