package cdpserver

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestQueueDirectToken(t *testing.T) {
	q := newSendQueue(10, 100)
	if !q.idle() || !q.takeDirect() {
		t.Fatal("an idle queue refused a direct write")
	}
	if q.takeDirect() {
		t.Fatal("a second direct write took the token while the first holds it")
	}
	if got := q.pushedCount(); got != 1 {
		t.Fatalf("pushedCount during a direct write = %d, want 1 (the close gate must wait for it)", got)
	}
	_ = q.push([]byte("queued"))
	<-q.wake // the push's own signal
	if got, closed, err := popStrings(t, q); len(got) != 0 || closed || err != nil {
		t.Fatalf("popAll during a direct write = %q, %v, %v; want nothing: it must wait for the token", got, closed, err)
	}
	q.releaseDirect(true, 1)
	select {
	case <-q.wake:
	default:
		t.Fatal("releaseDirect with a message queued meanwhile did not wake sendLoop")
	}
	if q.writtenCount() != 1 {
		t.Fatalf("writtenCount = %d, want 1", q.writtenCount())
	}
	if got, _, _ := popStrings(t, q); strings.Join(got, ",") != "queued" {
		t.Fatalf("popAll after the release = %q, want [queued]", got)
	}
	// sendLoop holds the token from popAll until written.
	if q.idle() || q.takeDirect() {
		t.Fatal("a direct write took the token while sendLoop writes a batch")
	}
	q.written(1)
	if !q.takeDirect() {
		t.Fatal("the token was not returned by written")
	}
	q.releaseDirect(true, 1)
	select {
	case <-q.wake:
		t.Fatal("releaseDirect with nothing queued woke sendLoop")
	default:
	}
	if q.pushedCount() != 3 || q.writtenCount() != 3 {
		t.Fatalf("pushed %d, written %d; want 3 and 3", q.pushedCount(), q.writtenCount())
	}
}

func TestQueueDirectRefused(t *testing.T) {
	q := newSendQueue(10, 100)
	_ = q.push([]byte("a"))
	if q.idle() || q.takeDirect() {
		t.Fatal("a direct write would overtake a queued message")
	}
	q.popAll(nil)
	q.written(1)
	q.close(errors.New("window closed"))
	if q.idle() || q.takeDirect() {
		t.Fatal("a direct write after the queue closed (its close frame may be out)")
	}
	if q.pushedCount() != 1 {
		t.Fatalf("refused direct writes counted as pushed: %d, want 1", q.pushedCount())
	}
}

func TestQueueDirectCloseWaits(t *testing.T) {
	q := newSendQueue(10, 100)
	q.takeDirect()
	q.close(errors.New("window closed"))
	<-q.wake
	if _, closed, _ := q.popAll(nil); closed {
		t.Fatal("the close frame would go out during a direct write")
	}
	q.releaseDirect(true, 1)
	select {
	case <-q.wake:
	default:
		t.Fatal("releaseDirect on a closed queue did not wake sendLoop for the close frame")
	}
	if _, closed, err := q.popAll(nil); !closed || err == nil {
		t.Fatalf("popAll after the release = closed %v, %v; want closed", closed, err)
	}
}

func TestQueueDirectWriteFailed(t *testing.T) {
	q := newSendQueue(10, 100)
	q.takeDirect()
	_ = q.push([]byte("after a half-written frame"))
	q.releaseDirect(false, 1)
	got, closed, err := popStrings(t, q)
	if len(got) != 0 || !closed || !errors.Is(err, errDevToolsWrite) {
		t.Fatalf("popAll after a failed direct write = %q, %v, %v; want nothing, closed, errDevToolsWrite", got, closed, err)
	}
	if q.writtenCount() != 0 {
		t.Fatalf("a failed direct write counted as written")
	}
	if q.push([]byte("x")) == nil {
		t.Fatal("push after a failed direct write succeeded")
	}
}

