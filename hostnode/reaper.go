//go:build unix

package hostnode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
)

// reaperShell runs the orphan reaper. POSIX puts a shell there on every Unix;
// a system without one gets an error from Start that names it. A variable
// only so that a test can point it at a missing file.
var reaperShell = "/bin/sh"

// reaperScript is the orphan reaper: $1 is node's process group id, the rest
// are paths to remove. It ignores every signal a terminal or a stopping
// worker could send, and reads one line from a pipe whose only write end the
// worker holds:
//
//   - "done": the worker saw node exit and killed the group itself (while
//     node was still an unreaped zombie, so the id was not reused); nothing
//     is left to do, and the reaper never signals a group id that may since
//     belong to a stranger.
//   - EOF: the worker died without saying so (SIGKILL, a crash, os.Exit).
//     The parent-death signal killed node but not node's children: the
//     reaper kills the group and removes the paths.
//
// kill -s KILL -- -PGID is the POSIX spelling; dash rejects kill -KILL -- -PGID.
const reaperScript = `trap '' HUP INT QUIT TERM TSTP TTIN TTOU
IFS= read -r line
[ "$line" = done ] && exit 0
kill -s KILL -- "-$1" 2>/dev/null
shift
[ $# -gt 0 ] && rm -rf -- "$@"
exit 0`

// reaperDone is the line that tells the reaper to exit without acting.
const reaperDone = "done\n"

// orphanReaper is the tiny /bin/sh process that cleans up after a worker that
// died without reaping node (see reaperScript). It lives in its own process
// group without a parent-death signal, so it outlives the worker, and holds
// none of the worker's output pipes, so it never delays a reader's EOF.
//
// Owned by waitLoop once spawn returned.
type orphanReaper struct {
	cmd  *exec.Cmd
	tell *os.File // write end of the reaper's stdin; nil once released
}

// startReaper starts the reaper for node's process group pgid. paths are
// made absolute here: the reaper runs in /.
func startReaper(pgid int, paths []string) (*orphanReaper, error) {
	args := []string{reaperShell, "-c", reaperScript, "hostnode-reaper", strconv.Itoa(pgid)}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("Options.RemoveIfOrphaned %q: %w", p, err)
		}
		args = append(args, abs)
	}
	// os.Pipe sets O_CLOEXEC on both ends: node and anything else this
	// process starts never inherit the write end, so the reaper sees EOF
	// exactly when the worker is gone.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("cannot start the orphan reaper: %w", err)
	}
	defer r.Close() // the reaper holds its own copy
	cmd := &exec.Cmd{
		Path: reaperShell, Args: args, Dir: "/", Env: []string{"PATH=/bin:/usr/bin"},
		Stdin: r, // Stdout and Stderr nil: /dev/null
		// Its own group: a Ctrl-C on the worker's terminal and a kill of
		// node's group both miss it. No Pdeathsig: it must outlive the worker.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("cannot start the orphan reaper %s (it kills node's children if this process dies; "+
			"hostnode needs a POSIX shell there): %w", reaperShell, err)
	}
	return &orphanReaper{cmd: cmd, tell: w}, nil
}

// release tells the reaper to exit without acting. Call it only once node's
// group was killed or node was reaped: from then on a group kill by the
// reaper could hit a reused id. Idempotent.
func (r *orphanReaper) release() {
	if r.tell == nil {
		return
	}
	// An error means the reaper is already gone (someone killed it);
	// wait reaps it either way.
	_, _ = r.tell.WriteString(reaperDone)
	r.tell.Close()
	r.tell = nil
}

// wait releases the reaper if that did not happen yet and reaps it.
func (r *orphanReaper) wait() {
	r.release()
	_ = r.cmd.Wait()
}

// pid is the reaper's process id (tests check that it is gone).
func (r *orphanReaper) pid() int { return r.cmd.Process.Pid }
