package carrier

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// lineBufferBytes is the host pipe's read buffer. Most frames (a batch of
// console events) fit, and are then handed to the registry straight from
// the buffer without a copy; longer ones are assembled in lineReader.buf.
const lineBufferBytes = 64 << 10

// lineReader splits a byte stream into "\n"-terminated frames of at most
// max bytes (the newline not counted). Not safe for concurrent use: it
// belongs to one read loop.
type lineReader struct {
	br  *bufio.Reader // Owned by the read loop.
	buf []byte        // Owned by the read loop: a frame longer than the bufio buffer.
	max int           // Static after construction.
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, lineBufferBytes), max: max}
}

// errTruncated: the stream ended in the middle of a frame (the producer
// died while writing it).
var errTruncated = errors.New("carrier: stream ended inside a frame")

// next returns the next frame, without its newline. The frame is valid
// until the next call (the registry copies what it keeps). At a clean end
// it returns io.EOF, and errTruncated when the stream ends after a partial
// line. A line that grows past max without a newline gives ErrFrameTooLong
// as soon as that is known: at most max bytes of it are ever held, never
// the whole line.
func (r *lineReader) next() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		body := chunk
		if err == nil {
			body = chunk[:len(chunk)-1]
		}
		if len(r.buf)+len(body) > r.max {
			return nil, ErrFrameTooLong
		}
		switch {
		case err == nil && len(r.buf) == 0:
			return body, nil
		case err == nil:
			r.buf = append(r.buf, body...)
			return r.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			r.buf = append(r.buf, chunk...)
		case errors.Is(err, io.EOF) && len(r.buf)+len(chunk) > 0:
			return nil, fmt.Errorf("%w (%d bytes)", errTruncated, len(r.buf)+len(chunk))
		default:
			return nil, err
		}
	}
}
