package cdpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestFlatInboundFullIsAnsweredAtOnce fills a flat session's inbound
// queue (its Session takes nothing: a host that is not answering) and
// checks that the next request is answered at once with the reason,
// without blocking the connection's reader.
func TestFlatInboundFullIsAnsweredAtOnce(t *testing.T) {
	c := &browserConn{out: newSendQueue(maxQueuedMessages, maxQueuedBytes), sessions: map[string]*flatSession{}}
	f := &flatSession{c: c, id: "S1", in: make(chan []byte, flatInboundMax), gone: make(chan struct{})}
	for i := range flatInboundMax {
		req, _ := parseRequest([]byte(fmt.Sprintf(`{"id":%d,"method":"Runtime.evaluate","sessionId":"S1","params":{"expression":"1"}}`, i)))
		f.deliver(req, nil, "")
	}
	if len(f.in) != flatInboundMax || c.out.pushedCount() != 0 {
		t.Fatalf("%d queued for the session, %d answered; want all %d queued", len(f.in), c.out.pushedCount(), flatInboundMax)
	}
	done := make(chan struct{})
	go func() {
		req, _ := parseRequest([]byte(`{"id":99999,"method":"Runtime.evaluate","sessionId":"S1","params":{"expression":"2"}}`))
		f.deliver(req, nil, "")
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("deliver blocked on a full session queue")
	}
	batch, _, _ := c.out.popAll(nil)
	if len(batch) != 1 || !strings.Contains(string(batch[0]), `"id":99999`) || !strings.Contains(string(batch[0]), "requests already wait for this session") ||
		!strings.Contains(string(batch[0]), `"sessionId":"S1"`) {
		t.Fatalf("answer to the request over the bound: %q", batch)
	}
	// The queued requests reach the session without their sessionId.
	first := <-f.in
	if string(first) != `{"id":0,"method":"Runtime.evaluate","params":{"expression":"1"}}` {
		t.Fatalf("request as the session reads it: %s", first)
	}
	t.Logf("answered at once: %s", batch[0])
}

// TestBrowserConnOverflowCloses: a client that stops reading fills the
// connection's queue; the queue closes for overflow instead of growing or
// blocking its producers (sendLoop then writes the 1008 close frame).
func TestBrowserConnOverflowCloses(t *testing.T) {
	c := &browserConn{b: &browserEndpoint{srv: &Server{logf: t.Logf}}, out: newSendQueue(3, 1<<20)}
	var err error
	for i := 0; i < 4 && err == nil; i++ {
		err = c.send([]byte(fmt.Sprintf(`{"method":"Runtime.consoleAPICalled","params":{"n":%d}}`, i)))
	}
	if !errors.Is(err, errQueueOverflow) || !c.out.overflowed() {
		t.Fatalf("4 messages into a queue of 3: err %v, overflowed %v", err, c.out.overflowed())
	}
	if c.watchdog == nil {
		t.Fatal("no watchdog armed for a client that reads nothing")
	}
	c.watchdog.Stop()
	if _, closed, why := c.out.popAll(nil); !closed || !errors.Is(why, errQueueOverflow) {
		t.Fatalf("queue after overflow: closed %v, why %v", closed, why)
	}
}

// TestRebuildRequestKeepsParams: the request a flat session's Session
// reads keeps the params byte for byte (lone surrogates included).
func TestRebuildRequestKeepsParams(t *testing.T) {
	msg := []byte(`{"sessionId":"A","id":7,"method":"Runtime.evaluate","params":{"expression":"'\ud800' + \"é\""}}`)
	req, werr := parseRequest(msg)
	if werr != nil {
		t.Fatal(werr)
	}
	got := string(rebuildRequest(req, ""))
	if want := `{"id":7,"method":"Runtime.evaluate","params":{"expression":"'\ud800' + \"é\""}}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestTargetFilter: Chrome's filter semantics, and the auto-attach rule
// that takes pages whatever the filter says.
func TestTargetFilter(t *testing.T) {
	var none targetFilter
	puppeteer := targetFilter{{Type: "page", Exclude: true}, {}}
	for _, c := range []struct {
		f                    targetFilter
		typ                  string
		allows, autoAttaches bool
	}{
		{none, "page", true, true},
		{none, "browser", false, false},
		{none, "tab", false, false},
		{none, "worker", true, true},
		{puppeteer, "page", false, true},
		{puppeteer, "worker", true, true},
		{targetFilter{{Type: "worker"}}, "page", false, true},
		{targetFilter{{Type: "worker"}}, "iframe", false, false},
	} {
		if got := c.f.orDefault().allows(c.typ); got != c.allows {
			t.Errorf("%v allows %s = %v", c.f, c.typ, got)
		}
		if got := c.f.autoAttaches(c.typ); got != c.autoAttaches {
			t.Errorf("%v auto-attaches %s = %v", c.f, c.typ, got)
		}
	}
}

// TestFlatWriteNestsChildSessions: what a flat session's Session sends gets
// the flat session's id; a message of its own child (a thread) and the
// Target events about a child get "<flat>.<child>".
func TestFlatWriteNestsChildSessions(t *testing.T) {
	c := &browserConn{out: newSendQueue(maxQueuedMessages, maxQueuedBytes)}
	f := &flatSession{c: c, id: "F1"}
	for _, tc := range []struct{ in, want string }{
		{`{"id":1,"result":{}}`, `{"id":1,"result":{},"sessionId":"F1"}`},
		{`{"id":2,"result":{},"sessionId":"3"}`, `{"id":2,"result":{},"sessionId":"F1.3"}`},
		{`{"method":"Runtime.consoleAPICalled","params":{"args":[{"value":"x,\"sessionId\":\"9\""}]},"sessionId":"3"}`,
			`{"method":"Runtime.consoleAPICalled","params":{"args":[{"value":"x,\"sessionId\":\"9\""}]},"sessionId":"F1.3"}`},
		// A string ending like a member is not one: the value is a string's.
		{`{"method":"Runtime.consoleAPICalled","params":{"text":",\"sessionId\":\"9\""}}`,
			`{"method":"Runtime.consoleAPICalled","params":{"text":",\"sessionId\":\"9\""},"sessionId":"F1"}`},
		{`{"method":"Target.attachedToTarget","params":{"sessionId":"3","targetInfo":{"targetId":"node-worker-3","type":"worker"},"waitingForDebugger":false}}`,
			`{"method":"Target.attachedToTarget","params":{"sessionId":"F1.3","targetInfo":{"targetId":"node-worker-3","type":"worker"},"waitingForDebugger":false},"sessionId":"F1"}`},
		{`{"method":"Target.detachedFromTarget","params":{"sessionId":"3","targetId":"node-worker-3"}}`,
			`{"method":"Target.detachedFromTarget","params":{"sessionId":"F1.3","targetId":"node-worker-3"},"sessionId":"F1"}`},
	} {
		in := []byte(tc.in)
		if err := f.write(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		if string(in) != tc.in {
			t.Fatalf("write modified its input: %s", in)
		}
		batch, _, _ := c.out.popAll(nil)
		c.out.written(len(batch))
		if len(batch) != 1 || string(batch[0]) != tc.want {
			t.Errorf("write(%s)\n got  %s\n want %s", tc.in, batch, tc.want)
		}
	}
}
