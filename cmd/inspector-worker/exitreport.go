package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
)

// The exit report: the host preload (client/js/preload.cjs) writes
// "exit N\n" to fd exitReportFD from its process 'exit' listener, i.e. the
// code the app asked for. `run` needs it for one case only: a host that hangs
// in Node's inspector teardown after its script finished (seen after
// process.exit() inside a DevTools evaluation, a Node bug) is ended by the
// worker, and `run` must still exit with the code the app chose, not 137.
const (
	exitReportFD  = 4
	exitReportEnv = "INSPECTOR_WORKER_EXIT_FD"
	// maxExitReport bounds what is read from the pipe: a few report lines;
	// anything longer is not the preload's.
	maxExitReport = 4096
)

type exitReport struct {
	r, w *os.File // r: ours, read by readLoop; w: the host's fd 4, closed once it started.

	// Lock order: see docs/locks.md.
	mu   sync.Mutex
	code int  // Guarded by mu: the last code reported.
	ok   bool // Guarded by mu: a code was reported.
}

func newExitReport() (*exitReport, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	e := &exitReport{r: r, w: w}
	go e.readLoop()
	return e, nil
}

// readLoop ends when the pipe ends (every copy of the write end closed) or
// close closes r.
func (e *exitReport) readLoop() {
	sc := bufio.NewScanner(e.r)
	sc.Buffer(make([]byte, 0, 64), maxExitReport)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "exit ")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(rest); err == nil {
			e.mu.Lock()
			e.code, e.ok = n&0xff, true // what the OS makes of process.exit(300) or (-1)
			e.mu.Unlock()
		}
	}
}

// reported is the code the host asked for, if its preload said so.
func (e *exitReport) reported() (int, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.code, e.ok
}

// started drops the worker's copy of the host's end.
func (e *exitReport) started() { e.w.Close() }

func (e *exitReport) close() {
	e.w.Close()
	e.r.Close()
}
