package main

import (
	"flag"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/inspector-worker/inspector-worker/cdpserver"
)

func TestCaptureFlags(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ep endpointFlags
	ep.register(fs)
	if err := parseFlags(fs, []string{"--no-capture", "--redact-header", "Authorization", "--redact-header", "x-api-key", "--", "node", "a.js"}, &ep); err != nil {
		t.Fatal(err)
	}
	o := ep.serverOptions(cdpserverOptions())
	if !o.NoCapture || !slices.Equal(o.RedactHeaders, []string{"Authorization", "x-api-key"}) {
		t.Fatalf("options %+v", o)
	}
	obs := &observation{}
	if env := obs.hostEnv(true); !slices.Contains(env, captureEnv+"=0") {
		t.Fatal("--no-capture does not reach the host's environment")
	}
	if env := obs.hostEnv(false); slices.Contains(env, captureEnv+"=0") && !slices.Contains(envBefore(), captureEnv+"=0") {
		t.Fatal("capture switched off without --no-capture")
	}
	for _, bad := range []string{"", "a b", "a:b"} {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var ep endpointFlags
		ep.register(fs)
		if err := parseFlags(fs, []string{"--redact-header", bad}, &ep); err == nil {
			t.Fatalf("--redact-header %q accepted", bad)
		}
	}
}

func cdpserverOptions() cdpserver.Options { return cdpserver.Options{} }

func envBefore() []string { return os.Environ() }
