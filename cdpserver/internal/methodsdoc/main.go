// Command methodsdoc writes docs/methods.md from the worker's method table
// (cdpserver/methods.go). Run it with `go generate ./cdpserver`.
package main

import (
	"fmt"
	"os"

	"github.com/inspector-worker/inspector-worker/cdpserver"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: methodsdoc <path of docs/methods.md>")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], cdpserver.MethodsMarkdown(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "methodsdoc:", err)
		os.Exit(1)
	}
}
