package hostnode

import (
	"syscall"
	"time"
)

// Stop ends node the way a watcher restarting it should: SIGTERM to its
// whole process group (so the app's own shutdown handlers run, and its
// children get the same chance), then, if node has not exited within grace,
// SIGKILL to the group (Kill). It returns once Done is closed. A node that
// already exited is left alone: waitLoop killed its group then.
func (p *Process) Stop(grace time.Duration) {
	p.mu.Lock()
	if !p.exited {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	}
	p.mu.Unlock()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.Kill()
	}
}
