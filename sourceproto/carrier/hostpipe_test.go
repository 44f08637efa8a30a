package carrier

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/inspector-worker/inspector-worker/internal/proctest"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/sourceprototest"
)

// pipeRun is ServeHostPipe running on one end of a real socketpair.
type pipeRun struct {
	cancel context.CancelFunc
	done   chan error // ServeHostPipe's result
}

// servePipe starts ServeHostPipe on workerEnd; the test ends it.
func servePipe(t *testing.T, workerEnd net.Conn, reg *sourceproto.Registry) *pipeRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &pipeRun{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- ServeHostPipe(ctx, workerEnd, reg, t.Logf) }()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// result waits for ServeHostPipe to return.
func (r *pipeRun) result(ctx context.Context, t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		return err
	case <-ctx.Done():
		t.Fatal("ServeHostPipe did not return")
		return nil
	}
}

// fakeHost is the test playing the Node host on the child end.
type fakeHost struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
	p    *sourceprototest.Producer
}

// newPipe makes a host channel, serves the worker end and returns the
// child end as a fakeHost.
func newPipe(ctx context.Context, t *testing.T, reg *sourceproto.Registry) (*fakeHost, *pipeRun) {
	t.Helper()
	child, worker, err := NewHostChannel()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.FileConn(child)
	child.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d) // the watchdog: no read or write hangs the test
	}
	p := sourceprototest.New("host", "")
	p.Role = sourceproto.RoleHost
	return &fakeHost{t: t, conn: conn, r: bufio.NewReaderSize(conn, 1<<20), p: p}, servePipe(t, worker, reg)
}

func (h *fakeHost) write(frame []byte) {
	h.t.Helper()
	if _, err := h.conn.Write(append(frame, '\n')); err != nil {
		h.t.Fatalf("host write: %v", err)
	}
}

func (h *fakeHost) read() []byte {
	h.t.Helper()
	line, err := h.r.ReadBytes('\n')
	if err != nil {
		h.t.Fatalf("host read: %v (got %q)", err, line)
	}
	return bytes.TrimSuffix(line, []byte("\n"))
}

// expectEOF reads until the worker hangs up; only the listed frame types
// may come first.
func (h *fakeHost) expectEOF() {
	h.t.Helper()
	if line, err := h.r.ReadBytes('\n'); err == nil || len(line) > 0 {
		h.t.Fatalf("want EOF, got %q, %v", line, err)
	}
}

// open sends the hello and the initial replace.
func (h *fakeHost) open(caps sourceproto.Capability) {
	h.t.Helper()
	h.write(h.p.Hello(h.t, caps, sourceproto.TopicConsole))
	h.p.Welcomed(h.t, h.read())
	h.write(h.p.Replace(h.t, sourceproto.ReplaceInitial))
	sourceprototest.ExpectAck(h.t, h.read(), 0)
}

// hostScript is the Node host's side, written by hand: the frames the
// preload will send, over fd 3, one in flight at a time. It prints every
// line it receives.
const hostScript = `
const net = require('net');
const s = new net.Socket({fd: Number(process.env.INSPECTOR_WORKER_FD), readable: true, writable: true});
s.setEncoding('utf8');
let buf = '';
const lines = [], waiting = [];
s.on('data', (d) => {
  buf += d;
  for (let i; (i = buf.indexOf('\n')) >= 0; ) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    process.stdout.write(line + '\n');
    if (waiting.length) waiting.shift()(line); else lines.push(line);
  }
});
const next = () => new Promise((r) => lines.length ? r(lines.shift()) : waiting.push(r));
const send = (f) => s.write(JSON.stringify(f) + '\n');
(async () => {
  send({v: 1, type: 'hello', source: 'node-host', body: {role: 'host', capabilities: [], topics: ['console'],
        agent: {name: 'carrier-test', version: '0'}}});
  const gen = JSON.parse(await next()).gen;
  send({v: 1, type: 'replace', source: 'node-host', gen, seq: 0, body: {reason: 'initial', items: []}});
  await next();
  send({v: 1, type: 'append', source: 'node-host', gen, seq: 1, body: {items: [
    {console: {type: 'log', args: [{type: 'string', value: 'from node\n"quoted"'}], timestamp: Date.now()}}]}});
  await next();
  s.end();
})();
`

func TestHostPipeNode(t *testing.T) {
	ctx := watchdog(t)
	node := proctest.Node(t)
	rec := newRecorder()
	reg := sourceproto.NewRegistry(rec)
	child, worker, err := NewHostChannel()
	if err != nil {
		t.Fatal(err)
	}
	run := servePipe(t, worker, reg)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, "-e", hostScript)
	cmd.ExtraFiles = []*os.File{child}
	cmd.Env = append(os.Environ(), HostFDEnv+"=3")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child.Close() // the child has it now; our copy would hide its exit
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); proctest.AssertGone(t, pid) })
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node: %v\nstderr: %s", err, stderr.String())
	}
	if err := run.result(ctx, t); err != nil {
		t.Errorf("ServeHostPipe: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("node received %d lines, want welcome and 2 acks:\n%s", len(lines), stdout.String())
	}
	sourceprototest.Expect(t, []byte(lines[0]), sourceproto.FrameWelcome)
	sourceprototest.ExpectAck(t, []byte(lines[1]), 0)
	sourceprototest.ExpectAck(t, []byte(lines[2]), 1)
	evs := rec.waitFor(ctx, t, "closed", has("closed", "node-host", sourceproto.CloseGoingAway))
	if got := kinds(evs); got != "opened replaced appended closed:going-away" {
		t.Errorf("consumer saw %q", got)
	}
	if got := evs[2].Logs; len(got) != 1 || got[0] != "from node\n\"quoted\"" || evs[2].Ref.Role != sourceproto.RoleHost {
		t.Errorf("appended %v", evs[2])
	}
}

