package main

import (
	"fmt"
	"io"
	"strings"

	clientjs "github.com/inspector-worker/inspector-worker/client/js"
)

// cmdWiring prints one explicit-wiring module (client/js/wiring/NAME.mjs)
// on stdout, for the app to keep beside its code: an app imports it as a
// local file, so it needs no package from a registry and no checkout of
// this repository, and under plain `node` the module does nothing.
func cmdWiring(args []string, stdout, stderr io.Writer) int {
	names := clientjs.WiringNames()
	if len(args) != 1 {
		fmt.Fprintf(stderr, "usage: inspector-worker wiring %s > inspector-worker-NAME.mjs\n", strings.Join(names, "|"))
		return 2
	}
	b, ok := clientjs.Wiring(args[0])
	if !ok {
		fmt.Fprintf(stderr, "inspector-worker wiring: no module %q; there are: %s\n", args[0], strings.Join(names, ", "))
		return 2
	}
	if _, err := stdout.Write(b); err != nil {
		fmt.Fprintf(stderr, "inspector-worker wiring: %v\n", err)
		return 1
	}
	return 0
}
