package cdpserver

import (
	"errors"
	"testing"
	"time"
)

// Regressions for bugs found by the unit-test pass; each failed before its fix.

func TestRegressTrailingBytesAreAParseError(t *testing.T) {
	for _, in := range []string{`{"id":1,"method":"Runtime.enable"}x`, `{"id":1,"method":"Runtime.enable"}{}`} {
		if _, werr := parseRequest([]byte(in)); werr == nil || werr.Code != codeParseError {
			t.Errorf("parseRequest(%q) = %v, want -32700: Node would answer it without an id", in, werr)
		}
	}
	if _, werr := parseRequest([]byte("{\"id\":1,\"method\":\"A.b\"}\n ")); werr != nil {
		t.Errorf("trailing whitespace refused: %v", werr)
	}
}

func TestRegressCloseAfterPushIsNotSleptThrough(t *testing.T) {
	q := newSendQueue(10, 1<<20)
	q.push([]byte("answer"))
	q.close(errors.New("host gone"))
	done := make(chan []string)
	go func() {
		var got []string
		for {
			batch, closed, _ := q.next(nil)
			if closed {
				done <- got
				return
			}
			for _, m := range batch {
				got = append(got, string(m))
			}
		}
	}()
	select {
	case got := <-done:
		if len(got) != 1 || got[0] != "answer" {
			t.Fatalf("consumer got %q, want [answer]", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the consumer never saw the close: the merged wake was slept through")
	}
}

func TestPushLossyStopsAtHalf(t *testing.T) {
	q := newSendQueue(10, 1<<20)
	n := 0
	for q.pushLossy([]byte("x")) {
		n++
	}
	if n != 5 {
		t.Fatalf("lossy pushes accepted %d, want 5 (half of 10)", n)
	}
	if err := q.push([]byte("answer")); err != nil {
		t.Fatalf("an answer after lossy drops: %v; answers keep the full bound", err)
	}
}
