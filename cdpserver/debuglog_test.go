package cdpserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// logLines collects a worker's log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) matching(re string) []string {
	rx := regexp.MustCompile(re)
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if rx.MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}

// With debugging on, each refused or unknown method is logged once per
// window with its code and reason, whoever refused it; params never are.
func TestRefusalsLoggedOncePerWindow(t *testing.T) {
	var log logLines
	w := startWorker(t, hostScript, Options{Logf: log.logf})
	secret := map[string]any{"token": "s3cret-param-value"}
	a := w.dial("A")
	for range 3 {
		a.Call("Foo.bar", secret)                                                           // unknown domain: the worker
		a.Call("DOM.getNodesForSubtreeByStyle", secret)                                     // deliberate refusal: the worker
		a.Call("Runtime.noSuchMethod", secret)                                              // relayed: Node refuses it
		a.MustCall("Runtime.evaluate", map[string]any{"expression": "'s3cret-expression'"}) // accepted: never logged
	}
	b := w.dial("B")
	b.Call("Foo.bar", nil)

	for _, tc := range []struct {
		re   string
		want int
	}{
		{`connection 1: "Foo.bar" refused by inspector-worker: -32601 'Foo.bar' wasn't found`, 1},
		{`connection 1: "DOM.getNodesForSubtreeByStyle" refused by inspector-worker: -32000 no DOM`, 1},
		{`connection 1: "Runtime.noSuchMethod" refused by the Node host: -32601 `, 1},
		{`connection 2: "Foo.bar" refused by inspector-worker`, 1},
		{`Runtime.evaluate`, 0},
		{`s3cret`, 0},
	} {
		var got []string
		deadline := time.Now().Add(cdptest.Timeout)
		for {
			got = log.matching(tc.re)
			if len(got) >= tc.want || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if len(got) != tc.want {
			t.Errorf("%d log lines match %q, want %d:\n%s", len(got), tc.re, tc.want, strings.Join(log.matching(``), "\n"))
		}
	}
}

// Without debugging nothing is recorded, and the per-window set stays
// bounded however many distinct methods a client invents.
func TestRefusalLogBounded(t *testing.T) {
	var l refusalLog
	for i := range maxLoggedMethods {
		if first, _ := l.first(fmt.Sprint("M.", i)); !first {
			t.Fatalf("method %d not logged", i)
		}
	}
	if first, full := l.first("M.again"); first || !full {
		t.Fatalf("past the bound: first=%v full=%v, want a single 'full' notice", first, full)
	}
	if first, full := l.first("M.more"); first || full {
		t.Fatalf("after the notice: first=%v full=%v, want silence", first, full)
	}
	if len(l.logged) != maxLoggedMethods {
		t.Fatalf("%d methods remembered, want %d", len(l.logged), maxLoggedMethods)
	}
}

func TestMayBeError(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want bool
	}{
		{`{"id":7,"error":{"code":-32601,"message":"x"}}`, true},
		{`{"id":7,"result":{"result":{"type":"string","value":"\"error\":"}}}`, false},
		{`{"id":7,"result":{}}`, false},
		{`{"result":{},"id":7,"error":{}}`, true}, // another shape: scanned
		{`{"id":-1,"error":{}}`, true},            // not V8's shape: scanned
	} {
		if got := mayBeError([]byte(tc.msg)); got != tc.want {
			t.Errorf("mayBeError(%s) = %v, want %v", tc.msg, got, tc.want)
		}
	}
}

// Discovery answers with a trailing slash too, as Node and Chrome do
// (Playwright asks for /json/version/); a path nothing serves is a 404 that
// debugging logs, without its query.
func TestDiscoveryTrailingSlashAndLogged404(t *testing.T) {
	var log logLines
	w := startWorker(t, hostScript, Options{Logf: log.logf})
	for _, path := range []string{"/json/", "/json/list/", "/json/version/", "/json/protocol/"} {
		resp, err := w.get(path, "")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !json.Valid(b) {
			t.Errorf("GET %s: %d %.80s, want 200 and JSON", path, resp.StatusCode, b)
		}
	}
	resp, err := w.get("/json/nope?token=s3cret", "")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /json/nope: %d, want 404", resp.StatusCode)
	}
	if got := log.matching(`404 for GET /json/nope: the worker serves`); len(got) != 1 {
		t.Errorf("404 log lines %q, want one", log.matching(``))
	}
	if got := log.matching(`s3cret`); len(got) != 0 {
		t.Errorf("the query was logged: %q", got)
	}
}
