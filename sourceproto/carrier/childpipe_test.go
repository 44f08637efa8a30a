package carrier

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/sourceprototest"
)

// TestChildPipeGrantsOneID: a child's channel opens only the source id it
// was granted; a hello claiming the host's id (or another child's) is
// refused like a wrong role, and the live host source is not replaced.
func TestChildPipeGrantsOneID(t *testing.T) {
	ctx := watchdog(t)
	rec := newRecorder()
	reg := sourceproto.NewRegistry(rec)
	host, _ := newPipe(ctx, t, reg)
	host.open(0)
	for _, tc := range []struct {
		claim string
		ok    bool
	}{{"host", false}, {"child-2", false}, {"child-1", true}} {
		worker, child := net.Pipe()
		done := make(chan error, 1)
		cctx, cancel := context.WithCancel(context.Background())
		go func() { done <- ServeChildPipe(cctx, worker, reg, "child-1", t.Logf) }()
		if d, ok := ctx.Deadline(); ok {
			_ = child.SetDeadline(d)
		}
		p := sourceprototest.New(tc.claim, "")
		p.Role = sourceproto.RoleHost
		r := bufio.NewReader(child)
		if _, err := child.Write(append(p.Hello(t, 0, sourceproto.TopicConsole), '\n')); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("%s: %v", tc.claim, err)
		}
		if tc.ok {
			p.Welcomed(t, line[:len(line)-1])
			if _, ok := reg.Lookup("child-1"); !ok {
				t.Errorf("child-1 not open")
			}
			go io.Copy(io.Discard, r) // the close{shutdown}: net.Pipe does not buffer
			cancel()
			if err := <-done; err != nil {
				t.Errorf("ServeChildPipe: %v", err)
			}
		} else {
			sourceprototest.ExpectReject(t, line[:len(line)-1], sourceproto.RejectUnauthorized)
			if err := <-done; !errors.Is(err, ErrHelloRefused) {
				t.Errorf("%s: ServeChildPipe: %v", tc.claim, err)
			}
			cancel()
		}
		child.Close()
		if info, ok := reg.Lookup("host"); !ok || info.Ref.Gen != 1 {
			t.Fatalf("after a child claimed %q the host source is %+v, %v", tc.claim, info, ok)
		}
	}
}