// TestQueueDirectOrder races a producer that writes directly (runs of one to
// four messages) whenever it can against a consumer that plays sendLoop: the "socket" must see every message
// once, in production order, and never two writers at once.
func TestQueueDirectOrder(t *testing.T) {
	const n = 20000
	q := newSendQueue(n, 1<<30)
	var mu sync.Mutex
	var socket []string
	writing := 0
	write := func(m string) {
		mu.Lock()
		writing++
		if writing != 1 {
			t.Errorf("two writers on the socket at once")
		}
		socket = append(socket, m)
		writing--
		mu.Unlock()
	}
	done := make(chan struct{})
	go func() { // sendLoop
		defer close(done)
		var batch [][]byte
		for {
			var closed bool
			batch, closed, _ = q.next(batch)
			if closed {
				return
			}
			for _, m := range batch {
				write(string(m))
			}
			q.written(len(batch))
		}
	}()
	direct := 0
	for i := 0; i < n; {
		if i%1000 == 1 {
			// On a loaded machine the sendLoop may lag the whole run and
			// the queue never be idle when looked at: wait for it now and
			// then, so direct runs are always interleaved with queued ones.
			waitIdle(t, q)
		}
		if i%3 != 0 && q.idle() && q.takeDirect() {
			// A run of 1 to 4 messages, written at its end as hostLoop's
			// corked run is.
			run := []string{fmt.Sprint(i)}
			i++
			for len(run) < 1+i%4 && i < n && q.extendDirect() {
				run = append(run, fmt.Sprint(i))
				i++
			}
			for _, m := range run {
				write(m)
			}
			q.releaseDirect(true, len(run))
			direct += len(run)
			continue
		}
		if err := q.push(fmt.Append(nil, i)); err != nil {
			t.Fatalf("push %d = %v", i, err)
		}
		i++
	}
	q.close(errors.New("done"))
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("sendLoop did not finish: a wake was lost")
	}
	if len(socket) != n {
		t.Fatalf("socket got %d messages, want %d", len(socket), n)
	}
	for i, m := range socket {
		if m != fmt.Sprint(i) {
			t.Fatalf("socket message %d = %s: reordered", i, m)
		}
	}
	if q.pushedCount() != n || q.writtenCount() != n {
		t.Fatalf("pushed %d, written %d; want %d each", q.pushedCount(), q.writtenCount(), n)
	}
	if direct == 0 {
		t.Error("no direct write happened: the test did not test the token")
	}
	t.Logf("%d of %d written directly", direct, n)
}

// waitIdle waits (bounded: a hang detector) until q's sendLoop has
// written everything pushed so far.
func waitIdle(t *testing.T, q *sendQueue) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !q.idle(); time.Sleep(100 * time.Microsecond) {
		if time.Now().After(deadline) {
			t.Fatal("the sendLoop never became idle: a wake was lost")
		}
	}
}

// TestQueueDirectExtend: a run grows only while it holds the token, the queue
// is open and nothing was queued meanwhile (that would be overtaken).
func TestQueueDirectExtend(t *testing.T) {
	q := newSendQueue(10, 1<<20)
	if q.extendDirect() {
		t.Fatal("extendDirect without a run")
	}
	if !q.takeDirect() || !q.extendDirect() || !q.extendDirect() {
		t.Fatal("an open run on an empty queue did not grow")
	}
	if err := q.push([]byte("other")); err != nil {
		t.Fatal(err)
	}
	if q.extendDirect() {
		t.Fatal("the run grew past a message queued meanwhile")
	}
	q.releaseDirect(true, 3)
	if q.pushedCount() != 4 || q.writtenCount() != 3 {
		t.Fatalf("pushed %d, written %d; want 4 and 3", q.pushedCount(), q.writtenCount())
	}
	b, _, _ := q.next(nil)
	q.written(len(b))
	if !q.takeDirect() {
		t.Fatal("takeDirect on a drained queue")
	}
	q.close(errors.New("gone"))
	if q.extendDirect() {
		t.Fatal("the run grew on a closed queue")
	}
	q.releaseDirect(true, 1)
}
