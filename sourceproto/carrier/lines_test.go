package carrier

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll splits in with a lineReader of limit max and describes the
// result: the frames, then the error that ended it.
func readAll(in []byte, max int, oneByte bool) ([]string, error) {
	var r io.Reader = bytes.NewReader(in)
	if oneByte {
		r = iotest.OneByteReader(r) // every line arrives in pieces
	}
	lr := newLineReader(r, max)
	var out []string
	for {
		f, err := lr.next()
		if err != nil {
			return out, err
		}
		out = append(out, string(f))
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", lineBufferBytes+10) // spans bufio buffers
	tests := []struct {
		name  string
		in    string
		max   int
		want  []string
		isErr error
	}{
		{"empty", "", 10, nil, io.EOF},
		{"one", "{}\n", 10, []string{"{}"}, io.EOF},
		{"several", "a\nbb\n\nccc\n", 10, []string{"a", "bb", "", "ccc"}, io.EOF},
		{"exactly max", "0123456789\n", 10, []string{"0123456789"}, io.EOF},
		{"max plus one", "ok\n0123456789a\nnever\n", 10, []string{"ok"}, ErrFrameTooLong},
		{"too long without newline", "0123456789abc", 10, nil, ErrFrameTooLong},
		{"truncated at EOF", "a\npartial", 10, []string{"a"}, errTruncated},
		{"long line", long + "\nz\n", len(long), []string{long, "z"}, io.EOF},
		{"long line over max", long + "\n", len(long) - 1, nil, ErrFrameTooLong},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			got, err := readAll([]byte(tt.in), tt.max, oneByte)
			if !errors.Is(err, tt.isErr) || strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("%s (one byte %v): got %d frames %.40q, %v; want %d frames, %v",
					tt.name, oneByte, len(got), got, err, len(tt.want), tt.isErr)
			}
		}
	}
}

// TestLineReaderNeverHoldsMoreThanMax feeds an endless line: the reader
// must stop after about max bytes (plus one read buffer), not read on.
func TestLineReaderNeverHoldsMoreThanMax(t *testing.T) {
	const max = 1 << 20
	src := &countingReader{}
	lr := newLineReader(src, max)
	if _, err := lr.next(); !errors.Is(err, ErrFrameTooLong) {
		t.Fatalf("got %v, want ErrFrameTooLong", err)
	}
	if src.n > max+lineBufferBytes {
		t.Errorf("read %d bytes of the line; at most %d expected", src.n, max+lineBufferBytes)
	}
	if cap(lr.buf) > 2*max {
		t.Errorf("buffer grew to %d", cap(lr.buf))
	}
}

// countingReader is an endless line of 'x'.
type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	c.n += len(p)
	return len(p), nil
}

// FuzzLineReader checks the reader against bytes.Split: the same frames,
// and a refusal exactly when a line is over the limit.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc\n"), uint8(3))
	f.Add([]byte("0123456789a\n"), uint8(10))
	f.Add([]byte("x\npartial"), uint8(10))
	f.Add([]byte(""), uint8(0))
	f.Fuzz(func(t *testing.T, in []byte, max uint8) {
		got, err := readAll(in, int(max), len(in)%2 == 1)
		want, wantErr := splitOracle(in, int(max))
		if !errors.Is(err, wantErr) || len(got) != len(want) || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("in %q max %d: got %q, %v; want %q, %v", in, max, got, err, want, wantErr)
		}
	})
}

// splitOracle is what lineReader must do, written the obvious way.
func splitOracle(in []byte, max int) ([]string, error) {
	var out []string
	for {
		i := bytes.IndexByte(in, '\n')
		switch {
		case i < 0 && len(in) > max, i > max:
			return out, ErrFrameTooLong
		case i < 0 && len(in) > 0:
			return out, errTruncated
		case i < 0:
			return out, io.EOF
		}
		out = append(out, string(in[:i]))
		in = in[i+1:]
	}
}
