package pagerealm

import (
	"bytes"
	"testing"
)

// A replay buffer keeps the newest messages within both bounds, counts what
// it evicted, and never changes what an earlier snapshot of it holds (the
// bytes and the array are shared with replays in progress).
func TestReplayBufferBounds(t *testing.T) {
	var b replayBuffer
	small := []byte("0123456789")
	for range maxReplayPerContext + 7 {
		b.keep(small)
	}
	if len(b.msgs) != maxReplayPerContext || b.dropped != 7 || b.bytes != maxReplayPerContext*len(small) {
		t.Fatalf("count bound: %d kept, %d dropped, %d bytes", len(b.msgs), b.dropped, b.bytes)
	}

	b = replayBuffer{}
	big := bytes.Repeat([]byte("x"), 100<<10)
	snapshot := []byte(nil)
	var shared [][]byte
	for i := range 50 {
		msg := append(bytes.Repeat([]byte("x"), 100<<10), byte('a'+i%26))
		b.keep(msg)
		if i == 5 {
			shared = b.msgs // a replay starting now
			snapshot = bytes.Join(shared, nil)
		}
	}
	if b.bytes > maxReplayBytes || len(b.msgs) != maxReplayBytes/(len(big)+1) {
		t.Fatalf("byte bound: %d kept, %d bytes (bound %d)", len(b.msgs), b.bytes, maxReplayBytes)
	}
	if b.dropped != 50-len(b.msgs) {
		t.Fatalf("dropped %d, want %d", b.dropped, 50-len(b.msgs))
	}
	if !bytes.Equal(bytes.Join(shared, nil), snapshot) {
		t.Fatal("keeping more messages changed what an earlier replay holds")
	}

	// One message over the byte bound is still kept: the newest is never
	// dropped.
	b = replayBuffer{}
	b.keep(make([]byte, maxReplayBytes+1))
	if len(b.msgs) != 1 {
		t.Fatalf("an oversized message: %d kept", len(b.msgs))
	}
}
