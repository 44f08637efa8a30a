package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// softMemoryLimit is the Go heap's soft limit (debug.SetMemoryLimit) unless
// GOMEMLIMIT says otherwise. The worker's live heap is small (bounded
// replay buffers, message queues); what made its RSS large was garbage
// between collections, which GOGC alone lets grow to twice the live heap.
// A soft limit makes the collector run earlier when the heap nears it; it
// never fails an allocation, so a window that legitimately queues more
// (a large script source) only costs more GC work. Measured: docs/agent-note.md
// "Concurrency and bounds".
const softMemoryLimit = 48 << 20

const usage = `inspector-worker: one Chrome DevTools endpoint for a Node.js app

Usage:
  inspector-worker demo  [--port N]
      run a small demo app shipped inside the binary and print the URL to open
  inspector-worker run   [--port N] [--brk] -- node [node flags] script.js [args]
      start the host under the worker; exits with the host's exit code
  inspector-worker run   [--port N] -- npm run dev | npx vite | ./node_modules/.bin/x | any command
      start the command as is; its first Node.js process that is not a package manager
      or launcher (npm, npx, pnpm, yarn, corepack, next, nodemon, tsx) is the host;
      exits with the command's exit code
  inspector-worker run   --watch [--watch-path P]... [--brk] -- node script.js [args]
      restart the host whenever a file in the script's directory (or each P) changes;
      open DevTools windows stay attached, breakpoints included; Ctrl-C quits
  inspector-worker serve --host-inspector ws://127.0.0.1:P/UUID|127.0.0.1:P [--port N]
      attach to a Node process already started with --inspect
  inspector-worker trace [--json] [--out FILE] [--workspace DIR] [--node PATH] -- script.js [args]
      run script.js under the inspector and print its timeline and failure evidence
      (docs/trace.md); exits with the script's exit code
  inspector-worker wiring express|vite > inspector-worker-NAME.mjs
      print an Express middleware or a Vite plugin that adds the page client's tag
      (for apps that wire pages explicitly instead of run's default --inject)
  inspector-worker version

Flags shared by demo, run and serve:
  --port N    DevTools endpoint port on 127.0.0.1 (default 9229, where chrome://inspect
              looks; if it is taken a free port is used and printed; 0 = any free port)
  --host H    loopback address to listen on: 127.0.0.1 (default), ::1 or localhost;
              anything else is refused
`

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	catchSIGPIPE()
	os.Exit(realMain(os.Args[1:], newOutputGuard(os.Stderr)))
}

func realMain(args []string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stderr)
	case "serve":
		return cmdServe(args[1:], stderr)
	case "demo":
		return cmdDemo(args[1:], stderr)
	case "trace":
		return cmdTrace(args[1:], stderr)
	case "wiring":
		return cmdWiring(args[1:], os.Stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(os.Stdout, "inspector-worker", version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(os.Stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "inspector-worker: unknown command %q\n\n%s", args[0], usage)
	return 2
}
