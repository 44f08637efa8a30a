package hostnode

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

const (
	bannerURL     = "ws://127.0.0.1:1/x"
	bannerListen  = listeningPrefix + bannerURL
	bannerWait    = waitingDisconnect
	bannerEnding  = "Debugger ending on " + bannerURL
	bannerAttach  = debuggerAttached
	bannerHelpMsg = inspectorHelp
)

// bannerCases: Node's banner lines are dropped only where Node prints them
// (the first lines, the last lines); the same text anywhere else is the
// program's and passes through. (These were trace's cases; the filter of
// `run` must keep them too.)
var bannerCases = []struct {
	name string
	in   []string
	want []string
}{
	{"node's own only", []string{bannerListen, bannerHelpMsg, bannerAttach, bannerWait, bannerEnding, bannerHelpMsg}, nil},
	{"program between", []string{bannerListen, bannerHelpMsg, bannerAttach, "a", bannerListen, bannerWait, "b", bannerWait, bannerEnding, bannerHelpMsg},
		[]string{"a", bannerListen, bannerWait, "b"}},
	{"program ends with wait then more", []string{bannerListen, bannerHelpMsg, bannerAttach, bannerWait, bannerEnding, "c", bannerWait},
		[]string{bannerWait, bannerEnding, "c"}},
	{"start banner out of place", []string{"x", bannerListen, bannerHelpMsg, bannerAttach},
		[]string{"x", bannerListen, bannerHelpMsg, bannerAttach}},
	{"wait restarts a held run", []string{bannerWait, bannerWait, bannerEnding}, []string{bannerWait}},
	{"attach text later, no session announced", []string{bannerListen, bannerHelpMsg, bannerAttach, "a", bannerAttach, "b"},
		[]string{"a", bannerAttach, "b"}},
	{"detach mid-stream", []string{bannerListen, bannerHelpMsg, bannerAttach, "a", bannerEnding, bannerHelpMsg, "b"}, []string{"a", "b"}},
	{"detach after wait", []string{bannerListen, bannerHelpMsg, "a", bannerWait, bannerEnding, bannerHelpMsg, "b"}, []string{"a", bannerWait, "b"}},
	{"another node's ending", []string{"x", bannerEnding, bannerHelpMsg, "y"}, []string{"x", bannerEnding, bannerHelpMsg, "y"}},
	{"ending without help", []string{bannerListen, bannerHelpMsg, "a", bannerEnding, "b", bannerEnding}, []string{"a", bannerEnding, "b"}},
	{"start banner without attach", []string{bannerListen, bannerHelpMsg, "a", bannerAttach}, []string{"a", bannerAttach}},
}

func TestBannerFilterByPosition(t *testing.T) {
	for _, tc := range bannerCases {
		for _, eol := range []string{"\n", "\r\n"} {
			t.Run(tc.name+"/"+strings.ReplaceAll(strings.ReplaceAll(eol, "\r", "CR"), "\n", "LF"), func(t *testing.T) {
				var in, want bytes.Buffer
				for _, l := range tc.in {
					in.WriteString(l + eol)
				}
				for _, l := range tc.want {
					want.WriteString(l + eol)
				}
				// Whole, and one byte at a time: lines are found across writes.
				for _, chunk := range []int{in.Len(), 1} {
					var out bytes.Buffer
					f := NewBannerFilter(&out)
					for b := in.Bytes(); len(b) > 0; {
						n := min(chunk, len(b))
						if m, err := f.Write(b[:n]); m != n || err != nil {
							t.Fatalf("Write = %d, %v", m, err)
						}
						b = b[n:]
					}
					f.Close()
					if out.String() != want.String() {
						t.Errorf("chunk %d: out = %q, want %q", chunk, out.String(), want.String())
					}
				}
			})
		}
	}
}

// TestBannerFilterAttach: "Debugger attached." later in the stream is Node's
// only for a session announced to that node's URL (Dial does), once per
// session; a failed dial withdraws its announcement; another node's URL
// does not count.
func TestBannerFilterAttach(t *testing.T) {
	var out bytes.Buffer
	f := NewBannerFilter(&out)
	_, _ = f.Write([]byte(bannerListen + "\n" + bannerHelpMsg + "\n" + "a\n"))
	attachWatchers.announceAttach(bannerURL) // a window's session
	attachWatchers.announceAttach("ws://127.0.0.1:2/other")
	undo := attachWatchers.announceAttach(bannerURL)
	undo() // that dial failed
	_, _ = f.Write([]byte("b\n" + bannerAttach + "\nc\n" + bannerAttach + "\n"))
	f.Close()
	if want := "a\nb\nc\n" + bannerAttach + "\n"; out.String() != want {
		t.Errorf("out = %q, want %q", out.String(), want)
	}
	attachWatchers.mu.Lock()
	left := len(attachWatchers.m[bannerURL])
	attachWatchers.mu.Unlock()
	if left != 0 {
		t.Errorf("%d filters still registered for %s after Close", left, bannerURL)
	}
}

