package cdpserver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// Unit tests of the close gate's frame tracker and gatedConn, over in-memory
// byte streams. The real-socket behaviour is in closing_test.go.

// wsFrame builds one client→server frame. lenBits forces the length
// encoding (7, 16 or 64); 0 picks the shortest, as RFC 6455 asks.
func wsFrame(op byte, fin, masked bool, payload []byte, lenBits int) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	var maskBit byte
	if masked {
		maskBit = 0x80
	}
	n := len(payload)
	if lenBits == 0 {
		switch {
		case n < 126:
			lenBits = 7
		case n <= 0xFFFF:
			lenBits = 16
		default:
			lenBits = 64
		}
	}
	out := []byte{b0}
	switch lenBits {
	case 7:
		out = append(out, maskBit|byte(n))
	case 16:
		out = append(out, maskBit|126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	default:
		out = append(out, maskBit|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	if !masked {
		return append(out, payload...)
	}
	// A mask key with close-looking bytes: the tracker must not stop on them.
	key := []byte{0x88, 0x08, 0x88, 0x80}
	out = append(out, key...)
	for i, c := range payload {
		out = append(out, c^key[i%4])
	}
	return out
}

func closePayload(code uint16, reason string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, code), reason...)
}

// frameCase is a client byte stream and where its first close frame starts
// (-1: none, or the tracker must give up before it).
type frameCase struct {
	name    string
	stream  []byte
	closeAt int
}

func frameCases() []frameCase {
	text := func(s string) []byte { return wsFrame(0x1, true, true, []byte(s), 0) }
	closeF := wsFrame(opClose, true, true, closePayload(1000, "bye"), 0)
	closeBytes := bytes.Repeat([]byte{0x88}, 300) // a payload full of close-frame first bytes
	big := bytes.Repeat([]byte("x"), 70_000)      // needs the 64-bit length
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	req := text(`{"id":1,"method":"Runtime.evaluate","params":{"expression":"1+1"}}`)
	var cases []frameCase
	add := func(name string, closeAt int, parts ...[]byte) {
		cases = append(cases, frameCase{name, cat(parts...), closeAt})
	}
	add("close frame first", 0, closeF)
	add("close frame without payload", 0, wsFrame(opClose, true, true, nil, 0))
	add("one request then close", len(req), req, closeF)
	add("five requests then close", 5*len(req), req, req, req, req, req, closeF)
	add("16-bit length then close", len(text(string(closeBytes))), text(string(closeBytes)), closeF)
	add("64-bit length then close", len(wsFrame(0x2, true, true, big, 0)), wsFrame(0x2, true, true, big, 0), closeF)
	small64 := wsFrame(0x1, true, true, []byte("hi"), 64)
	add("non-minimal 64-bit length", len(small64), small64, closeF)
	small16 := wsFrame(0x1, true, true, []byte("hi"), 16)
	add("non-minimal 16-bit length", len(small16), small16, closeF)
	frag := cat(wsFrame(0x1, false, true, []byte("par"), 0), wsFrame(0x9, true, true, []byte("ping"), 0),
		wsFrame(0x0, true, true, []byte("tial"), 0))
	add("fragments with a ping between, then close", len(frag), frag, closeF)
	pong := wsFrame(0xA, true, true, nil, 0)
	add("close between fragments", len(pong)+len(wsFrame(0x1, false, true, []byte("a"), 0)),
		pong, wsFrame(0x1, false, true, []byte("a"), 0), closeF, wsFrame(0x0, true, true, []byte("b"), 0))
	empty := wsFrame(0x1, true, true, nil, 0)
	add("empty frames back to back", 3*len(empty), empty, empty, empty, closeF)
	unmasked := wsFrame(0x1, true, false, []byte{0x88, 0x88}, 0)
	add("unmasked frame (the library rejects it)", len(unmasked), unmasked, closeF)
	add("no close frame", -1, req, req, text(string(closeBytes)))
	add("a second close frame after the first", len(req), req, closeF, closeF)
	badLen := cat([]byte{0x81, 0xFF}, binary.BigEndian.AppendUint64(nil, 1<<63), []byte{1, 2, 3, 4})
	add("64-bit length with the top bit set: the tracker gives up", -1, req, badLen, closeF)
	add("empty stream", -1)
	add("a header cut short", -1, req[:5])
	return cases
}

