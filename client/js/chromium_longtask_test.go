//go:build linux

package clientjs_test

import (
	"strconv"
	"testing"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// TestChromiumLongTaskSends: a page that logs from inside one long task
// (a loop that keeps the main thread for 1.5 s, as a hung page does)
// delivers what it logs while the task runs, not only when it ends: the
// calls send by themselves once their pending flush is LONG_TASK_MS late
// (core.mjs Producer.sendIfLate). Without it the microtask and the pace
// timer wait for the task, and every item goes in one frame at its end.
func TestChromiumLongTaskSends(t *testing.T) {
	p, _ := chromiumClientPage(t)
	rec := p.rec
	r := p.evaluate(sourceproto.EvaluateParams{Expression: `setTimeout(() => {
  const end = performance.now() + 1500;
  let i = 0, next = 0;
  for (let now = performance.now(); now < end; now = performance.now()) {
    if (now >= next) { console.log('long task', i++); next = now + 10; }
  }
  console.log('long task over', i);
}, 0); 'started'`})
	if r.Evaluate == nil || string(r.Evaluate.Result.Value) != `"started"` {
		t.Fatalf("evaluate: %+v %+v", r.Evaluate, r.Error)
	}
	text := func(it sourceproto.Item) string {
		if c := it.Console; c != nil && len(c.Args) == 2 {
			s, _ := strconv.Unquote(string(c.Args[0].Value))
			return s
		}
		return ""
	}
	rec.wait(t, "the long task's last item", func() bool {
		for _, it := range rec.items {
			if text(it) == "long task over" {
				return true
			}
		}
		return false
	})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	// Frames with the task's items, before the one with its last.
	before, calls, n := 0, 0, 0
	for _, size := range rec.sizes {
		frame := rec.items[n : n+size]
		n += size
		inTask, over := false, false
		for _, it := range frame {
			switch text(it) {
			case "long task":
				if got := string(it.Console.Args[1].Value); got != strconv.Itoa(calls) {
					t.Fatalf("call %d arrived as %s: out of order or lost", calls, got)
				}
				calls++
				inTask = true
			case "long task over":
				over = true
			}
		}
		if over {
			break
		}
		if inTask {
			before++
		}
	}
	if len(rec.gaps) != 0 {
		t.Fatalf("gaps: %+v", rec.gaps)
	}
	if calls < 20 {
		t.Fatalf("only %d calls in the long task", calls)
	}
	if before < 3 {
		t.Fatalf("%d of the task's frames came before its end (%d calls, frames of %v): its items waited for the task to end", before, calls, rec.sizes)
	}
	t.Logf("%d calls in a 1.5 s task; %d frames sent while it ran", calls, before)
}
