package trace

import (
	_ "embed"
	"fmt"
	"os"
)

// preloadJS is loaded into every traced program with --require: it keeps
// the program's children from inheriting --inspect-brk (they would wait for
// a debugger forever) and reports them through the inspector console.
//
//go:embed preload.cjs
var preloadJS []byte

// childMark is the first console argument of the preload's reports.
const childMark = "inspector-worker:trace-child"

// writePreload puts the preload where node can --require it. The file must
// outlive every traced program and its children (they --require it too), so
// it lives as long as the engine and Shutdown removes it.
func writePreload() (string, error) {
	f, err := os.CreateTemp("", "inspector-worker-trace-*.cjs")
	if err != nil {
		return "", fmt.Errorf("trace: cannot write the preload: %w", err)
	}
	_, werr := f.Write(preloadJS)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("trace: cannot write the preload: %w", werr)
	}
	return f.Name(), nil
}
