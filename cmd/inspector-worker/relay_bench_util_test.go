//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// spliceEnv makes the test binary, re-executed by BenchmarkRelayCost, run
// only the bare TCP splice in front of the Node inspector at its value: a
// separate process, like the worker, so its CPU and RSS are its own.
const spliceEnv = "IW_RELAY_BENCH_SPLICE_TO"

func init() {
	if to := os.Getenv(spliceEnv); to != "" {
		runSplice(to) // never returns: the benchmark kills it by PID
	}
}

// runSplice is the floor of any separate-process relay: accept, dial Node,
// io.Copy both ways, no WebSocket parsing. Node-side reads re-arm
// TCP_QUICKACK like the worker's own host connection (hostnode.Dial), so the
// floor does not suffer the delayed-ACK stall the worker avoids.
func runSplice(to string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "splice listening on %s\n", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(2)
		}
		go func() {
			defer c.Close()
			up, err := dialBench(context.Background(), to, true)
			if err != nil {
				return
			}
			defer up.Close()
			go io.Copy(up, c)
			io.Copy(c, up)
		}()
	}
}

// quickAckConn re-arms TCP_QUICKACK after every Read (Linux leaves quick-ACK
// mode on its own): the best a client can do against Node's inspector
// socket, which does not set TCP_NODELAY.
type quickAckConn struct {
	net.Conn
	raw syscall.RawConn // Static after construction.
}

func (c *quickAckConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		_ = c.raw.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
		})
	}
	return n, err
}

// dialBench dials addr with TCP_NODELAY (Go's default) and, if quickAck,
// TCP_QUICKACK re-armed after every read.
func dialBench(ctx context.Context, addr string, quickAck bool) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil || !quickAck {
		return c, err
	}
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		c.Close()
		return nil, err
	}
	return &quickAckConn{Conn: c, raw: raw}, nil
}

// benchConn is one DevTools-like window: a raw WebSocket (the cdptest client
// keeps every message, too slow for floods) and its next request id.
type benchConn struct {
	c      *websocket.Conn
	nextID int
}

func dialWindow(b *testing.B, wsURL string, quickAck bool) *benchConn {
	b.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
		return dialBench(ctx, addr, quickAck)
	}}
	c, _, err := websocket.Dial(context.Background(), wsURL, &websocket.DialOptions{
		HTTPClient:      &http.Client{Transport: tr},
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		b.Fatalf("dial %s: %v", wsURL, err)
	}
	c.SetReadLimit(64 << 20)
	b.Cleanup(func() { c.CloseNow() })
	return &benchConn{c: c}
}

// send writes one request and returns its id.
func (w *benchConn) send(b *testing.B, method, params string) int {
	w.nextID++
	msg := fmt.Appendf(nil, `{"id":%d,"method":%q,"params":%s}`, w.nextID, method, params)
	if err := w.c.Write(context.Background(), websocket.MessageText, msg); err != nil {
		b.Fatal(err)
	}
	return w.nextID
}

func (w *benchConn) read(b *testing.B) []byte {
	_, msg, err := w.c.Read(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return msg
}

// readWithin reads one message, or reports false after d of silence (the
// connection is unusable then: the library closes it on a read timeout).
func (w *benchConn) readWithin(b *testing.B, d time.Duration) ([]byte, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, msg, err := w.c.Read(ctx)
	if err != nil && ctx.Err() == nil {
		b.Fatal(err)
	}
	return msg, err == nil
}

// call sends one request and reads until its answer, skipping events.
func (w *benchConn) call(b *testing.B, method, params string) []byte {
	msg, err := w.callErr(method, params)
	if err != nil {
		b.Fatal(err)
	}
	return msg
}

// callErr is call for goroutines other than the benchmark's own, which must
// not call b.Fatal.
func (w *benchConn) callErr(method, params string) ([]byte, error) {
	w.nextID++
	ctx := context.Background()
	msg := fmt.Appendf(nil, `{"id":%d,"method":%q,"params":%s}`, w.nextID, method, params)
	if err := w.c.Write(ctx, websocket.MessageText, msg); err != nil {
		return nil, err
	}
	prefix := fmt.Appendf(nil, `{"id":%d,`, w.nextID)
	for {
		_, msg, err := w.c.Read(ctx)
		if err != nil || bytes.HasPrefix(msg, prefix) {
			return msg, err
		}
	}
}

func isAnswer(msg []byte) bool { return bytes.HasPrefix(msg, []byte(`{"id":`)) }

// procCPU is the CPU time pid's live threads spent on a CPU, in ns
// (/proc/PID/task/*/schedstat, first field): finer than rusage's clock
// ticks, and Go runtime threads do not exit.
func procCPU(pid int) int64 {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum int64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fields := strings.Fields(string(data))
		if len(fields) > 0 {
			ns, _ := strconv.ParseInt(fields[0], 10, 64)
			sum += ns
		}
	}
	return sum
}
