package hostnode

import "sync"

// frameLens follows the frame headers in Node's byte stream (server to
// client, so unmasked: RFC 6455 5.2) as quickAckConn reads it, and keeps the
// payload length of recent large frames, so the relay's reader can allocate
// a large message once at its exact size instead of growing chunks and
// joining them (SessionIO.NextLen). Payloads are skipped by arithmetic: the
// cost is per frame, not per byte. A length it reports is a hint only: the
// reader checks it against what it reads.
type frameLens struct {
	mu   sync.Mutex  // Lock order: see docs/locks.md.
	on   bool        // Guarded by mu: set after the handshake.
	hdr  [10]byte    // Guarded by mu: the current header, while incomplete.
	have int         // Guarded by mu: bytes of hdr gathered.
	left uint64      // Guarded by mu: payload bytes of the current frame still to pass.
	msgs int64       // Guarded by mu: data messages whose first frame header was complete.
	big  [8]bigFrame // Guarded by mu: ring of the latest large frames.
	head int         // Guarded by mu: the oldest entry of big.
	n    int         // Guarded by mu: entries in big.
	bad  bool        // Guarded by mu: a header made no sense; no more hints.
}

type bigFrame struct {
	idx  int64 // the message's number, 0 = the first after the handshake
	size int64
}

// minHinted is the smallest frame worth a hint: smaller messages fit the
// relay's scratch buffer anyway.
const minHinted = 16 << 10

// started is the number of data messages whose first frame header has
// arrived (false while the tracker is off or gave up: no promise then).
func (f *frameLens) started() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.msgs
}

// startedSure is started, with ok false while the tracker is off or after
// it gave up (its count no longer follows the stream).
func (f *frameLens) startedSure() (n int64, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.msgs, f.on && !f.bad
}

func (f *frameLens) start() {
	f.mu.Lock()
	f.on = true
	f.mu.Unlock()
}

// feed passes bytes read from the socket through the tracker.
func (f *frameLens) feed(b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.on || f.bad {
		return
	}
	for len(b) > 0 {
		if f.left > 0 {
			k := uint64(len(b))
			if k > f.left {
				k = f.left
			}
			f.left -= k
			b = b[k:]
			continue
		}
		k := copy(f.hdr[f.have:f.need()], b)
		f.have += k
		b = b[k:]
		if f.have < f.need() {
			continue // need() grows once the second byte is in
		}
		size, ok := f.payload()
		if !ok {
			f.bad = true
			return
		}
		// Messages are numbered as the reader takes them: a text or binary
		// frame starts one; continuations and control frames do not.
		if op := f.hdr[0] & 0x0F; op == 0x1 || op == 0x2 {
			if fin := f.hdr[0]&0x80 != 0; fin && size >= minHinted {
				f.push(bigFrame{f.msgs, int64(size)})
			}
			f.msgs++
		}
		f.left, f.have = size, 0
	}
}

// need is the length of the current header as far as it is known.
func (f *frameLens) need() int {
	if f.have < 2 {
		return 2
	}
	if f.hdr[1]&0x80 != 0 { // masked: not from a server; payload() refuses it
		return 2
	}
	switch f.hdr[1] & 0x7F {
	case 126:
		return 4
	case 127:
		return 10
	}
	return 2
}

func (f *frameLens) payload() (uint64, bool) {
	if f.hdr[1]&0x80 != 0 {
		return 0, false
	}
	switch n := f.hdr[1] & 0x7F; n {
	case 126:
		return uint64(f.hdr[2])<<8 | uint64(f.hdr[3]), true
	case 127:
		var v uint64
		for _, c := range f.hdr[2:10] {
			v = v<<8 | uint64(c)
		}
		return v, v>>63 == 0
	default:
		return uint64(n), true
	}
}

func (f *frameLens) push(e bigFrame) {
	if f.n == len(f.big) { // the oldest hint goes: a missed hint only costs a copy
		f.head = (f.head + 1) % len(f.big)
		f.n--
	}
	f.big[(f.head+f.n)%len(f.big)] = e
	f.n++
}

// sizeOf returns the payload length of message idx if it is one large frame
// whose header was seen, and forgets the hints of earlier messages.
func (f *frameLens) sizeOf(idx int64) (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.n > 0 {
		e := f.big[f.head]
		if e.idx > idx {
			return 0, false
		}
		f.head = (f.head + 1) % len(f.big)
		f.n--
		if e.idx == idx {
			return e.size, true
		}
	}
	return 0, false
}
