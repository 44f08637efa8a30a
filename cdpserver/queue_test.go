package cdpserver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func popStrings(t *testing.T, q *sendQueue) ([]string, bool, error) {
	t.Helper()
	batch, closed, err := q.popAll(nil)
	out := make([]string, len(batch))
	for i, m := range batch {
		out[i] = string(m)
	}
	return out, closed, err
}

func TestQueuePushPopOrder(t *testing.T) {
	q := newSendQueue(10, 100)
	for _, m := range []string{"a", "b", "", "c"} {
		if err := q.push([]byte(m)); err != nil {
			t.Fatalf("push(%q) = %v, want nil", m, err)
		}
	}
	got, closed, err := popStrings(t, q)
	if strings.Join(got, ",") != "a,b,,c" || closed || err != nil {
		t.Fatalf("popAll = %q, %v, %v; want [a b  c], open, no error", got, closed, err)
	}
	got, closed, err = popStrings(t, q)
	if len(got) != 0 || closed || err != nil {
		t.Fatalf("second popAll = %q, %v, %v; want nothing, open, no error", got, closed, err)
	}
	if err := q.push([]byte("d")); err != nil {
		t.Fatalf("push after popAll = %v, want nil", err)
	}
	if got, _, _ := popStrings(t, q); strings.Join(got, ",") != "d" {
		t.Fatalf("popAll = %q, want [d]", got)
	}
}

func TestQueuePopAllReusesBuffer(t *testing.T) {
	q := newSendQueue(10, 100)
	buf := make([][]byte, 0, 8)
	buf = append(buf, []byte("stale"))
	_ = q.push([]byte("x"))
	got, _, _ := q.popAll(buf)
	if len(got) != 1 || string(got[0]) != "x" {
		t.Fatalf("popAll(buf with a stale entry) = %q, want [x]", got)
	}
	if &got[0] != &buf[0] {
		t.Errorf("popAll did not reuse the buffer it was given")
	}
}

func TestQueueLimits(t *testing.T) {
	for _, tc := range []struct {
		name          string
		maxMsgs, maxB int
		sizes         []int
		overflowAt    int // index of the push that overflows; -1 none
	}{
		{name: "messages exactly at the limit", maxMsgs: 3, maxB: 100, sizes: []int{1, 1, 1}, overflowAt: -1},
		{name: "one message past the limit", maxMsgs: 3, maxB: 100, sizes: []int{1, 1, 1, 1}, overflowAt: 3},
		{name: "empty messages count", maxMsgs: 2, maxB: 100, sizes: []int{0, 0, 0}, overflowAt: 2},
		{name: "bytes exactly at the limit", maxMsgs: 100, maxB: 10, sizes: []int{4, 6}, overflowAt: -1},
		{name: "one byte past the limit", maxMsgs: 100, maxB: 10, sizes: []int{4, 6, 1}, overflowAt: 2},
		{name: "one message larger than the limit", maxMsgs: 100, maxB: 10, sizes: []int{11}, overflowAt: 0},
		{name: "single message exactly the limit", maxMsgs: 1, maxB: 10, sizes: []int{10}, overflowAt: -1},
		{name: "both limits at once", maxMsgs: 2, maxB: 4, sizes: []int{2, 2, 0}, overflowAt: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newSendQueue(tc.maxMsgs, tc.maxB)
			for i, n := range tc.sizes {
				err := q.push(make([]byte, n))
				switch {
				case i == tc.overflowAt && !errors.Is(err, errQueueOverflow):
					t.Fatalf("push #%d (%d bytes) = %v, want errQueueOverflow (limits %d messages, %d bytes)", i, n, err, tc.maxMsgs, tc.maxB)
				case i != tc.overflowAt && err != nil:
					t.Fatalf("push #%d (%d bytes) = %v, want nil (limits %d messages, %d bytes)", i, n, err, tc.maxMsgs, tc.maxB)
				}
				if i == tc.overflowAt {
					break
				}
			}
			got, closed, err := popStrings(t, q)
			if tc.overflowAt < 0 {
				if len(got) != len(tc.sizes) || closed || err != nil {
					t.Fatalf("popAll = %d messages, closed %v, %v; want %d messages, open", len(got), closed, err, len(tc.sizes))
				}
				return
			}
			// Overflow closes the queue and drops what it held.
			if len(got) != 0 || !closed || !errors.Is(err, errQueueOverflow) {
				t.Fatalf("popAll after overflow = %d messages, closed %v, %v; want none, closed, errQueueOverflow", len(got), closed, err)
			}
			if err := q.push([]byte("x")); !errors.Is(err, errQueueOverflow) {
				t.Fatalf("push after overflow = %v, want errQueueOverflow", err)
			}
			if got, closed, _ := popStrings(t, q); len(got) != 0 || !closed {
				t.Fatalf("popAll after a refused push = %q, closed %v; want nothing, closed", got, closed)
			}
		})
	}
}

