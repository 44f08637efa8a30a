package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// `wiring NAME` prints the module file itself; no or an unknown name is a
// usage error naming the modules there are.
func TestWiringCommand(t *testing.T) {
	for _, name := range []string{"express", "vite"} {
		var out, errb bytes.Buffer
		if code := cmdWiring([]string{name}, &out, &errb); code != 0 {
			t.Fatalf("wiring %s: exit %d, stderr %q", name, code, errb.String())
		}
		disk, err := os.ReadFile("../../client/js/wiring/" + name + ".mjs")
		if err != nil || !bytes.Equal(out.Bytes(), disk) {
			t.Fatalf("wiring %s printed %d bytes, not client/js/wiring/%s.mjs (%v)", name, out.Len(), name, err)
		}
	}
	for _, args := range [][]string{nil, {"next"}, {"express", "vite"}} {
		var out, errb bytes.Buffer
		if code := cmdWiring(args, &out, &errb); code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), "express") {
			t.Fatalf("wiring %q: exit %d, stdout %q, stderr %q", args, code, out.String(), errb.String())
		}
	}
}
