package hostnode

import (
	"bytes"
	"io"
	"sync"
)

// maxBannerLine bounds how much of one unterminated line BannerFilter holds:
// Node's banner lines are short, so a longer line is the program's and is
// passed through as it arrives rather than held in memory.
const maxBannerLine = 64 << 10

// BannerFilter is an io.Writer for node's stderr (Options.Stderr) that
// passes every line to out except Node's inspector banner lines, recognised
// by position (see Banner). A partial line is held until its newline, a
// possible end banner until the next line or Close. Lines are written out
// with their original bytes ("\r\n" included).
//
// One node process is one stream: call Close when it ended (its Done), and
// before the next process writes, so that positions count from that
// process's first line.
type BannerFilter struct {
	out io.Writer // Static after construction.

	mu      sync.Mutex // Lock order: see docs/locks.md.
	banner  Banner[[]byte]
	line    []byte // Guarded by mu: the current line, up to maxBannerLine.
	passing bool   // Guarded by mu: the current line is long and passed through as it arrives.
	tail    []byte // Guarded by mu: the end of what this stream passed, up to 2*stderrTailMax.
	ended   bool   // Guarded by mu: Close ended the stream; the next Write starts one.
}

// NewBannerFilter returns a filter that writes to out.
func NewBannerFilter(out io.Writer) *BannerFilter { return &BannerFilter{out: out} }

// Write never fails: a broken destination must not stop the draining of the
// child's stderr.
func (f *BannerFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		f.tail, f.ended = f.tail[:0], false
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			f.appendLocked(p)
			break
		}
		f.appendLocked(p[:i+1])
		f.endLineLocked()
		p = p[i+1:]
	}
	return n, nil
}

func (f *BannerFilter) appendLocked(p []byte) {
	if f.passing {
		f.writeLocked(p)
		return
	}
	f.line = append(f.line, p...)
	if len(f.line) > maxBannerLine && !bytes.HasSuffix(f.line, []byte{'\n'}) {
		for _, l := range f.banner.passLine() {
			f.writeLocked(l)
		}
		f.writeLocked(f.line)
		f.line, f.passing = f.line[:0], true
	}
}

// endLineLocked acts on the line just completed (newline included).
func (f *BannerFilter) endLineLocked() {
	if f.passing {
		f.passing = false
		return
	}
	line := bytes.Clone(f.line)
	f.line = f.line[:0]
	for _, l := range f.banner.Line(string(bytes.TrimSuffix(line, []byte{'\n'})), line) {
		f.writeLocked(l)
	}
}

// Close ends the stream: it writes a last line that had no newline (Node
// ends each of its lines with one, so that line is the program's, and so
// are the lines held before it), and drops the held lines otherwise (the
// stream ended with them, so they were Node's end banner). The next Write
// starts a new stream.
func (f *BannerFilter) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.line) > 0 && !f.passing {
		for _, l := range f.banner.passLine() {
			f.writeLocked(l)
		}
		f.writeLocked(f.line)
	}
	f.line, f.passing, f.ended = f.line[:0], false, true
	f.banner.End()
	return nil
}

// writeLocked passes p on and keeps the end of it for Tail.
func (f *BannerFilter) writeLocked(p []byte) {
	_, _ = f.out.Write(p)
	f.tail = append(f.tail, p...)
	if len(f.tail) > 2*stderrTailMax {
		f.tail = append(f.tail[:0], f.tail[len(f.tail)-stderrTailMax:]...)
	}
}

// Tail is the last <= 4000 bytes the current stream passed on, Node's
// banner lines excluded (after Close: the stream that ended, until the next
// Write): what a crash printed, for a message to the user.
func (f *BannerFilter) Tail() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return tailString(f.tail)
}

// WatchAttaches makes the filter drop Node's "Debugger attached." for each
// session Dial opens to another node's inspector url: a child process of
// this node that writes to the same stderr (it inherited it) and whose
// start and end banners are off (--inspect-publish-uid=http, an inspector
// it closes before exiting). Node prints "Debugger attached." for every
// session whatever publish-uid says. Call stop when that node has ended.
func (f *BannerFilter) WatchAttaches(url string) (stop func()) {
	attachWatchers.add(url, &f.banner)
	return func() { attachWatchers.remove(url, &f.banner) }
}
