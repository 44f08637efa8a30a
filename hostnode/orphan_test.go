package hostnode

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestOrphan SIGKILLs a process that started node through Start (this test
// binary re-executed as a helper, see TestMain) and checks that node dies
// with it: the parent-death signal at work.
func TestOrphan(t *testing.T) {
	ctx := testCtx(t)
	helper := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"=orphan", helperScriptEnv+"="+writeScript(t, waitForeverJS))
	helper.Stderr = os.Stderr
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Wait()
	defer helper.Process.Kill()

	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper said nothing: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "PID ")))
	if err != nil {
		t.Fatalf("helper: %q", line)
	}
	assertAlive(t, pid)
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	assertGone(t, pid)
}
