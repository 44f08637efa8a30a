// Package trace is the failure-trace engine: it runs a Node program under the
// inspector, captures scripts, console, exceptions, output and exit, and builds
// a correlation-aware evidence chain with an explicit confidence and caveat.
package trace
