package hostnode

import (
	"encoding/binary"
	"testing"
)

// serverFrame is an unmasked frame header for a payload of n bytes, as Node
// sends it, followed by the payload.
func serverFrame(n int) []byte {
	var h []byte
	switch {
	case n < 126:
		h = []byte{0x81, byte(n)}
	case n <= 0xFFFF:
		h = []byte{0x81, 126, 0, 0}
		binary.BigEndian.PutUint16(h[2:], uint16(n))
	default:
		h = []byte{0x81, 127, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint64(h[2:], uint64(n))
	}
	return append(h, make([]byte, n)...)
}

// checkHints feeds the frames of sizes, cut at every step-th byte, and checks
// that exactly the large ones are hinted, with their sizes.
func checkHints(t *testing.T, sizes []int, step int) {
	t.Helper()
	var stream []byte
	for _, n := range sizes {
		stream = append(stream, serverFrame(n)...)
	}
	var f frameLens
	f.start()
	for len(stream) > 0 {
		k := min(step, len(stream))
		f.feed(stream[:k])
		stream = stream[k:]
	}
	for i, n := range sizes {
		got, ok := f.sizeOf(int64(i))
		if want := n >= minHinted; ok != want || (ok && got != int64(n)) {
			t.Fatalf("step %d, frame %d of %d bytes: hint %d, %v", step, i, n, got, ok)
		}
	}
}

func TestFrameLens(t *testing.T) {
	sizes := []int{0, 1, 125, 126, 127, 0xFFFF, 0x10000, minHinted - 1, minHinted, 3, 70000, 2}
	for _, step := range []int{1, 2, 3, 7, 4096, 1 << 30} {
		checkHints(t, sizes, step)
	}
	checkHints(t, append(sizes, 5<<20, 9), 4096)

	// Control frames and continuations start no message: hints and the
	// count stay with the messages the reader takes.
	var g frameLens
	g.start()
	ping := []byte{0x89, 0}
	first := serverFrame(minHinted)
	first[0] = 0x01 // text, FIN unset: a fragmented message gets no hint
	cont := serverFrame(10)
	cont[0] = 0x80 // continuation, FIN
	for _, b := range [][]byte{ping, serverFrame(minHinted), ping, first, cont, ping, serverFrame(minHinted + 1)} {
		g.feed(b)
	}
	if g.started() != 3 {
		t.Fatalf("started %d messages, want 3", g.started())
	}
	if n, ok := g.sizeOf(0); !ok || n != minHinted {
		t.Fatalf("message 0: %d, %v", n, ok)
	}
	if _, ok := g.sizeOf(1); ok {
		t.Fatal("a hint for a fragmented message")
	}
	if n, ok := g.sizeOf(2); !ok || n != minHinted+1 {
		t.Fatalf("message 2: %d, %v", n, ok)
	}
	var off frameLens // not started: the handshake's bytes are not frames
	off.feed(serverFrame(1 << 20))
	if _, ok := off.sizeOf(0); ok {
		t.Fatal("a hint from bytes fed before start")
	}
	var masked frameLens // a client frame cannot come from Node: no more hints
	masked.start()
	masked.feed([]byte{0x81, 0x80 | 126, 0xFF, 0xFF})
	masked.feed(serverFrame(1 << 20))
	if _, ok := masked.sizeOf(1); ok || !masked.bad {
		t.Fatal("hints after a masked header")
	}
	// More large frames than the ring holds before the reader asks: the
	// oldest hints are lost, later ones stay right.
	var many []int
	for range 20 {
		many = append(many, minHinted)
	}
	var f frameLens
	f.start()
	for _, n := range many {
		f.feed(serverFrame(n))
	}
	if _, ok := f.sizeOf(0); ok {
		t.Fatal("frame 0's hint outlived the ring")
	}
	if n, ok := f.sizeOf(19); !ok || n != minHinted {
		t.Fatalf("last frame's hint: %d, %v", n, ok)
	}
}

// FuzzFrameLens: any bytes leave the tracker sane (no panic, bounded ring),
// and a well-formed stream built from the input's sizes, cut at the input's
// step, is hinted right.
func FuzzFrameLens(f *testing.F) {
	f.Add([]byte{0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0}, uint16(3))
	f.Add([]byte{0x81, 126, 0x40, 0}, uint16(1))
	f.Fuzz(func(t *testing.T, raw []byte, step uint16) {
		var g frameLens
		g.start()
		g.feed(raw)
		if g.n > len(g.big) {
			t.Fatalf("ring holds %d", g.n)
		}
		var sizes []int
		for i := 0; i+1 < len(raw) && len(sizes) < 8; i += 2 {
			sizes = append(sizes, int(binary.BigEndian.Uint16(raw[i:]))%(3*minHinted))
		}
		checkHints(t, sizes, int(step)%5000+1)
	})
}
