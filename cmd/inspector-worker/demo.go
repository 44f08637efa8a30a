package main

import (
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// demoApp is the demo host, shipped inside the binary so `demo` needs nothing
// but Node.js on the machine.
//
//go:embed demo/app.js
var demoApp []byte

func cmdDemo(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ep endpointFlags
	ep.register(fs)
	node := fs.String("node", "node", "the Node.js executable to run the demo with")
	if err := parseFlags(fs, args, &ep); err != nil {
		return 2
	}
	if _, err := exec.LookPath(*node); err != nil {
		fmt.Fprintf(stderr, "inspector-worker demo: needs Node.js >= 20 on PATH (or --node /path/to/node): %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "inspector-worker-demo-")
	if err != nil {
		fmt.Fprintf(stderr, "inspector-worker demo: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "app.js"), demoApp, 0o644); err != nil {
		fmt.Fprintf(stderr, "inspector-worker demo: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "inspector-worker: demo app written to %s; press Ctrl-C to stop it\n", filepath.Join(dir, "app.js"))
	fmt.Fprintf(stderr, "inspector-worker: in DevTools, open Sources → app.js and click the line marked \"set a breakpoint\"\n")
	fmt.Fprintf(stderr, "inspector-worker: the demo app also serves a page (its URL follows); open it in a browser and its console and objects appear in the same DevTools window\n")
	return runHost(hostRun{ep: ep, argv: []string{*node, "app.js"}, dir: dir, temp: []string{dir}}, stderr)
}
