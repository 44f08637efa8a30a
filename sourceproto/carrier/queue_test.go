package carrier

import (
	"errors"
	"testing"
)

func TestFrameQueueLimits(t *testing.T) {
	q := newFrameQueue()
	lim := queueLimit{frames: 3, bytes: 10}
	for _, f := range []string{"aaaa", "bbbb"} {
		if err := q.push([]byte(f), lim); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.push([]byte("ccc"), lim); !errors.Is(err, ErrQueueFull) { // 11 bytes
		t.Fatalf("over bytes: %v", err)
	}
	if err := q.push([]byte("cc"), lim); err != nil {
		t.Fatal(err)
	}
	if err := q.push([]byte(""), lim); !errors.Is(err, ErrQueueFull) { // 4 frames
		t.Fatalf("over frames: %v", err)
	}
	// A larger limit (the host's reply limit) still fits.
	if err := q.push([]byte("d"), queueLimit{frames: 10, bytes: 100}); err != nil {
		t.Fatal(err)
	}
	frames, done := q.next(nil)
	if done || len(frames) != 4 || string(frames[3]) != "d" {
		t.Fatalf("next: %q %v", frames, done)
	}
	// Emptied: the limit applies to what waits, not to what was ever sent.
	if err := q.push([]byte("aaaaaaaaaa"), lim); err != nil {
		t.Fatal(err)
	}
}

func TestFrameQueueCloseDrainsOrDiscards(t *testing.T) {
	lim := queueLimit{frames: 10, bytes: 100}
	for _, discard := range []bool{false, true} {
		q := newFrameQueue()
		_ = q.push([]byte("reject"), lim)
		q.close(discard, []byte("bye"))
		q.close(false, []byte("ignored: only the first close counts"))
		if err := q.push([]byte("late"), lim); !errors.Is(err, ErrConnClosed) {
			t.Fatalf("push after close: %v", err)
		}
		frames, done := q.next(nil)
		want := "reject bye"
		if discard {
			want = "bye"
		}
		got := ""
		for _, f := range frames {
			got += " " + string(f)
		}
		if done || got[1:] != want {
			t.Errorf("discard=%v: got %q, %v; want %q", discard, got, done, want)
		}
		if _, done := q.next(frames); !done {
			t.Errorf("discard=%v: not done after draining", discard)
		}
	}
}

// TestFrameQueueWakes: a sendLoop blocked in next wakes for a push and for
// a close, so no frame and no hang-up is slept through.
func TestFrameQueueWakes(t *testing.T) {
	ctx := watchdog(t)
	q := newFrameQueue()
	got := make(chan string)
	go func() {
		var buf [][]byte
		for {
			var done bool
			buf, done = q.next(buf)
			if done {
				close(got)
				return
			}
			for _, f := range buf {
				got <- string(f)
			}
		}
	}()
	for _, f := range []string{"1", "2", "3"} {
		if err := q.push([]byte(f), clientQueueLimit); err != nil {
			t.Fatal(err)
		}
		select {
		case g := <-got:
			if g != f {
				t.Fatalf("got %q, want %q", g, f)
			}
		case <-ctx.Done():
			t.Fatal("push did not wake next")
		}
	}
	q.close(false, nil)
	select {
	case _, open := <-got:
		if open {
			t.Fatal("a frame after close")
		}
	case <-ctx.Done():
		t.Fatal("close did not wake next")
	}
}
