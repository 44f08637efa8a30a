package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/inspector-worker/inspector-worker/cdpserver"
	"github.com/inspector-worker/inspector-worker/childrealm"
	"github.com/inspector-worker/inspector-worker/hostnode"
	"github.com/inspector-worker/inspector-worker/sourceproto"
	"github.com/inspector-worker/inspector-worker/sourceproto/carrier"
)

// The variables a child's preload registers with (client/js/preload.in.cjs
// registerChild). They stay in every descendant's environment on purpose.
const (
	childEndpointEnv = "INSPECTOR_WORKER_CHILD_ENDPOINT"
	childTokenEnv    = "INSPECTOR_WORKER_CHILD_TOKEN"
	childWaitEnv     = "INSPECTOR_WORKER_CHILD_WAIT" // a file that exists while children are to wait at their start
)

// childWaitSuffix names the wait file beside the preload (a private temp
// file of the run): one name to remove, also by the orphan reaper.
const childWaitSuffix = ".wait"

// childFlags are run's switches for following the host's child processes.
type childFlags struct {
	off   bool
	limit int
}

func (c *childFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.off, "no-children", false, "do not follow the Node child processes the host starts (fork, cluster, spawn of node)")
	fs.IntVar(&c.limit, "max-children", childrealm.DefaultLimit, "follow at most this many child processes at once; more run unobserved, each saying so on its stderr")
}

// childRun is the run's side of child following: its own token (never the
// page token: a child gets only the right to register itself), and the
// registry once serving.
type childRun struct {
	flags  childFlags
	token  sourceproto.Token
	reg    *childrealm.Registry
	filter *hostnode.BannerFilter // the host's stderr, which the children inherit; nil: none
	// waitFile is childrealm.Options.WaitFile; set with the preload.
	waitFile string
	// stopCapture ends every child's capture channel (serve sets it).
	stopCapture context.CancelFunc
}

// childCaptureGrace is how long a child's capture channel may outlive the
// child's inspector: the child closes its inspector in its 'exit' handler,
// and its last fetch items are still on their way; the socket's own close
// at the process's exit normally ends the channel first. A child that
// closed its inspector and runs on is no longer followed, and its channel
// is closed after this grace.
const childCaptureGrace = 2 * time.Second

func newChildRun(f childFlags) (*childRun, error) {
	if f.off {
		return &childRun{flags: f}, nil
	}
	tok, err := sourceproto.NewToken()
	if err != nil {
		return nil, err
	}
	return &childRun{flags: f, token: tok}, nil
}

// env adds to the host's environment what makes its Node children load the
// preload (NODE_OPTIONS: spawn('node', …) does not inherit execArgv) and
// register. The host loads the preload twice (--require and NODE_OPTIONS):
// Node's module cache makes the second a no-op.
func (c *childRun) env(env []string, preload, endpoint string) []string {
	if c.token.IsZero() {
		return env
	}
	env = withNodeOptions(env, preload)
	return append(env, childEndpointEnv+"="+endpoint,
		childTokenEnv+"="+c.token.Reveal(),
		childWaitEnv+"="+c.waitFile)
}

// withNodeOptions appends the preload to NODE_OPTIONS, so that every Node
// process started with env loads it.
func withNodeOptions(env []string, preload string) []string {
	opts := ""
	for _, kv := range env { // the last value of a name wins
		if v, ok := strings.CutPrefix(kv, "NODE_OPTIONS="); ok {
			opts = v
		}
	}
	// Node's NODE_OPTIONS parser takes a double-quoted value with \" and \\.
	quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(preload) + `"`
	// --inspect-publish-uid=http keeps Node's "Debugger listening on …"
	// banner of the child's inspector.open() (and its "Debugger ending")
	// off the user's terminal; the host's own --inspect flags come with
	// --inspect-publish-uid=stderr,http on its command line, which wins.
	opts = strings.TrimSpace(opts + " --inspect-publish-uid=http --require " + quoted)
	return append(env, "NODE_OPTIONS="+opts)
}

// hostFlags go on the host's command line: the host's inspector banner is
// how hostnode learns its URL, and its command line overrides the
// --inspect-publish-uid=http that env puts in NODE_OPTIONS for children.
func (c *childRun) hostFlags() []string {
	if c == nil || c.token.IsZero() {
		return nil
	}
	return []string{"--inspect-publish-uid=stderr,http"}
}

// serve mounts POST /child and GET /child/capture on srv. Call it before srv serves.
func (c *childRun) serve(srv *cdpserver.Server, sources *sourceproto.Registry, stderr io.Writer) {
	if c.token.IsZero() {
		return
	}
	o := childrealm.Options{Limit: c.flags.limit, Logf: logTo(stderr), WaitFile: c.waitFile,
		OnAdd: func(ch *childrealm.Child) { srv.AttachChild(ch) }}
	if c.filter != nil {
		o.WatchStderr = c.filter.WatchAttaches
	}
	c.reg = childrealm.NewRegistry(o)
	srv.Handle("POST /child", childrealm.Handler(c.reg, c.token))
	srv.SetChildRealms(childSource{c.reg})
	c.serveCapture(srv, sources, stderr)
}

// serveCapture mounts GET /child/capture: a followed child's fetch capture
// reaches the run's source registry as a host-role source of its own,
// "child-<pid>", into the same journal as the host's (its entries are shown
// in the window's Network panel beside the host's, cdpserver
// describeSource).
func (c *childRun) serveCapture(srv *cdpserver.Server, sources *sourceproto.Registry, stderr io.Writer) {
	ctx, cancel := context.WithCancel(context.Background())
	c.stopCapture = cancel
	logf := logTo(stderr)
	srv.Handle("GET /child/capture", childrealm.CaptureHandler(c.reg, c.token, func(conn net.Conn, ch *childrealm.Child) {
		cctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			select {
			case <-ch.Done():
				select {
				case <-time.After(childCaptureGrace):
				case <-cctx.Done():
				}
				stop()
			case <-cctx.Done():
			}
		}()
		id := cdpserver.ChildSourcePrefix + ch.Key()
		if err := carrier.ServeChildPipe(cctx, conn, sources, id, logf); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			fmt.Fprintf(stderr, "inspector-worker: %s capture channel: %v\n", ch.Title(), err)
		}
	}))
}

// childSource shows the registry to the windows (cdpserver.ChildRealms).
type childSource struct{ *childrealm.Registry }

func (s childSource) Children() []cdpserver.ChildRealm {
	cs := s.Registry.Children()
	out := make([]cdpserver.ChildRealm, len(cs))
	for i, c := range cs {
		out[i] = c
	}
	return out
}

// stop lets every followed child run on unobserved.
func (c *childRun) stop() {
	if c.reg != nil {
		c.reg.Close()
	}
	if c.stopCapture != nil {
		c.stopCapture()
	}
}