func TestQueuePopAllFreesRoom(t *testing.T) {
	q := newSendQueue(2, 4)
	for round := range 3 {
		for i := range 2 {
			if err := q.push([]byte("ab")); err != nil {
				t.Fatalf("round %d push %d = %v; popAll must free both message and byte room", round, i, err)
			}
		}
		if got, _, _ := popStrings(t, q); len(got) != 2 {
			t.Fatalf("round %d popAll = %q, want 2 messages", round, got)
		}
	}
}

func TestQueueDefaultLimitsAccepted(t *testing.T) {
	q := newSendQueue(maxQueuedMessages, maxQueuedBytes)
	big := make([]byte, maxQueuedBytes/2)
	if err := q.push(big); err != nil {
		t.Fatalf("push of half of maxQueuedBytes = %v, want nil", err)
	}
	if err := q.push(big); err != nil {
		t.Fatalf("push up to exactly maxQueuedBytes = %v, want nil", err)
	}
	if err := q.push([]byte{'x'}); !errors.Is(err, errQueueOverflow) {
		t.Fatalf("push one byte past maxQueuedBytes = %v, want errQueueOverflow", err)
	}
}

func TestQueueCloseKeepsQueuedMessages(t *testing.T) {
	reason := errors.New("host gone")
	q := newSendQueue(10, 100)
	_ = q.push([]byte("a"))
	_ = q.push([]byte("b"))
	q.close(reason)
	if err := q.push([]byte("c")); err != reason {
		t.Fatalf("push after close = %v, want the close reason %v", err, reason)
	}
	got, closed, _ := popStrings(t, q)
	if strings.Join(got, ",") != "a,b" || closed {
		t.Fatalf("first popAll after close = %q, closed %v; want [a b] and not yet closed", got, closed)
	}
	got, closed, err := popStrings(t, q)
	if len(got) != 0 || !closed || err != reason {
		t.Fatalf("second popAll after close = %q, closed %v, %v; want nothing, closed, %v", got, closed, err, reason)
	}
}

func TestQueueCloseFirstReasonWins(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	q := newSendQueue(10, 100)
	q.close(first)
	q.close(second)
	q.close(errQueueOverflow)
	if err := q.push(nil); err != first {
		t.Fatalf("push after three closes = %v, want the first reason", err)
	}
	if _, closed, err := q.popAll(nil); !closed || err != first {
		t.Fatalf("popAll = closed %v, %v; want closed, first reason", closed, err)
	}
}

func TestQueueCloseWithOverflowDropsMessages(t *testing.T) {
	for _, reason := range []error{errQueueOverflow, fmt.Errorf("session 3: %w", errQueueOverflow)} {
		q := newSendQueue(10, 100)
		_ = q.push([]byte("a"))
		q.close(reason)
		got, closed, err := popStrings(t, q)
		if len(got) != 0 || !closed || err != reason {
			t.Errorf("close(%v): popAll = %q, closed %v, %v; want nothing, closed, the reason", reason, got, closed, err)
		}
	}
}

func TestQueueWakes(t *testing.T) {
	q := newSendQueue(10, 100)
	select {
	case <-q.wake:
		t.Fatal("a new queue signalled wake")
	default:
	}
	_ = q.push([]byte("a"))
	_ = q.push([]byte("b")) // coalesced with the first signal
	select {
	case <-q.wake:
	default:
		t.Fatal("push did not signal wake")
	}
	select {
	case <-q.wake:
		t.Fatal("two pushes signalled wake twice; the signal must coalesce")
	default:
	}
	q.popAll(nil)
	q.close(errors.New("done"))
	select {
	case <-q.wake:
	default:
		t.Fatal("close of an idle queue did not signal wake")
	}
}

