//go:build unix

package browserrealm

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// reaperScript stops a started browser when the worker dies without
// closing it (SIGKILL, a crash): $1 is the browser's process group, $2
// its profile. It ignores the signals a terminal or a stopping worker
// sends and reads one line from a pipe only the worker writes: "done"
// (the worker closed the browser itself) exits; EOF (the worker is gone)
// kills the group and removes the profile. The same design as hostnode's
// orphan reaper for the host (docs/agent-note.md "Host lifecycle").
const reaperScript = `trap '' HUP INT QUIT TERM TSTP TTIN TTOU
IFS= read -r line
[ "$line" = done ] && exit 0
kill -s KILL -- "-$1" 2>/dev/null
rm -rf -- "$2"
exit 0`

// reaper is the /bin/sh process of reaperScript; tell is its stdin's
// write end, nil once released.
type reaper struct {
	cmd  *exec.Cmd
	tell *os.File
}

func startReaper(pgid int, profile string) (*reaper, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", reaperScript, "browser-reaper", strconv.Itoa(pgid), profile)
	cmd.Stdin = r
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // outlives the worker, away from the terminal's signals
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	r.Close()
	go func() { _ = cmd.Wait() }()
	return &reaper{cmd: cmd, tell: w}, nil
}

// release tells the reaper the worker closed the browser itself.
func (r *reaper) release() {
	if r == nil || r.tell == nil {
		return
	}
	_, _ = r.tell.WriteString("done\n")
	r.tell.Close()
	r.tell = nil
}