// TestBannerFilterStreams: Close ends one node's stream (flushing its last
// unterminated line, dropping its end banner); the next Write is a new
// node, whose start banner is at its own first lines. Tail is what the
// stream passed.
func TestBannerFilterStreams(t *testing.T) {
	var out bytes.Buffer
	f := NewBannerFilter(&out)
	_, _ = f.Write([]byte(bannerListen + "\n" + bannerHelpMsg + "\nboom\n" + bannerWait + "\nno newline"))
	f.Close()
	if got := f.Tail(); got != "boom\n"+bannerWait+"\nno newline" {
		t.Errorf("Tail after the first stream = %q", got)
	}
	_, _ = f.Write([]byte(bannerListen + "\n" + bannerHelpMsg + "\nsecond\n" + bannerWait + "\n"))
	f.Close()
	if want := "boom\n" + bannerWait + "\nno newline" + "second\n"; out.String() != want {
		t.Errorf("out = %q, want %q", out.String(), want)
	}
	if got := f.Tail(); got != "second\n" {
		t.Errorf("Tail after the second stream = %q", got)
	}
}

// TestBannerFilterLongLine: a line longer than any banner passes as it
// arrives (nothing held beyond maxBannerLine), however it starts.
func TestBannerFilterLongLine(t *testing.T) {
	var out bytes.Buffer
	f := NewBannerFilter(&out)
	long := bannerListen + strings.Repeat("z", 2*maxBannerLine)
	_, _ = f.Write([]byte("first\n" + bannerWait + "\n" + long[:maxBannerLine+10]))
	if !strings.HasPrefix(out.String(), "first\n"+bannerWait+"\n"+bannerListen) {
		t.Fatalf("a long line was held: out has %d bytes", out.Len())
	}
	_, _ = f.Write([]byte(long[maxBannerLine+10:] + "\n" + bannerAttach + "\n"))
	f.Close()
	if want := "first\n" + bannerWait + "\n" + long + "\n" + bannerAttach + "\n"; out.String() != want {
		t.Errorf("out (%d bytes) differs from want (%d bytes)", out.Len(), len(want))
	}
}

// TestBannerFilterNode: with a real node, every banner line Node prints
// (the start banner, one "Debugger attached." per session opened through
// Dial, at any time, the detach lines when the last session goes) is
// dropped, and the program's own lines with the same text pass, in order.
// A session opened after the detach is announced like the first.
func TestBannerFilterNode(t *testing.T) {
	proctest.Node(t)
	ctx := testCtx(t)
	stderr, stdout, raw := newLineSink(), newLineSink(), newLineSink()
	filter := NewBannerFilter(stderr)
	t.Cleanup(func() { filter.Close() }) // unregisters it, also when the test fails early
	p := startNode(t, ctx, Options{
		Argv: []string{"node", writeScript(t, `
console.error("Debugger attached.");
console.error("one");
console.log("ran");
setInterval(() => {}, 1000);
`)},
		Wait: true, Stdout: stdout, Stderr: io.MultiWriter(filter, raw),
	})
	s1 := dialSession(t, ctx, p.InspectorURL())
	releaseUntil(t, ctx, s1, stdout, "ran")
	stderr.waitLine(t, ctx, "one")
	s2 := dialSession(t, ctx, p.InspectorURL()) // Node prints "Debugger attached." again
	if _, err := s2.evaluate(ctx, `console.error("Debugger attached."); console.error("two")`); err != nil {
		t.Fatal(err)
	}
	stderr.waitLine(t, ctx, "two")
	s1.c.Close(websocket.StatusNormalClosure, "")
	s2.c.Close(websocket.StatusNormalClosure, "")
	raw.waitLine(t, ctx, "Debugger ending on ") // the last session went; the program runs on
	s3 := dialSession(t, ctx, p.InspectorURL())
	if _, err := s3.evaluate(ctx, `console.error("three")`); err != nil {
		t.Fatal(err)
	}
	stderr.waitLine(t, ctx, "three")
	p.Kill()
	filter.Close()
	if got, want := stderr.String(), "Debugger attached.\none\nDebugger attached.\ntwo\nthree\n"; got != want {
		t.Errorf("stderr after the filter = %q, want %q", got, want)
	}
}