// drain pops until the queue reports closed, waiting on wake only when it
// found nothing, and returns everything it popped. It may run outside the
// test goroutine, so it reports with Errorf.
func drain(t *testing.T, q *sendQueue) []string {
	t.Helper()
	var got []string
	var batch [][]byte
	for {
		var closed bool
		batch, closed, _ = q.popAll(batch)
		for _, m := range batch {
			got = append(got, string(m))
		}
		if closed {
			return got
		}
		if len(batch) == 0 {
			select {
			case <-q.wake:
			case <-time.After(10 * time.Second):
				t.Errorf("consumer waited 10 s for a wake after %d messages", len(got))
				return got
			}
		}
	}
}

func TestQueueConcurrentProducers(t *testing.T) {
	const producers, perProducer = 8, 2000
	q := newSendQueue(producers*perProducer, 1<<30)
	done := make(chan []string)
	go func() { done <- drain(t, q) }()

	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range perProducer {
				if err := q.push([]byte(fmt.Sprintf("%d:%d", p, i))); err != nil {
					t.Errorf("producer %d push %d = %v, want nil", p, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	q.close(errors.New("producers done"))
	got := <-done

	if len(got) != producers*perProducer {
		t.Errorf("consumer got %d messages, want %d", len(got), producers*perProducer)
	}
	next := make([]int, producers)
	for _, m := range got {
		ps, is, _ := strings.Cut(m, ":")
		p, _ := strconv.Atoi(ps)
		i, _ := strconv.Atoi(is)
		if i != next[p] {
			t.Fatalf("producer %d: got message %d, want %d (lost, duplicated or reordered)", p, i, next[p])
		}
		next[p]++
	}
}

func TestQueueConcurrentOverflow(t *testing.T) {
	// Producers race past the limit: exactly maxMessages pushes succeed
	// before the overflow, every later push fails, and nothing is handed out.
	const producers, limit = 8, 100
	q := newSendQueue(limit, 1<<30)
	var mu sync.Mutex
	ok, overflow := 0, 0
	var wg sync.WaitGroup
	for range producers {
		wg.Go(func() {
			for range limit {
				err := q.push([]byte("m"))
				mu.Lock()
				if err == nil {
					ok++
				} else if errors.Is(err, errQueueOverflow) {
					overflow++
				} else {
					t.Errorf("push = %v, want nil or errQueueOverflow", err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ok != limit || overflow != producers*limit-limit {
		t.Errorf("%d pushes succeeded and %d overflowed, want %d and %d", ok, overflow, limit, producers*limit-limit)
	}
	if got, closed, err := q.popAll(nil); len(got) != 0 || !closed || !errors.Is(err, errQueueOverflow) {
		t.Errorf("popAll after overflow = %d messages, closed %v, %v; want none, closed, errQueueOverflow", len(got), closed, err)
	}
}

func TestQueueCountsAndOverflowFlag(t *testing.T) {
	q := newSendQueue(3, 100)
	for _, m := range []string{"a", "b"} {
		q.push([]byte(m))
	}
	if q.pushLossy([]byte("dropped")) {
		t.Fatal("pushLossy accepted a message above half of the bound")
	}
	if got := q.pushedCount(); got != 2 {
		t.Fatalf("pushedCount = %d, want 2 (lossy drops do not count)", got)
	}
	batch, _, _ := q.popAll(nil)
	q.written(len(batch) - 1)
	if got := q.writtenCount(); got != 1 {
		t.Fatalf("writtenCount = %d, want 1", got)
	}
	if q.overflowed() {
		t.Fatal("overflowed before any overflow")
	}
	q.close(errors.New("host gone"))
	if q.overflowed() {
		t.Fatal("an ordinary close reported as an overflow")
	}
	q2 := newSendQueue(1, 100)
	q2.push([]byte("a"))
	if err := q2.push([]byte("b")); !errors.Is(err, errQueueOverflow) || !q2.overflowed() {
		t.Fatalf("push past the bound = %v, overflowed %v; want errQueueOverflow, true", err, q2.overflowed())
	}
}
