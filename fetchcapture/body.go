package fetchcapture

import (
	"errors"
	"fmt"
)

// body is one reassembled body. Chunks are kept as received (no copy into
// one buffer while the request runs); Body joins them on demand.
type body struct {
	chunks [][]byte
	size   int64 // bytes kept
	cost   int64 // what the kept chunks cost the budget (chunkCost)
	seen   int64 // bytes that reached the worker, kept or not
	// broken says why the body is not trusted (a gap or an overlap); the
	// chunks are then freed.
	broken string
	// journalTruncated: the journal's byte budget refused a chunk while no
	// finished entry could be evicted; the prefix is kept.
	journalTruncated bool
}

// add appends a chunk at offset. It returns what the journal's budget now
// holds in addition (0 for a refused chunk, minus what was kept for a
// broken one) and whether the chunk was in order. A chunk that does not start exactly at the end of what arrived
// (a gap: data lost; an overlap: data sent twice or rewritten) breaks the
// body: a reassembly that guessed would show bytes the app never got.
func (b *body) add(offset int64, data []byte, room bool) (int64, bool) {
	if b.broken != "" {
		return 0, false
	}
	if offset != b.seen {
		kind := "gap"
		if offset < b.seen {
			kind = "overlap"
		}
		b.broken = fmt.Sprintf("the producer's chunks did not line up (%s: a chunk at offset %d after %d bytes); the body was dropped", kind, offset, b.seen)
		freed := b.cost
		b.chunks, b.size, b.cost = nil, 0, 0
		return -freed, false
	}
	b.seen += int64(len(data))
	if !room || b.journalTruncated {
		b.journalTruncated = true
		return 0, true
	}
	if len(data) == 0 {
		return 0, true
	}
	b.chunks = append(b.chunks, data)
	b.size += int64(len(data))
	b.cost += chunkCost(data)
	return chunkCost(data), true
}

func (b *body) bytes() []byte {
	out := make([]byte, 0, b.size)
	for _, c := range b.chunks {
		out = append(out, c...)
	}
	return out
}

// Errors of Journal.Body. Each says what the reader can do.
var (
	// ErrUnknownRequest: no such request id, or it was evicted.
	ErrUnknownRequest = errors.New("fetchcapture: no such request in the journal (it may have been evicted: the journal keeps the most recent requests within its budgets)")
	// ErrNotFinished: the body is still arriving.
	ErrNotFinished = errors.New("fetchcapture: the request has not finished yet; ask again when it has")
	// ErrBodiesNotRead: the producer does not read this request's bodies.
	ErrBodiesNotRead = errors.New("fetchcapture: bodies of node:http/https requests are not captured (reading them would consume the application's streams)")
	// ErrNoBody: the request has no body of that kind.
	ErrNoBody = errors.New("fetchcapture: the request has no body")
	// ErrBrokenBody: the producer's chunks did not line up; the body was dropped.
	ErrBrokenBody = errors.New("fetchcapture: the body was not captured correctly")
	// ErrReleased: the request's source left before it finished; the
	// journal kept only its request line and why it failed.
	ErrReleased = errors.New("fetchcapture: the body is gone")
)

// BodyPart is what Journal.Body returns.
type BodyPart struct {
	Data []byte
	// Truncated: Data is a prefix. By is who cut it ("producer" budget or
	// "journal" budget); Total is the size the producer reported (0 if
	// not known).
	Truncated bool
	By        string
	Total     int64
	Request   *Request
	Response  *Response
}