// TestHostPipeOverlongLine: a line past MaxFrameBytes is refused while it
// is still being written: the writer cannot get the whole line out.
func TestHostPipeOverlongLine(t *testing.T) {
	ctx := watchdog(t)
	rec := newRecorder()
	h, run := newPipe(ctx, t, sourceproto.NewRegistry(rec))
	h.open(0)

	const lineBytes = 64 << 20 // far more than the socket buffers hold
	written := make(chan int, 1)
	go func() {
		chunk := bytes.Repeat([]byte("x"), 1<<16)
		n := 0
		for n < lineBytes {
			m, err := h.conn.Write(chunk)
			n += m
			if err != nil {
				break
			}
		}
		written <- n
	}()
	r := sourceprototest.ExpectReject(t, h.read(), sourceproto.RejectOversized)
	if r.Limit != "MaxFrameBytes" || r.Max != sourceproto.MaxFrameBytes {
		t.Errorf("reject %+v", r)
	}
	if c := sourceprototest.Expect(t, h.read(), sourceproto.FrameClose).Body.(*sourceproto.Close); c.Code != sourceproto.ClosePolicy {
		t.Errorf("close %+v", c)
	}
	h.expectEOF()
	if n := <-written; n >= lineBytes {
		t.Errorf("the whole %d-byte line was taken; the carrier should have hung up after ~MaxFrameBytes", n)
	}
	if err := run.result(ctx, t); !errors.Is(err, ErrFrameTooLong) {
		t.Errorf("ServeHostPipe: %v, want ErrFrameTooLong", err)
	}
	rec.waitFor(ctx, t, "closed", has("closed", "host", sourceproto.ClosePolicy))
}

// TestHostPipeFrameAtLimit: a frame of exactly MaxFrameBytes (newline not
// counted) is a frame, one byte more is refused.
func TestHostPipeFrameAtLimit(t *testing.T) {
	ctx := watchdog(t)
	h, run := newPipe(ctx, t, sourceproto.NewRegistry(nil))
	h.open(0)
	f := h.p.Append(t, sourceprototest.Log("big"))
	f = append(f, bytes.Repeat([]byte(" "), sourceproto.MaxFrameBytes-len(f))...) // JSON allows trailing space
	h.write(f)
	sourceprototest.ExpectAck(t, h.read(), 1)
	f = h.p.Append(t, sourceprototest.Log("too big"))
	f = append(f, bytes.Repeat([]byte(" "), sourceproto.MaxFrameBytes+1-len(f))...)
	h.write(f)
	sourceprototest.ExpectReject(t, h.read(), sourceproto.RejectOversized)
	sourceprototest.Expect(t, h.read(), sourceproto.FrameClose)
	h.expectEOF()
	if err := run.result(ctx, t); !errors.Is(err, ErrFrameTooLong) {
		t.Errorf("ServeHostPipe: %v", err)
	}
}

func TestHostPipeEOFClosesSource(t *testing.T) {
	ctx := watchdog(t)
	rec := newRecorder()
	h, run := newPipe(ctx, t, sourceproto.NewRegistry(rec))
	h.open(0)
	h.write(h.p.Append(t, sourceprototest.Log("a"), sourceprototest.Log("b")))
	sourceprototest.ExpectAck(t, h.read(), 2)
	h.conn.Close()
	if err := run.result(ctx, t); err != nil {
		t.Errorf("ServeHostPipe after EOF: %v", err)
	}
	evs := rec.waitFor(ctx, t, "closed", has("closed", "host", ""))
	if got := kinds(evs); got != "opened replaced appended closed:going-away" {
		t.Errorf("consumer saw %q", got)
	}
}

// TestHostPipeTruncatedFrameAtEOF: the host died mid-frame; nothing of it
// is delivered, the source closes as going away.
func TestHostPipeTruncatedFrameAtEOF(t *testing.T) {
	ctx := watchdog(t)
	rec := newRecorder()
	h, run := newPipe(ctx, t, sourceproto.NewRegistry(rec))
	h.open(0)
	f := h.p.Append(t, sourceprototest.Log("never"))
	if _, err := h.conn.Write(f[:len(f)/2]); err != nil {
		t.Fatal(err)
	}
	h.conn.Close()
	if err := run.result(ctx, t); err != nil {
		t.Errorf("ServeHostPipe: %v", err)
	}
	evs := rec.waitFor(ctx, t, "closed", has("closed", "host", ""))
	if got := kinds(evs); got != "opened replaced closed:going-away" {
		t.Errorf("consumer saw %q", got)
	}
}

