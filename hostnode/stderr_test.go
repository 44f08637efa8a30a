package hostnode

import (
	"bytes"
	"strings"
	"testing"
)

const (
	url1 = "ws://127.0.0.1:40001/7f623bfb-9db1-419d-b9f3-d7ff46702052"
	url2 = "ws://127.0.0.1:40002/1555c903-3248-4e71-835e-29264051e9d7"
)

var classifyTests = []struct {
	line string
	kind lineKind
	url  string
}{
	{"Debugger listening on " + url1, lineURL, url1},
	{"Debugger listening on ws://[::1]:9229/abc", lineURL, "ws://[::1]:9229/abc"},
	{"Debugger listening on " + url1 + " extra", lineURL, url1},
	{"For help, see: https://nodejs.org/en/docs/inspector", lineOther, ""},
	{"Debugger attached.", lineOther, ""},
	{"Debugger ending on " + url1, lineOther, ""},
	{"Waiting for the debugger to disconnect...", lineWaitingDisconnect, ""},
	{"Starting inspector on 127.0.0.1:0 failed: address already in use", lineFailure, ""},
	{"Inspector FAILED to start", lineFailure, ""},
	{"node: bad option: --bad-flag-xyz", lineFailure, ""},
	{"/usr/bin/node: bad option: --bad-flag-xyz", lineFailure, ""},
	{"/opt/node/bin/node: --inspect-port= requires an argument", lineFailure, ""},
	{"node: --inspect-brk is not allowed in NODE_OPTIONS", lineFailure, ""},
	{"Debugger listening on ws://0.0.0.0:9229/abc", lineFailure, ""},
	{"Debugger listening on ws://10.1.2.3:9229/abc", lineFailure, ""},
	{"Debugger listening on http://127.0.0.1:9229/abc", lineFailure, ""},
	{"Debugger listening on ", lineFailure, ""},
	{"(node:123) Warning: something", lineOther, ""},
	{"  Debugger listening on " + url1, lineOther, ""},
	{"the inspector is fine", lineOther, ""},
	{"", lineOther, ""},
}

func TestClassifyLine(t *testing.T) {
	for _, tc := range classifyTests {
		kind, url := classifyLine(tc.line, "/opt/node/bin/node")
		if kind != tc.kind || url != tc.url {
			t.Errorf("classifyLine(%q) = %v %q, want %v %q", tc.line, kind, url, tc.kind, tc.url)
		}
	}
}

// feed writes input into a fresh scanner in chunks of n bytes.
func feed(input string, n int) (*stderrScanner, string) {
	var out bytes.Buffer
	s := newStderrScanner(&out, "/usr/bin/node")
	for b := []byte(input); len(b) > 0; {
		k := min(n, len(b))
		s.Write(b[:k])
		b = b[k:]
	}
	s.finish()
	return s, out.String()
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestScanner(t *testing.T) {
	tests := []struct {
		name, input string
		url, fail   string
		waiting     bool
	}{
		{name: "banner", url: url1,
			input: "Debugger listening on " + url1 + "\nFor help, see: https://nodejs.org/en/docs/inspector\n"},
		{name: "first URL only; later banners and failure-looking lines ignored", url: url1,
			input: "Debugger listening on " + url1 + "\r\nDebugger attached.\nDebugger listening on " + url2 + "\nnode: app says inspector failed\n"},
		{name: "failure before URL wins", fail: "Starting inspector on 127.0.0.1:0 failed: address already in use",
			input: "Starting inspector on 127.0.0.1:0 failed: address already in use\nDebugger listening on " + url1 + "\n"},
		{name: "waiting for disconnect", url: url1, waiting: true,
			input: "Debugger listening on " + url1 + "\nWaiting for the debugger to disconnect...\nWaiting for the debugger to disconnect...\n"},
		{name: "unterminated last line", fail: "/usr/bin/node: bad option: --x",
			input: "/usr/bin/node: bad option: --x"},
		{name: "overlong line is copied, not classified", url: url1,
			input: strings.Repeat("x", 3*maxScanLine) + "Debugger listening on " + url2 + "\nDebugger listening on " + url1 + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range []int{1, 7, 4096, len(tc.input)} {
				s, out := feed(tc.input, n)
				if out != tc.input {
					t.Fatalf("chunk %d: output differs from input", n)
				}
				if closed(s.ready) != (tc.url != "") || s.url != tc.url {
					t.Errorf("chunk %d: url = %q (ready %v), want %q", n, s.url, closed(s.ready), tc.url)
				}
				if closed(s.failed) != (tc.fail != "") || s.failLine != tc.fail {
					t.Errorf("chunk %d: failLine = %q, want %q", n, s.failLine, tc.fail)
				}
				if closed(s.waiting) != tc.waiting {
					t.Errorf("chunk %d: waiting = %v", n, closed(s.waiting))
				}
			}
		})
	}
}

