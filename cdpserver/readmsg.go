package cdpserver

import (
	"bytes"
	"context"
	"io"

	"github.com/coder/websocket"
)

// msgReader reads whole messages like websocket.Conn.Read, with one
// exact-size allocation per small message (io.ReadAll starts at 512 bytes
// and builds intermediate chunks: three to four allocations for a console
// event). Messages larger than its scratch buffer are read in growing chunks
// joined by one final copy, as io.ReadAll does: growing one buffer instead
// copied a 5 MB answer ~30 times and doubled the worker's CPU for it. It is
// owned by the one goroutine that reads its connection.
type msgReader struct {
	scratch []byte // keepScratch bytes, allocated on first use

	// size, if set, tells the payload length of a large message once its
	// header is read (hostnode.SessionIO.NextLen), 0 if unknown: such a
	// message is read into one buffer of that size, without chunks and
	// their join. It is checked against what is read.
	size func() int64
}

// keepScratch is the reader's reusable buffer: most relayed messages fit it.
const keepScratch = 16 << 10

// read returns the next message. The slice is the caller's to keep (it is
// queued, shared, stored): it never aliases the reader's scratch buffer.
func (r *msgReader) read(ctx context.Context, conn *websocket.Conn) ([]byte, error) {
	_, rd, err := conn.Reader(ctx)
	if err != nil {
		return nil, err
	}
	if r.scratch == nil {
		r.scratch = make([]byte, keepScratch)
	}
	var chunks [][]byte
	total, exact := 0, false
	if r.size != nil {
		if n := r.size(); n > keepScratch && n <= maxHostMessageLimit {
			b := make([]byte, n)
			k, err := io.ReadFull(rd, b)
			switch {
			case err == io.EOF || err == io.ErrUnexpectedEOF: // shorter than told
				return append(make([]byte, 0, k), b[:k]...), nil
			case err != nil:
				return nil, err
			}
			chunks, total, exact = [][]byte{b}, len(b), true // or longer than told: read on
		}
	}
	b := r.scratch[:0]
	for {
		if len(b) == cap(b) {
			chunks = append(chunks, b)
			total += len(b)
			b = make([]byte, 0, total/2+keepScratch)
		}
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if chunks == nil {
		return append(make([]byte, 0, len(b)), b...), nil
	}
	if exact && len(chunks) == 1 && len(b) == 0 {
		return chunks[0], nil // as long as told (never the scratch buffer)
	}
	// bytes.Join allocates without zeroing: the copy fills it all.
	return bytes.Join(append(chunks, b), nil), nil
}
