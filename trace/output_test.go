package trace

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func newTestSession(maxEvents int) *session {
	e := New(Options{Workspace: "/", MaxEvents: maxEvents})
	return newSession(e, "tr-test", "/ws/app.js", "/ws", "/usr/bin/node", "", false, nil, "")
}

func TestOutputWriter(t *testing.T) {
	s := newTestSession(100)
	defer s.cancel()
	w := s.stderr
	for _, chunk := range []string{
		"Debugger listening on ws://127.0.0.1:1/x\nFor help, see: https://nodejs.org/en/docs/inspector\n",
		"Debugger attached.\nfirst li", "ne\r\n", strings.Repeat("z", 3*maxLineBytes), "\nWaiting for the debugger to disconnect...\n",
		"partial",
	} {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	w.flush()
	d := s.detail()
	var lines []string
	for _, ev := range d.Events {
		lines = append(lines, ev.Detail)
		if ev.Kind != KindOutput || ev.Subtype != "stderr" {
			t.Errorf("event %+v", ev)
		}
	}
	// "Waiting …" was followed by more output: it is the target's line.
	if len(lines) != 4 || lines[0] != "first line" || !d.Events[1].Truncated || len([]rune(lines[1])) != maxLineChars ||
		lines[2] != "Waiting for the debugger to disconnect..." || lines[3] != "partial" {
		t.Errorf("lines = %.80q", lines)
	}
	if strings.Contains(d.StderrTail, "Debugger") || !strings.HasPrefix(d.StderrTail, "first line\n") {
		t.Errorf("tail = %.80q", d.StderrTail)
	}
}

// TestOutputBannersByPosition: Node's banners are dropped only where Node
// prints them (the first lines, the last lines); the same text anywhere else
// is the target's and passes through.
func TestOutputBannersByPosition(t *testing.T) {
	const (
		listen = "Debugger listening on ws://127.0.0.1:1/x"
		help   = "For help, see: https://nodejs.org/en/docs/inspector"
		wait   = "Waiting for the debugger to disconnect..."
		ending = "Debugger ending on ws://127.0.0.1:1/x"
	)
	cases := []struct {
		name string
		in   []string
		want []string
	}{
		{"node's own only", []string{listen, help, "Debugger attached.", wait, ending, help}, nil},
		{"target between", []string{listen, help, "Debugger attached.", "a", listen, wait, "b", wait, ending, help},
			[]string{"a", listen, wait, "b"}},
		{"target ends with wait then more", []string{listen, help, "Debugger attached.", wait, ending, "c", wait},
			[]string{wait, ending, "c"}},
		{"start banner out of place", []string{"x", listen, help, "Debugger attached."},
			[]string{"x", listen, help, "Debugger attached."}},
		{"wait restarts a held run", []string{wait, wait, ending}, []string{wait}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSession(100)
			defer s.cancel()
			for _, l := range tc.in {
				_, _ = s.stderr.Write([]byte(l + "\n"))
			}
			s.stderr.flush()
			var got []string
			for _, ev := range s.detail().Events {
				got = append(got, ev.Detail)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("lines = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStderrTailBounded(t *testing.T) {
	s := newTestSession(100)
	defer s.cancel()
	for i := range 2000 {
		s.addOutput("stderr", strings.Repeat("é", i%50), false)
	}
	s.addOutput("stderr", "last words", false)
	tail := s.detail().StderrTail
	if len(tail) > stderrTailChars || !strings.HasSuffix(tail, "last words\n") || !utf8.ValidString(tail) {
		t.Errorf("tail: %d bytes, ends %q", len(tail), tail[max(0, len(tail)-20):])
	}
}

func TestEventRing(t *testing.T) {
	s := newTestSession(3)
	defer s.cancel()
	for i := range 5 {
		s.add(Event{Kind: KindConsole, Detail: string(rune('a' + i))})
	}
	d := s.detail()
	if d.Session.Events != 3 || d.Session.DroppedEvents != 2 || !d.Session.Truncated ||
		d.Events[0].Seq != 3 || d.Events[0].Detail != "c" || d.Events[2].Seq != 5 {
		t.Errorf("ring: %+v, first %+v", d.Session, d.Events[0])
	}
}
