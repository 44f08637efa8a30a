package cdpserver

import (
	"context"
	"testing"

	cdptarget "github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
)

// TestChromedpRemoteAllocator: chromedp's remote allocator, given the
// worker's HTTP address, finds the browser endpoint through /json/version,
// lists the targets and evaluates in the combined target (the host).
// Leaving (cancelling the contexts) leaves the host running.
func TestChromedpRemoteAllocator(t *testing.T) {
	w := startWorker(t, hostScript, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), cdptest.Timeout)
	defer cancel()
	allocCtx, cancelAlloc := remote.NewAllocator(ctx, "http://"+w.srv.Addr())
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
	defer cancelBrowser()
	targets, err := chromedp.Targets(bctx)
	if err != nil {
		t.Fatalf("chromedp.Targets: %v", err)
	}
	found := false
	for _, ti := range targets {
		t.Logf("target %s %s %q %s", ti.TargetID, ti.Type, ti.Title, ti.URL)
		found = found || string(ti.TargetID) == w.srv.TargetID() && ti.Type == "page"
	}
	if !found {
		t.Fatalf("chromedp.Targets lists no page target %s", w.srv.TargetID())
	}
	tctx, cancelTarget := chromedp.NewContext(bctx, chromedp.WithTargetID(cdptarget.ID(w.srv.TargetID())))
	pid, err := chromedp.Run(tctx, chromedp.Evaluate[int]("process.pid"))
	if err != nil {
		t.Fatalf("chromedp.Evaluate: %v", err)
	}
	if pid != w.proc.PID() {
		t.Fatalf("chromedp evaluated process.pid = %d, the host is %d", pid, w.proc.PID())
	}
	cancelTarget()
	cancelBrowser()
	select {
	case <-w.proc.Done():
		t.Fatal("the host exited when chromedp left")
	default:
	}
	next := w.dialBrowser(t, "after chromedp")
	if got := evalPID(t, next, ""); got != w.proc.PID() {
		t.Fatalf("after chromedp: process.pid = %d", got)
	}
}