func TestHostPipeShutdown(t *testing.T) {
	ctx := watchdog(t)
	rec := newRecorder()
	h, run := newPipe(ctx, t, sourceproto.NewRegistry(rec))
	h.open(0)
	run.cancel()
	c := sourceprototest.Expect(t, h.read(), sourceproto.FrameClose).Body.(*sourceproto.Close)
	if c.Code != sourceproto.CloseShutdown {
		t.Errorf("close %+v", c)
	}
	h.expectEOF()
	if err := run.result(ctx, t); err != nil {
		t.Errorf("ServeHostPipe: %v", err)
	}
	rec.waitFor(ctx, t, "closed", has("closed", "host", sourceproto.CloseShutdown))
}

func TestHostPipeHelloRefused(t *testing.T) {
	ctx := watchdog(t)
	rec := newRecorder()
	h, run := newPipe(ctx, t, sourceproto.NewRegistry(rec))
	h.p.Role = sourceproto.RoleClient // the pipe grants only the host role
	h.write(h.p.Hello(t, 0, sourceproto.TopicConsole))
	sourceprototest.ExpectReject(t, h.read(), sourceproto.RejectUnauthorized)
	h.expectEOF()
	if err := run.result(ctx, t); !errors.Is(err, ErrHelloRefused) || !errors.Is(err, sourceproto.ErrUnauthorized) {
		t.Errorf("ServeHostPipe: %v", err)
	}
	if evs := rec.snapshot(); len(evs) != 0 {
		t.Errorf("consumer saw %s", dump(evs))
	}
}

// TestHostPipeSendOverflow: while the host does not read, worker frames
// beyond the send limit are refused with ErrQueueFull and the pipe stays
// up; once the host reads again, everything queued arrives in order and
// Send works again.
func TestHostPipeSendOverflow(t *testing.T) {
	ctx := watchdog(t)
	reg := sourceproto.NewRegistry(nil)
	h, _ := newPipe(ctx, t, reg)
	h.open(sourceproto.CapRuntime)
	info, _ := reg.Lookup("host")
	expr := strings.Repeat("x", 60<<10)
	send := func(id uint64) error {
		return reg.Send(info.Ref, &sourceproto.RuntimeCommand{Session: "s1", ID: id, Method: sourceproto.MethodEvaluate,
			Evaluate: &sourceproto.EvaluateParams{Expression: expr}})
	}
	var id uint64
	for {
		id++
		err := send(id)
		if errors.Is(err, ErrQueueFull) {
			break
		}
		if err != nil || id > 100_000 {
			t.Fatalf("send %d: %v", id, err)
		}
	}
	for want := uint64(1); want < id; want++ {
		f := sourceprototest.Expect(t, h.read(), sourceproto.FrameRuntimeCommand)
		if got := f.Body.(*sourceproto.RuntimeCommand).ID; got != want {
			t.Fatalf("command %d arrived as %d", want, got)
		}
	}
	if err := send(id + 1); err != nil {
		t.Fatalf("send after draining: %v", err)
	}
	sourceprototest.Expect(t, h.read(), sourceproto.FrameRuntimeCommand)
	h.write(h.p.Append(t, sourceprototest.Log("still flowing")))
	sourceprototest.ExpectAck(t, h.read(), 1)
}

// TestHostPipeRepliesNotRead: a host that writes appends without reading
// its acks breaks the one-in-flight rule; the worker hangs up once the
// replies pass their limit instead of buffering without bound.
func TestHostPipeRepliesNotRead(t *testing.T) {
	ctx := watchdog(t)
	rec := newRecorder()
	h, run := newPipe(ctx, t, sourceproto.NewRegistry(rec))
	h.open(0)
	for i := 0; ; i++ {
		if _, err := h.conn.Write(append(h.p.Append(t, sourceprototest.Log("spam")), '\n')); err != nil {
			break // the worker hung up
		}
		if i > 10_000_000 {
			t.Fatal("the worker never hung up")
		}
	}
	if err := run.result(ctx, t); !errors.Is(err, ErrPolicy) {
		t.Errorf("ServeHostPipe: %v, want ErrPolicy", err)
	}
	rec.waitFor(ctx, t, "closed", has("closed", "host", sourceproto.ClosePolicy))
}

func TestNewHostChannelCloseOnExec(t *testing.T) {
	child, worker, err := NewHostChannel()
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	defer worker.Close()
	raw, err := worker.(*net.UnixConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for name, fd := range map[string]uintptr{"child": child.Fd()} {
		if flags := fcntlGetFD(t, fd); flags&syscall.FD_CLOEXEC == 0 {
			t.Errorf("%s end is inherited by every exec", name)
		}
	}
	_ = raw.Control(func(fd uintptr) {
		if flags := fcntlGetFD(t, fd); flags&syscall.FD_CLOEXEC == 0 {
			t.Error("worker end is inherited by every exec")
		}
	})
}

func fcntlGetFD(t *testing.T, fd uintptr) uintptr {
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFD, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	return flags
}
