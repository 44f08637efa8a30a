package hostnode

import (
	"bufio"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// claimOver dials s and sends line; it returns the first line answered
// ("" when the server closed without answering).
func claimOver(t *testing.T, s *ClaimServer, line string) string {
	t.Helper()
	c, err := net.Dial("unix", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, line) // an oversized line may meet a closed socket
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	answer, _ := bufio.NewReader(c).ReadString('\n')
	return answer
}

// The first valid claim gets the host, later ones are told "child"; only
// the host's pid may open the host channel, once, and what it wrote after
// its line reaches the reader.
func TestClaimServer(t *testing.T) {
	s, err := NewClaimServer()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fi, err := os.Stat(s.Dir()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("claim directory %v, %v: want mode 0700", fi, err)
	}
	if got := claimOver(t, s, `{"kind":"claim","pid":7,"url":"not a url"}`+"\n"); got != "child\n" {
		t.Fatalf("a claim without an inspector URL was answered %q, want child", got)
	}
	if got := claimOver(t, s, strings.Repeat("x", maxClaimLine+10)); got != "" {
		t.Fatalf("an oversized line was answered %q", got)
	}
	if got := claimOver(t, s, `{"kind":"claim","pid":10,"ppid":1,"argv":["node","a.js"],"url":"ws://127.0.0.1:1/x"}`+"\n"); got != "host\n" {
		t.Fatalf("the first claim was answered %q, want host", got)
	}
	if got := claimOver(t, s, `{"kind":"claim","pid":11,"url":"ws://127.0.0.1:2/y"}`+"\n"); got != "child\n" {
		t.Fatalf("the second claim was answered %q, want child", got)
	}
	select {
	case c := <-s.Claims():
		if c.PID != 10 || c.URL != "ws://127.0.0.1:1/x" || len(c.Argv) != 2 {
			t.Fatalf("claim %+v", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no claim delivered")
	}
	if got := claimOver(t, s, `{"kind":"pipe","pid":11}`+"\n"); got != "" {
		t.Fatalf("a pipe from another pid was answered %q", got)
	}
	c, err := net.Dial("unix", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, `{"kind":"pipe","pid":10}`+"\n"+`{"hello":1}`+"\n")
	select {
	case p := <-s.Pipe():
		defer p.Close()
		line, err := bufio.NewReader(p).ReadString('\n')
		if err != nil || line != `{"hello":1}`+"\n" {
			t.Fatalf("the host channel read %q, %v", line, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no host channel delivered")
	}
	s.Close()
	if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
		t.Fatalf("Close left the directory: %v", err)
	}
}
