package hostnode

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ClaimSocketEnv names the Unix socket of a ClaimServer in the environment
// of a command `run` starts as is (npm run dev, npx vite, .bin shims): the
// preload of each Node process of that command that is not a package
// manager or a known launcher claims the host role on it
// (client/js/preload.in.cjs claimHost).
const ClaimSocketEnv = "INSPECTOR_WORKER_HOST_SOCKET"

const (
	// maxClaimLine bounds a claim's one JSON line: pid, ppid, argv and the
	// inspector URL. An argv of 64 KiB is far beyond any real command line
	// the worker wants to show.
	maxClaimLine = 64 << 10
	// claimReadTimeout is how long a connection may take to send its line;
	// a claimant writes it at once.
	claimReadTimeout = 5 * time.Second
	// maxClaimConns bounds the connections handled at once. Each Node
	// process of the command makes one (two for the host); past the bound a
	// connection is closed unanswered and its process runs as a child.
	maxClaimConns = 64
)

// Claim is what the first claimant (the host) said about itself.
type Claim struct {
	PID  int      `json:"pid"`
	PPID int      `json:"ppid"`
	Argv []string `json:"argv"`
	URL  string   `json:"url"` // its inspector, ws://127.0.0.1:PORT/UUID
}

// claimLine is one connection's first line: kind "claim" asks for the host
// role (answered "host" or "child"); kind "pipe" is the host's host channel
// (docs/protocol.md), the rest of the connection.
type claimLine struct {
	Kind string `json:"kind"`
	Claim
}

// ClaimServer hands the host role of a command to its first Node process
// that claims it, and takes that process's host channel. Its socket lives in
// a private directory (mode 0700): only this user's processes can reach it,
// the same trust a pipe on fd 3 gives.
//
// Goroutines: acceptLoop, and one handler per connection (at most
// maxClaimConns), each ending within claimReadTimeout.
type ClaimServer struct {
	ln     net.Listener  // Static after construction.
	dir    string        // Static after construction.
	claims chan Claim    // capacity 1: the one host claim
	pipes  chan net.Conn // capacity 1: the one host channel
	sem    chan struct{} // maxClaimConns slots

	mu        sync.Mutex // Lock order: see docs/locks.md.
	hostPID   int        // Guarded by mu: 0 until a claim was granted.
	pipeTaken bool       // Guarded by mu.
}

// NewClaimServer listens on a new socket in a new private temp directory.
func NewClaimServer() (*ClaimServer, error) {
	dir, err := os.MkdirTemp("", "inspector-worker-host-*")
	if err != nil {
		return nil, fmt.Errorf("hostnode: cannot create the host claim socket's directory: %w", err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("hostnode: cannot listen for the host claim: %w", err)
	}
	s := &ClaimServer{ln: ln, dir: dir, claims: make(chan Claim, 1), pipes: make(chan net.Conn, 1),
		sem: make(chan struct{}, maxClaimConns)}
	go s.acceptLoop()
	return s, nil
}

// Path is the socket, for ClaimSocketEnv.
func (s *ClaimServer) Path() string { return s.ln.Addr().String() }

// Dir is the private directory, for Options.RemoveIfOrphaned.
func (s *ClaimServer) Dir() string { return s.dir }

// Claims delivers the one granted claim.
func (s *ClaimServer) Claims() <-chan Claim { return s.claims }

// Pipe delivers the host's host channel, once.
func (s *ClaimServer) Pipe() <-chan net.Conn { return s.pipes }

// Reopen makes the host role free again once the host has ended: the next
// claim gets it (a launcher restarting the app, a script's next step). A
// host channel the old host opened too late to be taken is closed.
func (s *ClaimServer) Reopen() {
	s.mu.Lock()
	s.hostPID, s.pipeTaken = 0, false
	s.mu.Unlock()
	select {
	case c := <-s.pipes:
		c.Close()
	default:
	}
}

// Close stops listening and removes the directory. Claims made after it
// fail, and their processes run as children.
func (s *ClaimServer) Close() {
	s.ln.Close()
	os.RemoveAll(s.dir)
}

func (s *ClaimServer) acceptLoop() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		select {
		case s.sem <- struct{}{}:
			go func() {
				defer func() { <-s.sem }()
				s.handle(c)
			}()
		default:
			c.Close() // overflow: the claimant runs as a child
		}
	}
}

// handle reads one line and answers it.
func (s *ClaimServer) handle(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(claimReadTimeout))
	br := bufio.NewReaderSize(c, maxClaimLine)
	line, err := br.ReadSlice('\n')
	var l claimLine
	if err != nil || json.Unmarshal(line, &l) != nil || l.PID <= 0 {
		c.Close()
		return
	}
	switch l.Kind {
	case "claim":
		granted := false
		s.mu.Lock()
		if s.hostPID == 0 && strings.HasPrefix(l.URL, "ws://") {
			s.hostPID, granted = l.PID, true
		}
		s.mu.Unlock()
		answer := "child\n"
		if granted {
			answer = "host\n"
		}
		// The answer is written before the claim is delivered: the
		// claimant reads it before the worker releases its main thread.
		_ = c.SetWriteDeadline(time.Now().Add(claimReadTimeout))
		_, _ = c.Write([]byte(answer))
		c.Close()
		if granted {
			s.claims <- l.Claim // capacity 1, granted once
		}
	case "pipe":
		s.mu.Lock()
		ok := l.PID == s.hostPID && !s.pipeTaken
		s.pipeTaken = s.pipeTaken || ok
		s.mu.Unlock()
		if !ok {
			c.Close()
			return
		}
		_ = c.SetReadDeadline(time.Time{})
		s.pipes <- &bufferedConn{Conn: c, r: br} // capacity 1, taken once
	default:
		c.Close()
	}
}

// bufferedConn reads what its bufio.Reader holds first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// SignalGroup delivers sig to the process's whole group, as a terminal
// does for Ctrl-C: for a command started as is (npm, a shell), whose own
// handling of a signal is not known. After the child exited it returns an
// error.
func (p *Process) SignalGroup(sig os.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return fmt.Errorf("hostnode: signal %v to the group of pid %d: %w", sig, p.PID(), os.ErrProcessDone)
	}
	return signalGroup(p.PID(), sig)
}
