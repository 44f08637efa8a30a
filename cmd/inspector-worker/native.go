package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/inspector-worker/inspector-worker/browserrealm"
	"github.com/inspector-worker/inspector-worker/cdpserver"
)

// nativeFlags are the native-page flags (run, serve, demo): a Chromium
// whose pages the window debugs with the browser's own debugger
// (browserrealm; docs/agent-note.md "Native pages").
type nativeFlags struct {
	cdp     string
	match   string
	browser browserFlag
}

// browserFlag is --browser (start Chromium on about:blank) or
// --browser=URL (start it on URL): a flag with an optional value.
type browserFlag struct {
	set bool
	url string
}

func (f *browserFlag) String() string   { return f.url }
func (f *browserFlag) IsBoolFlag() bool { return true }
func (f *browserFlag) Set(v string) error {
	f.set = true
	if v != "true" {
		f.url = v
	}
	if v == "false" {
		f.set, f.url = false, ""
	}
	return nil
}

// nativeDialTimeout bounds reaching the browser's endpoint at start.
const nativeDialTimeout = 10 * time.Second

func (n *nativeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&n.cdp, "browser-cdp", "", "a Chromium-family browser's remote-debugging endpoint (http://HOST:PORT or its ws:// URL): "+
		"its app pages are debugged natively (breakpoints, stepping) as child targets of each window")
	fs.Var(&n.browser, "browser", "start Chromium (from $CHROME, /usr/bin/chromium, google-chrome on PATH) with a temporary profile "+
		"and debug its app pages natively; --browser=URL opens URL; it is closed when the worker exits")
	fs.StringVar(&n.match, "browser-match", "", "with --browser-cdp/--browser: a regular expression on a page's URL saying which pages join "+
		"(default: http(s) pages on a loopback host)")
}

// hasDisplay says whether a started browser can open a window.
func hasDisplay() bool { return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != "" }

// start connects the server to the browser the flags name, starting it
// first for --browser; stop closes the connection and a started browser
// (removing its profile). With no flag it does nothing.
func (n *nativeFlags) start(srv *cdpserver.Server, stderr io.Writer) (stop func(), err error) {
	stop = func() {}
	if n.cdp == "" && !n.browser.set {
		return stop, nil
	}
	if n.cdp != "" && n.browser.set {
		return stop, fmt.Errorf("give --browser-cdp or --browser, not both")
	}
	var match *regexp.Regexp
	if n.match != "" {
		if match, err = regexp.Compile(n.match); err != nil {
			return stop, fmt.Errorf("--browser-match: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), nativeDialTimeout)
	defer cancel()
	endpoint := n.cdp
	var launched *browserrealm.Launched
	if n.browser.set {
		launched, err = browserrealm.Launch(context.Background(), "", !hasDisplay()) // URL: opened below, behind the client guard
		if err != nil {
			return stop, fmt.Errorf("--browser: %w", err)
		}
		endpoint = launched.Endpoint
		fmt.Fprintf(stderr, "inspector-worker: started the browser (pid %d, debugging at %s, profile %s)\n",
			launched.Pid(), endpoint, launched.Profile())
	}
	b, err := browserrealm.Dial(ctx, endpoint, match, logTo(stderr))
	if err != nil {
		if launched != nil {
			launched.Close()
		}
		return stop, err
	}
	srv.SetNativeBrowser(b)
	if n.browser.url != "" {
		go openWhenServed(b, n.browser.url, stderr)
	}
	var stopping atomic.Bool
	go func() {
		<-b.Done()
		if !stopping.Load() {
			fmt.Fprintf(stderr, "inspector-worker: browser pages detached: %s\n", b.Reason())
		}
	}()
	return func() {
		stopping.Store(true) // the worker closes it: no line
		b.Close()
		if launched != nil {
			launched.Close()
		}
	}, nil
}

// serveWait bounds the wait for the app's server before --browser=URL is
// opened: under run the host starts listening a moment after it starts.
const serveWait = 10 * time.Second

// openWhenServed opens url in the started browser once something listens
// at its host:port (or after serveWait, to show the browser's own error).
func openWhenServed(b *browserrealm.Browser, raw string, stderr io.Writer) {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		port := u.Port()
		if port == "" {
			port = "80"
			if u.Scheme == "https" {
				port = "443"
			}
		}
		hostport := net.JoinHostPort(u.Hostname(), port)
		for deadline := time.Now().Add(serveWait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if c, err := net.DialTimeout("tcp", hostport, time.Second); err == nil {
				c.Close()
				break
			}
		}
	}
	if err := b.Open(raw); err != nil {
		fmt.Fprintf(stderr, "inspector-worker: --browser: %v\n", err)
	}
}
