package hostnode

import (
	"net"
	"syscall"
	"testing"
)

func quickAck(t *testing.T, raw syscall.RawConn) int {
	t.Helper()
	var v int
	var err error
	if cerr := raw.Control(func(fd uintptr) {
		v, err = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK)
	}); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func setQuickAck(t *testing.T, raw syscall.RawConn, v int) {
	t.Helper()
	if err := raw.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, v)
	}); err != nil {
		t.Fatal(err)
	}
}

// TestQuickAckRearmedAfterRead: the kernel drops quick-ACK mode by itself;
// every Read must switch it on again.
func TestQuickAckRearmedAfterRead(t *testing.T) {
	ctx := testCtx(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.Write([]byte("a"))
		buf := make([]byte, 1)
		c.Read(buf) // wait for the client's go-ahead
		c.Write([]byte("b"))
		c.Read(buf) // until the client closes
	}()
	conn, err := dialQuickAck(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	qc, ok := conn.(*quickAckConn)
	if !ok {
		t.Fatalf("dialQuickAck returned %T", conn)
	}
	if quickAck(t, qc.raw) != 1 {
		t.Error("TCP_QUICKACK not set at dial")
	}
	buf := make([]byte, 1)
	for _, want := range []string{"a", "b"} {
		setQuickAck(t, qc.raw, 0)
		if n, err := conn.Read(buf); err != nil || string(buf[:n]) != want {
			t.Fatalf("Read = %q, %v", buf[:n], err)
		}
		if quickAck(t, qc.raw) != 1 {
			t.Errorf("TCP_QUICKACK not re-armed after reading %q", want)
		}
		conn.Write([]byte("k"))
	}
}
