package cork

import (
	"bytes"
	"errors"
	"testing"
)

type writeLog struct {
	writes [][]byte
	err    error
}

func (w *writeLog) write(p []byte) (int, error) {
	w.writes = append(w.writes, bytes.Clone(p))
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

func TestBatchesWritesUntilUncork(t *testing.T) {
	var log writeLog
	c := New(log.write)
	c.Write([]byte("a")) // uncorked: passes straight through
	c.Cork()
	c.Write([]byte("b"))
	c.Write([]byte("c"))
	if len(log.writes) != 1 {
		t.Fatalf("corked writes reached the socket: %q", log.writes)
	}
	if err := c.Uncork(); err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("d"))
	want := []string{"a", "bc", "d"}
	if len(log.writes) != len(want) {
		t.Fatalf("writes %q, want %q", log.writes, want)
	}
	for i, w := range want {
		if string(log.writes[i]) != w {
			t.Fatalf("writes %q, want %q", log.writes, want)
		}
	}
}

func TestFlushesAtMaxCorkInOrder(t *testing.T) {
	var log writeLog
	c := New(log.write)
	c.Cork()
	small := bytes.Repeat([]byte("s"), Max-10)
	big := bytes.Repeat([]byte("B"), Max+1)
	c.Write(small)
	c.Write(big) // passes Max: what was held goes first, then big itself
	c.Write([]byte("t"))
	if err := c.Uncork(); err != nil {
		t.Fatal(err)
	}
	got := bytes.Join(log.writes, nil)
	want := append(append(bytes.Clone(small), big...), 't')
	if !bytes.Equal(got, want) {
		t.Fatalf("bytes reordered or lost: got %d bytes in %d writes", len(got), len(log.writes))
	}
	if len(log.writes) != 3 {
		t.Fatalf("got %d writes, want 3 (held, big, tail)", len(log.writes))
	}
}

func TestUncorkReportsWriteError(t *testing.T) {
	broken := errors.New("broken pipe")
	log := writeLog{err: broken}
	c := New(log.write)
	c.Cork()
	if _, err := c.Write([]byte("held")); err != nil {
		t.Fatalf("corked write failed early: %v", err)
	}
	if err := c.Uncork(); !errors.Is(err, broken) {
		t.Fatalf("uncork = %v, want the socket's error", err)
	}
}