// refClosePos is the reference decoder: where the first close frame of b
// starts, or -1 (none, or after a length the tracker gives up on).
func refClosePos(b []byte) int {
	i := 0
	for i < len(b) {
		if b[i]&0x0F == opClose {
			return i
		}
		if i+2 > len(b) {
			return -1
		}
		h, l := 2, uint64(b[i+1]&0x7F)
		switch l {
		case 126:
			if i+4 > len(b) {
				return -1
			}
			h, l = 4, uint64(binary.BigEndian.Uint16(b[i+2:]))
		case 127:
			if i+10 > len(b) {
				return -1
			}
			h, l = 10, binary.BigEndian.Uint64(b[i+2:])
			if l>>63 != 0 {
				return -1
			}
		}
		if b[i+1]&0x80 != 0 {
			h += 4
		}
		if i+h > len(b) || l >= uint64(len(b)-(i+h)) {
			return -1
		}
		i += h + int(l)
	}
	return -1
}

// trackPieces feeds stream to a tracker cut at cuts and returns where it
// found a close frame (-1 if it did not).
func trackPieces(stream []byte, cuts []int) int {
	var t frameTracker
	off := 0
	for _, end := range append(cuts, len(stream)) {
		if end < off || end > len(stream) {
			continue
		}
		k, atClose := t.scan(stream[off:end])
		if atClose {
			return off + k
		}
		off = end
	}
	return -1
}

func TestFrameTrackerFindsTheCloseFrame(t *testing.T) {
	for _, tc := range frameCases() {
		t.Run(tc.name, func(t *testing.T) {
			if ref := refClosePos(tc.stream); ref != tc.closeAt {
				t.Fatalf("reference decoder says %d, the case says %d: the test is wrong", ref, tc.closeAt)
			}
			if got := trackPieces(tc.stream, nil); got != tc.closeAt {
				t.Errorf("in one piece: close frame at %d, want %d", got, tc.closeAt)
			}
			// Every header split in two, and byte by byte.
			for cut := 1; cut < min(len(tc.stream), 64); cut++ {
				if got := trackPieces(tc.stream, []int{cut}); got != tc.closeAt {
					t.Fatalf("cut at %d: close frame at %d, want %d", cut, got, tc.closeAt)
				}
			}
			if len(tc.stream) < 5000 {
				var cuts []int
				for i := 1; i < len(tc.stream); i++ {
					cuts = append(cuts, i)
				}
				if got := trackPieces(tc.stream, cuts); got != tc.closeAt {
					t.Errorf("byte by byte: close frame at %d, want %d", got, tc.closeAt)
				}
			}
		})
	}
}

func TestFrameTrackerStopsAgainAtAHeldCloseFrame(t *testing.T) {
	var tr frameTracker
	closeF := wsFrame(opClose, true, true, closePayload(1001, ""), 0)
	for range 3 {
		if k, atClose := tr.scan(closeF); k != 0 || !atClose {
			t.Fatalf("scan(close frame) = %d, %v; want 0, true every time (the gate rescans it)", k, atClose)
		}
	}
}

// chunkConn is a net.Conn whose Read hands out the given chunks (each split
// further by the reader's buffer), then io.EOF.
type chunkConn struct {
	net.Conn // nil: only Read and Close are used
	chunks   [][]byte
	closed   bool
}

func (c *chunkConn) Read(p []byte) (int, error) {
	for len(c.chunks) > 0 && len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	return n, nil
}

func (c *chunkConn) Close() error { c.closed = true; return nil }

// gateResult reads a gatedConn to EOF with reads of bufSize and reports what
// it delivered and how much had been delivered each time the hold ran.
func gateRead(t testing.TB, pre []byte, chunks [][]byte, bufSize int) ([]byte, []int) {
	g := &gatedConn{Conn: &chunkConn{chunks: chunks}, pre: pre, closed: make(chan struct{})}
	var out []byte
	var holds []int
	hold := func(<-chan struct{}) { holds = append(holds, len(out)) }
	g.hold.Store(&hold)
	buf := make([]byte, bufSize)
	for range 1 << 20 {
		n, err := g.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, holds
		}
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
	}
	t.Fatal("gatedConn.Read never reached EOF")
	return nil, nil
}

func TestGatedConnDeliversUpToTheCloseFrameThenHolds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range frameCases() {
		t.Run(tc.name, func(t *testing.T) {
			for round := range 20 {
				// Part of the stream as the HTTP server's buffered bytes, the
				// rest in random chunks, read with a random buffer size.
				split := 0
				if len(tc.stream) > 0 {
					split = rng.IntN(len(tc.stream) + 1)
				}
				pre := append([]byte(nil), tc.stream[:split]...)
				var chunks [][]byte
				for rest := tc.stream[split:]; len(rest) > 0; {
					n := 1 + rng.IntN(len(rest))
					chunks = append(chunks, append([]byte(nil), rest[:n]...))
					rest = rest[n:]
				}
				bufSize := 1 + rng.IntN(4096)
				out, holds := gateRead(t, pre, chunks, bufSize)
				if !bytes.Equal(out, tc.stream) {
					t.Fatalf("round %d (pre %d, buf %d): delivered %d bytes, want the %d of the stream in order", round, split, bufSize, len(out), len(tc.stream))
				}
				switch {
				case tc.closeAt < 0 && len(holds) != 0:
					t.Fatalf("round %d: held at %v with no close frame", round, holds)
				case tc.closeAt >= 0 && (len(holds) != 1 || holds[0] != tc.closeAt):
					t.Fatalf("round %d (pre %d, buf %d): held at %v, want once at %d", round, split, bufSize, holds, tc.closeAt)
				}
			}
		})
	}
}

