package trace

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// maxChildMapBytes bounds the source-map bytes read for ONE followed child
// (the program has maxSessionMapBytes): a child usually runs the program's
// own code, whose maps it reads again, and up to DefaultMaxFollowed children
// must not multiply the session's budget by 17.
const maxChildMapBytes = 16 << 20

// follower is the engine's one inspector session to a followed child: the
// same capture as the program's (control.go), its events tagged with the
// child's pid, its positions mapped by a mapper of its own.
//
// Goroutines: readLoop (decodes, stores events) and controlLoop (the only
// writer; attaches, resumes every pause, closes the socket at the child's
// end or the session's). The child ends its own session at exit (the
// preload closes its inspector after the program's 'exit' listeners).
type follower struct {
	s   *session // Static after construction.
	pid int      // Static after construction.
	// sharesStderr: the child writes to the program's stderr pipe. Static
	// after construction.
	sharesStderr bool
	conn         *websocket.Conn // Static after construction; written by controlLoop only.
	m            *mapper         // Owned by readLoop.

	responses chan cdpResponse // readLoop → controlLoop
	pauses    chan struct{}    // readLoop → controlLoop, coalesced
	discards  chan struct{}    // readLoop → controlLoop, coalesced
	ended     chan struct{}    // readLoop → controlLoop: the child's main context is gone
	readDone  chan struct{}    // closed when readLoop ended
	quit      chan struct{}    // closed by stop, once
	quitOnce  sync.Once
	done      chan struct{} // closed when controlLoop ended and the bookkeeping is done

	reads     atomic.Int64 // messages read (readLoop writes, drain reads)
	early     atomic.Int64 // user scripts reported before Debugger.enable's answer; -1 until it came
	consoles  int          // Owned by readLoop.
	scripts   int          // Owned by readLoop: user scripts reported so far.
	nextID    int64        // Owned by controlLoop.
	attachErr error        // Owned by controlLoop.
}

func newFollower(s *session, pid int, conn *websocket.Conn) *follower {
	m := newMapper(s.eng.root, s.preload)
	m.budget = maxChildMapBytes
	f := &follower{s: s, pid: pid, conn: conn, m: m,
		responses: make(chan cdpResponse, responseQueue),
		pauses:    make(chan struct{}, 1), discards: make(chan struct{}, 1), ended: make(chan struct{}, 1),
		readDone: make(chan struct{}), quit: make(chan struct{}), done: make(chan struct{}), nextID: cmdNext}
	f.early.Store(-1)
	return f
}

// stop ends the follower (the session ends); safe to call more than once.
func (f *follower) stop() { f.quitOnce.Do(func() { close(f.quit) }) }

func (f *follower) readLoop() {
	defer f.s.eng.wg.Done()
	defer close(f.readDone)
	for {
		_, msg, err := f.conn.Read(context.Background()) // ends when controlLoop closes the socket
		if err != nil {
			return
		}
		f.reads.Add(1)
		ev, resp, n := decodeMessage(f.m, msg)
		if resp != nil {
			if resp.id == cmdDebuggerEnable {
				// Debugger.enable first reports every script already
				// parsed: a user script among them ran before the attach.
				f.early.Store(int64(f.scripts))
			}
			select {
			case f.responses <- *resp:
			default:
			}
		}
		switch n {
		case noticePaused:
			signal(f.pauses)
		case noticeMainGone:
			signal(f.ended)
		case noticeConsole:
			if f.consoles++; f.consoles%discardEvery == 0 {
				signal(f.discards)
			}
		}
		switch {
		case ev != nil && ev.child != nil:
			f.s.childReport(f.pid, *ev.child)
		case ev != nil:
			if ev.Kind == KindScript {
				f.scripts++
			}
			if ev.Kind == KindException && f.sharesStderr {
				// Node reports only fatal exceptions, then prints "Waiting
				// for the debugger to disconnect..." on the child's stderr.
				f.s.stderr.expectWaiting()
			}
			ev.PID = f.pid
			f.s.add(*ev)
		}
	}
}

// controlLoop attaches, reports the outcome on attached, then serves the
// child until it ends or the session does.
func (f *follower) controlLoop(attachCtx context.Context, attached chan<- error) {
	defer f.s.eng.wg.Done()
	defer f.end()
	if err := f.attach(attachCtx); err != nil {
		f.attachErr = err
		attached <- err
		return
	}
	if n := f.early.Load(); n > 0 {
		f.s.markPartial(f.pid, int(n))
	}
	attached <- nil
	for {
		select {
		case <-f.quit:
			return
		case <-f.s.ctx.Done():
			return
		case <-f.readDone:
			return
		case <-f.ended:
			// The child's preload normally closes its inspector at exit;
			// when it could not (the child ended otherwise), Node waits
			// for the engine: read what is left, then let it go.
			f.drain()
			return
		case <-f.pauses:
			f.command("Debugger.resume") // a followed child is never left paused
		case <-f.discards:
			f.command("Runtime.discardConsoleEntries")
		case <-f.responses:
		}
	}
}

// attach enables the two domains; the child's code runs only after the
// registration is answered, so nothing of it is missed.
func (f *follower) attach(ctx context.Context) error {
	for _, st := range []struct {
		id     int64
		method string
	}{{cmdRuntimeEnable, "Runtime.enable"}, {cmdDebuggerEnable, "Debugger.enable"}} {
		if err := f.send(ctx, st.id, st.method); err != nil {
			return err
		}
	}
	for pending := 2; pending > 0; {
		select {
		case r := <-f.responses:
			if r.id > cmdDebuggerEnable {
				continue
			}
			if r.err != "" {
				return fmt.Errorf("%w: %s", errFollowRefused, r.err)
			}
			pending--
		case <-f.readDone:
			return errors.New("the child's inspector closed the connection during the attach")
		case <-f.quit:
			return errors.New("the trace ended during the attach")
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// drain reads until the probe's answer (everything the child sent before
// is then read), bounded like the program's (control.drain).
func (f *follower) drain() {
	id := f.command("Runtime.getIsolateId")
	timer := time.NewTimer(drainIdle)
	defer timer.Stop()
	seen := f.reads.Load()
	for {
		select {
		case r := <-f.responses:
			if r.id == id {
				return
			}
		case <-f.readDone:
			return
		case <-f.quit:
			return
		case <-f.s.ctx.Done():
			return
		case <-timer.C:
			now := f.reads.Load()
			if now == seen {
				return
			}
			seen = now
			timer.Reset(drainIdle)
		}
	}
}

func (f *follower) command(method string) int64 {
	id := f.nextID
	f.nextID++
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	_ = f.send(ctx, id, method)
	return id
}

func (f *follower) send(ctx context.Context, id int64, method string) error {
	msg := `{"id":` + strconv.FormatInt(id, 10) + `,"method":"` + method + `","params":{}}`
	if err := f.conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		return fmt.Errorf("send %s: %w", method, err)
	}
	return nil
}

// end closes the socket, waits for readLoop, and frees the child's slot.
func (f *follower) end() {
	_ = f.conn.CloseNow()
	<-f.readDone
	f.s.followerEnded(f)
	close(f.done)
}
