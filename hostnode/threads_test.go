package hostnode

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// A nested thread's release is wrapped once per level, with the session's
// forward id outside and the thread-level ids inside; it is repeated until
// the thread answers, and a thread's answer or exit ends its repeats.
func TestThreadsReleaseNestedUntilAnswered(t *testing.T) {
	saved := ThreadResends
	ThreadResends = []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
	defer func() { ThreadResends = saved }()
	var mu sync.Mutex
	var sent []string
	stop := make(chan struct{})
	defer close(stop)
	th := NewThreads(func(m string) error { mu.Lock(); sent = append(sent, m); mu.Unlock(); return nil }, 77, stop)

	ev := func(raw string) {
		var e NodeWorkerEvent
		if err := json.Unmarshal([]byte(raw), &e); err != nil {
			t.Fatal(err)
		}
		th.Event(&e)
	}
	ev(`{"method":"NodeWorker.attachedToWorker","params":{"sessionId":"1"}}`)
	// Thread 1 reports its own thread 5.
	inner, _ := json.Marshal(`{"method":"NodeWorker.attachedToWorker","params":{"sessionId":"5"}}`)
	ev(`{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"1","message":` + string(inner) + `}}`)
	// Await the repeats (an event: each is a write), with a hang bound.
	releases := func() (releases1, releases5 int) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range sent {
			var outer struct {
				ID     int64
				Params struct{ SessionID, Message string }
			}
			json.Unmarshal([]byte(m), &outer)
			if outer.ID != 77 || outer.Params.SessionID != "1" {
				t.Errorf("outer message %s, want id 77 to thread 1", m)
			}
			switch {
			case strings.Contains(outer.Params.Message, `"sessionId":"5"`) && strings.Contains(outer.Params.Message, `runIfWaitingForDebugger`):
				releases5++
			case strings.Contains(outer.Params.Message, `"id":2,"method":"Runtime.runIfWaitingForDebugger"`):
				releases1++
			}
		}
		return releases1, releases5
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if r1, r5 := releases(); r1 >= 1+3 && r5 >= 1+3 || time.Now().After(deadline) {
			break
		}
	}
	releases1, releases5 := releases()
	mu.Lock()
	n0 := len(sent)
	mu.Unlock()
	if releases1 != 1+3 || releases5 != 1+3 {
		t.Fatalf("releases: thread 1 %d, thread 1/5 %d; want 4 each (one and three repeats):\n%s", releases1, releases5, strings.Join(sent, "\n"))
	}

	// An answered thread gets no more repeats; nor does a thread that left.
	th.resends = []time.Duration{20 * time.Millisecond}
	ev(`{"method":"NodeWorker.attachedToWorker","params":{"sessionId":"2"}}`)
	answer, _ := json.Marshal(`{"id":2,"result":{}}`)
	ev(`{"method":"NodeWorker.receivedMessageFromWorker","params":{"sessionId":"2","message":` + string(answer) + `}}`)
	ev(`{"method":"NodeWorker.attachedToWorker","params":{"sessionId":"3"}}`)
	ev(`{"method":"NodeWorker.detachedFromWorker","params":{"sessionId":"3"}}`)
	// The event to await: thread 4, attached after them and never
	// answered, gets its repeat one resend period later; a repeat for 2 or
	// 3 would have been due before it.
	ev(`{"method":"NodeWorker.attachedToWorker","params":{"sessionId":"4"}}`)
	forThread := func(id string) (n int) {
		for _, m := range sent[n0:] {
			if strings.Contains(m, `"sessionId":"`+id+`"`) {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		repeated := forThread("4") >= 3 // enable, release, its repeat
		mu.Unlock()
		if repeated || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got := forThread("2") + forThread("3"); got != 4 {
		t.Fatalf("%d messages for threads 2 and 3, want 4 (enable and release each, no repeat)", got)
	}
	_, pending2 := th.pending["2"]
	if _, pending3 := th.pending["3"]; pending2 || pending3 || len(th.pending) != 3 {
		t.Fatalf("pending %v, want threads 1, 1/5 and 4 only (never answered, still there)", th.pending)
	}
}