func TestGatedConnCloseAbortsTheHold(t *testing.T) {
	closeF := wsFrame(opClose, true, true, closePayload(1000, ""), 0)
	g := &gatedConn{Conn: &chunkConn{chunks: [][]byte{closeF}}, closed: make(chan struct{})}
	hold := func(abort <-chan struct{}) { <-abort }
	g.hold.Store(&hold)
	done := make(chan error, 1)
	go func() {
		_, err := g.Read(make([]byte, 64))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Read returned (%v) before the hold was released", err)
	case <-time.After(50 * time.Millisecond): // not a speed assertion: only gives a wrong Read the chance to return
	}
	g.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the hold")
	}
	if !g.Conn.(*chunkConn).closed {
		t.Error("Close did not close the underlying connection")
	}
}

// FuzzFrameTracker: however the stream is cut, the gate delivers every byte
// in order and holds exactly once, where the reference decoder finds the
// first close frame.
func FuzzFrameTracker(f *testing.F) {
	for _, tc := range frameCases() {
		if len(tc.stream) < 4096 {
			f.Add(tc.stream, []byte{3, 1, 7}, uint16(0))
		}
	}
	f.Fuzz(func(t *testing.T, stream, cutBytes []byte, preLen uint16) {
		want := refClosePos(stream)
		var cuts []int
		off := 0
		for _, c := range cutBytes {
			off += int(c)
			cuts = append(cuts, off)
		}
		if got := trackPieces(stream, cuts); got != want {
			t.Fatalf("tracker: close at %d, reference: %d (cuts %v)", got, want, cuts)
		}
		split := min(int(preLen), len(stream))
		var chunks [][]byte
		prev := split
		for _, c := range cuts {
			if c > prev && c <= len(stream) {
				chunks = append(chunks, stream[prev:c])
				prev = c
			}
		}
		chunks = append(chunks, stream[prev:])
		out, holds := gateRead(t, append([]byte(nil), stream[:split]...), chunks, 1+len(cutBytes)%97)
		if !bytes.Equal(out, stream) {
			t.Fatalf("gate delivered %x, want %x", out, stream)
		}
		if (want < 0 && len(holds) != 0) || (want >= 0 && (len(holds) != 1 || holds[0] != want)) {
			t.Fatalf("gate held at %v, reference close at %d", holds, want)
		}
	})
}

func TestWholeDataFrame(t *testing.T) {
	frame := func(b0 byte, payload int, masked bool) []byte {
		var h []byte
		mask := byte(0)
		if masked {
			mask = 0x80
		}
		switch {
		case payload < 126:
			h = []byte{b0, mask | byte(payload)}
		case payload < 1<<16:
			h = []byte{b0, mask | 126, byte(payload >> 8), byte(payload)}
		default:
			h = []byte{b0, mask | 127, 0, 0, 0, 0, byte(payload >> 24), byte(payload >> 16), byte(payload >> 8), byte(payload)}
		}
		if masked {
			h = append(h, 1, 2, 3, 4)
		}
		return append(h, make([]byte, payload)...)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"empty", nil, false},
		{"one byte", []byte{0x81}, false},
		{"small text", frame(0x81, 10, true), true},
		{"small text cut", frame(0x81, 10, true)[:15], false},
		{"text then more", append(frame(0x81, 10, true), 0x81), true},
		{"binary", frame(0x82, 3, true), true},
		{"16-bit length", frame(0x81, 300, true), true},
		{"16-bit length cut", frame(0x81, 300, true)[:200], false},
		{"16-bit header cut", frame(0x81, 300, true)[:3], false},
		{"64-bit length", frame(0x81, 70000, true), true},
		{"64-bit length cut", frame(0x81, 70000, true)[:70000], false},
		{"fragment", frame(0x01, 10, true), false},
		{"continuation", frame(0x80, 10, true), false},
		{"ping", frame(0x89, 0, true), false},
		{"close", frame(0x88, 2, true), false},
		{"top bit length", []byte{0x81, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4}, false},
	} {
		if got := wholeDataFrame(tc.b); got != tc.want {
			t.Errorf("%s: wholeDataFrame = %v, want %v", tc.name, got, tc.want)
		}
	}
}
