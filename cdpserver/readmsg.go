package cdpserver

import (
	"bytes"
	"context"
	"io"

	"github.com/coder/websocket"
)

// msgReader reads whole messages like websocket.Conn.Read, with one
// exact-size allocation per message instead of io.ReadAll's growing copies
// (512 bytes, then ~1.25× steps: two to three allocations for a console
// event, ~25 for a 5 MB answer). It is owned by the one goroutine that reads
// its connection.
type msgReader struct {
	scratch []byte // reused for messages up to keepScratch bytes
}

// keepScratch bounds the buffer a reader keeps between messages; a larger
// message's buffer is handed over with the message instead.
const keepScratch = 64 << 10

// read returns the next message. The slice is the caller's to keep (it is
// queued, shared, stored): it never aliases the reader's scratch buffer.
func (r *msgReader) read(ctx context.Context, conn *websocket.Conn) ([]byte, error) {
	_, rd, err := conn.Reader(ctx)
	if err != nil {
		return nil, err
	}
	buf := r.scratch[:0]
	if cap(buf) == 0 {
		buf = make([]byte, 0, 4096)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow by the runtime's policy
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if cap(buf) > keepScratch {
		r.scratch = nil
		return buf[:len(buf):len(buf)], nil
	}
	r.scratch = buf
	return bytes.Clone(buf), nil
}