func TestStderrTail(t *testing.T) {
	s, _ := feed("short\n", 3)
	if got := s.Tail(); got != "short\n" {
		t.Errorf("Tail = %q", got)
	}
	long := strings.Repeat("é", stderrTailMax) + "END" // 2-byte runes: the cut lands mid-rune
	for _, n := range []int{1, 1000, len(long)} {
		s, _ := feed(long, n)
		got := s.Tail()
		if len(got) > stderrTailMax || !strings.HasSuffix(got, "END") || !strings.HasPrefix(got, "é") {
			t.Errorf("chunk %d: Tail has %d bytes, starts %q, ends %q", n, len(got), got[:4], got[len(got)-3:])
		}
	}
}

// FuzzScanner checks that any stderr, split anywhere, is copied through
// unchanged, that the split does not change what is recognised, and that a
// recognised URL is a loopback ws:// URL taken from a "Debugger listening" line.
func FuzzScanner(f *testing.F) {
	for _, tc := range classifyTests {
		f.Add(tc.line+"\n"+tc.line, uint8(3))
	}
	f.Add("Debugger listening on "+url1+"\r\nWaiting for the debugger to disconnect...\n", uint8(1))
	f.Fuzz(func(t *testing.T, input string, chunk uint8) {
		whole, out := feed(input, len(input)+1)
		if out != input {
			t.Fatal("output differs from input")
		}
		split, _ := feed(input, int(chunk)+1)
		if whole.url != split.url || whole.failLine != split.failLine || closed(whole.waiting) != closed(split.waiting) {
			t.Fatalf("split changed the result: %q/%q vs %q/%q", whole.url, whole.failLine, split.url, split.failLine)
		}
		if whole.url != "" {
			if whole.failLine != "" {
				t.Fatal("both a URL and a failure line")
			}
			if !strings.Contains(input, listeningPrefix+whole.url) {
				t.Fatalf("url %q not from a listening line", whole.url)
			}
			if _, _, disc, err := ParseInspectorAddr(whole.url); err != nil || disc {
				t.Fatalf("url %q refused: %v", whole.url, err)
			}
		}
		if len(whole.Tail()) > stderrTailMax {
			t.Fatal("tail too long")
		}
	})
}

// FuzzClassifyLine: a URL is only ever taken from the start of a
// "Debugger listening on " line and is always a loopback ws:// URL.
func FuzzClassifyLine(f *testing.F) {
	for _, tc := range classifyTests {
		f.Add(tc.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		kind, url := classifyLine(line, "/usr/bin/node")
		if (url != "") != (kind == lineURL) {
			t.Fatalf("kind %v with url %q", kind, url)
		}
		if kind != lineURL {
			return
		}
		if !strings.HasPrefix(line, listeningPrefix+url) {
			t.Fatalf("url %q not at the start of %q", url, line)
		}
		if _, _, disc, err := ParseInspectorAddr(url); err != nil || disc {
			t.Fatalf("url %q refused: %v", url, err)
		}
	})
}
