package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/internal/proctest"
)

// nativeHost serves a page with no client snippet: its realm is the
// browser's own. tick() runs every 50 ms; the line marked native-bp is
// where the test's breakpoint goes (line 2 of /app.js, 0-based 1).
const nativeHost = `
const http = require('http');
globalThis.pauseHost = () => { setTimeout(function hostPaused() { debugger; console.log('host resumed'); }, 0); return 'armed'; };
const app = 'function tick() {\n  window.ticks = (window.ticks || 0) + 1; // native-bp\n}\nsetInterval(tick, 50);\n';
http.createServer((req, res) => {
  if (req.url === '/app.js') { res.setHeader('content-type', 'text/javascript'); res.end(app); return; }
  res.setHeader('content-type', 'text/html');
  res.end('<!doctype html><html><head><title>Native page</title></head><body><script src="/app.js"></script></body></html>');
}).listen(Number(process.env.NATIVE_PORT || 0), '127.0.0.1', function () { console.log('pid ' + process.pid + ' page http://127.0.0.1:' + this.address().port + '/'); });
`

// startDebugBrowser starts headless Chromium on about:blank with remote
// debugging on a loopback port and returns http://127.0.0.1:PORT; the
// process group is killed at test end.
func startDebugBrowser(t testing.TB) string {
	t.Helper()
	base, _ := startKillableBrowser(t)
	return base
}

// startKillableBrowser is startDebugBrowser that also returns a func that
// kills the browser now (its whole process group).
func startKillableBrowser(t testing.TB) (base string, kill func()) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(chromiumPath(t), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--user-data-dir="+dir, "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill = func() {
		once.Do(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		})
	}
	t.Cleanup(func() {
		kill()
		proctest.AssertGone(t, cmd.Process.Pid)
	})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if data, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort")); err == nil {
			if port, _, ok := strings.Cut(string(data), "\n"); ok && port != "" {
				return "http://127.0.0.1:" + port, kill
			}
		}
	}
	t.Fatal("chromium wrote no DevToolsActivePort within 30 s")
	return "", nil
}

// openTab opens url in a new tab of the browser at base.
func openTab(t testing.TB, base, url string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, base+"/json/new?"+url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("PUT /json/new: status %d", res.StatusCode)
	}
}

// expectPageAttached waits for the window's attach of a native page.
func expectPageAttached(t *testing.T, c *cdptest.Client) cdptest.Attached {
	t.Helper()
	m := c.ExpectEvent("Target.attachedToTarget", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"type":"page"`)
	})
	var a cdptest.Attached
	if err := json.Unmarshal(m.Params, &a); err != nil || a.SessionID == "" || !a.TargetInfo.Attached {
		t.Fatalf("attachedToTarget of the page: %v: %s", err, m.Raw)
	}
	return a
}

// TestNativePageDebugging: with --browser-cdp naming a Chromium that shows
// the app's page, a window's flat auto-attach attaches the page with a
// session in which the browser's own debugger answers: the title, the
// page's scripts, a breakpoint by URL that pauses the page (while the host
// keeps answering), resume; then the same while the host is paused.
func TestNativePageDebugging(t *testing.T) {
	base := startDebugBrowser(t)
	dir, script := writeScript(t, nativeHost)
	w := startCmd(t, dir, "run", "--port", "0", "--inject=false", "--browser-cdp", base, "--", "node", script)
	page := w.waitFor(w.stdout, `page (http://127\.0\.0\.1:\d+/)`)
	c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
	openTab(t, base, page)
	c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false})
	a := expectPageAttached(t, c)
	sid := a.SessionID
	if a.TargetInfo.URL != page {
		t.Fatalf("attached page url %q, want %q", a.TargetInfo.URL, page)
	}

	// The page's realm is the browser's: document.title (the tab may still
	// be loading when it is attached).
	for deadline := time.Now().Add(cdptest.Timeout); ; time.Sleep(50 * time.Millisecond) {
		v, _ := c.EvaluateIn(sid, "document.readyState === 'complete' && document.title", false)
		if string(v) == `"Native page"` {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("document.title in the page's session: %s", v)
		}
	}

	// Debugger.enable lists the page's script in the page's session.
	c.Forget()
	c.MustCall("Runtime.enable", nil) // the host's, unchanged
	if m := c.CallIn(sid, "Debugger.enable", nil); m.Error != nil || m.SessionID != sid {
		t.Fatalf("Debugger.enable in the page: %s", m.Raw)
	}
	appJS := page + "app.js"
	c.ExpectEvent("Debugger.scriptParsed", func(m cdptest.Msg) bool {
		return m.SessionID == sid && strings.Contains(string(m.Params), `"url":"`+appJS+`"`)
	})

	pausePage := func(why string) {
		t.Helper()
		m := c.CallIn(sid, "Debugger.setBreakpointByUrl", map[string]any{"url": appJS, "lineNumber": 1})
		if m.Error != nil {
			t.Fatalf("%s: setBreakpointByUrl: %s", why, m.Raw)
		}
		var bp struct {
			BreakpointID string `json:"breakpointId"`
		}
		json.Unmarshal(m.Result, &bp)
		p := c.ExpectEvent("Debugger.paused", func(m cdptest.Msg) bool { return m.SessionID == sid })
		if !strings.Contains(string(p.Params), `"functionName":"tick"`) {
			t.Fatalf("%s: the page paused elsewhere: %.400s", why, p.Raw)
		}
		// The host answers while the page is paused.
		if v := c.MustCall("Runtime.evaluate", map[string]any{"expression": "6*7", "returnByValue": true}); !strings.Contains(string(v.Result), `"value":42`) {
			t.Fatalf("%s: host evaluate while the page is paused: %s", why, v.Raw)
		}
		if m := c.CallIn(sid, "Debugger.removeBreakpoint", map[string]any{"breakpointId": bp.BreakpointID}); m.Error != nil {
			t.Fatalf("%s: removeBreakpoint: %s", why, m.Raw)
		}
		if m := c.CallIn(sid, "Debugger.resume", nil); m.Error != nil {
			t.Fatalf("%s: resume: %s", why, m.Raw)
		}
		c.ExpectEvent("Debugger.resumed", func(m cdptest.Msg) bool { return m.SessionID == sid })
		// It runs again: ticks grow.
		first, _ := c.EvaluateIn(sid, "window.ticks", false)
		for deadline := time.Now().Add(cdptest.Timeout); ; time.Sleep(60 * time.Millisecond) {
			if v, _ := c.EvaluateIn(sid, "window.ticks", false); string(v) != string(first) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the page did not run after resume (ticks stay %s)", why, first)
			}
		}
	}
	pausePage("host running")

	// The same while the host is paused at a breakpoint.
	c.MustCall("Debugger.enable", nil)
	c.MustCall("Runtime.evaluate", map[string]any{"expression": "pauseHost()"})
	c.ExpectEvent("Debugger.paused", func(m cdptest.Msg) bool { return m.SessionID == "" })
	pausePage("host paused")
	c.MustCall("Debugger.resume", nil)
	c.ExpectEvent("Debugger.resumed", func(m cdptest.Msg) bool { return m.SessionID == "" })
}

// TestNativeBrowserStartedAndStopped: --browser starts Chromium with a
// temporary profile; its app page joins a window; a closed page detaches
// with a Console line; after the worker's SIGINT no process of the
// browser's group and no profile remain. Several runs: an orphan or a
// leftover profile shows in any of them.
func TestNativeBrowserStartedAndStopped(t *testing.T) {
	const runs = 4
	dir, script := writeScript(t, nativeHost)
	for i := range runs {
		w := startCmdEnv(t, dir, []string{"DISPLAY=", "WAYLAND_DISPLAY="}, "run", "--port", "0", "--inject=false", "--browser", "--", "node", script)
		page := w.waitFor(w.stdout, `page (http://127\.0\.0\.1:\d+/)`)
		line := regexp.MustCompile(`started the browser \(pid (\d+), debugging at (\S+), profile (\S+)\)`)
		w.waitFor(w.stderr, line.String())
		m := line.FindStringSubmatch(w.stderr.String())
		pid, _ := strconv.Atoi(m[1])
		base, profile := m[2], m[3]
		if _, err := os.Stat(profile); err != nil {
			t.Fatalf("run %d: the profile %s is not there while the browser runs: %v", i, profile, err)
		}
		c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
		c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false})
		openTab(t, base, page)
		a := expectPageAttached(t, c)
		// A page that goes away detaches, with a Console line saying so.
		res, err := http.Get(base + "/json/close/" + a.TargetInfo.TargetID)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		c.ExpectEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool {
			return strings.Contains(string(m.Params), `"sessionId":"`+a.SessionID+`"`)
		})
		c.ExpectEvent("Log.entryAdded", func(m cdptest.Msg) bool {
			return strings.Contains(string(m.Params), "Page "+page+" detached")
		})
		start := time.Now()
		w.cmd.Process.Signal(syscall.SIGINT)
		w.wait()
		left := groupMembers(pid)
		if len(left) > 0 {
			t.Fatalf("run %d: processes of the browser's group %d remain after the worker exited: %v", i, pid, left)
		}
		if _, err := os.Stat(profile); !os.IsNotExist(err) {
			t.Fatalf("run %d: the profile %s remains (%v)", i, profile, err)
		}
		t.Logf("run %d: worker and browser gone %v after SIGINT", i, time.Since(start).Round(time.Millisecond))
	}
}

// groupMembers lists the live processes whose process group is pgid.
func groupMembers(pgid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …: comm may hold spaces, so split after the last ')'.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// TestNativePageSkipsClient: a page that also loads the client snippet
// (run injects it) is shown once, natively: --browser=URL opens it behind
// the worker's guard, which marks the page before its first script, so the
// client does nothing there.
func TestNativePageSkipsClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close() // the host listens there; a port taken meanwhile fails the test visibly
	page := "http://127.0.0.1:" + port + "/"
	dir, script := writeScript(t, nativeHost)
	w := startCmdEnv(t, dir, []string{"NATIVE_PORT=" + port, "DISPLAY=", "WAYLAND_DISPLAY="},
		"run", "--port", "0", "--browser="+page, "--", "node", script)
	w.waitFor(w.stdout, `page (http://127\.0\.0\.1:\d+/)`)
	c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
	c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false})
	sid := expectPageAttached(t, c).SessionID
	for deadline := time.Now().Add(cdptest.Timeout); ; time.Sleep(50 * time.Millisecond) {
		v, _ := c.EvaluateIn(sid, "location.href === "+strconv.Quote(page)+" && document.readyState === 'complete' && JSON.stringify({tag: !!document.querySelector('script[data-endpoint]'), "+
			"client: window.__inspectorWorkerClient && Object.keys(window.__inspectorWorkerClient).join()})", false)
		if string(v) == `false` {
			if time.Now().After(deadline) {
				t.Fatal("the page never loaded")
			}
			continue
		}
		if want := `"{\"tag\":true,\"client\":\"native\"}"`; string(v) != want {
			t.Fatalf("the page's client: %s, want %s (the snippet there and the client off)", v, want)
		}
		break
	}
	w.cmd.Process.Signal(syscall.SIGINT)
	w.wait()
}

// TestNativeBrowserGone: a browser that goes away detaches its page from
// the window, with a Console line saying so; a request in the page's
// session afterwards is refused as an unknown session, and the host still
// answers.
func TestNativeBrowserGone(t *testing.T) {
	base, kill := startKillableBrowser(t)
	dir, script := writeScript(t, nativeHost)
	w := startCmd(t, dir, "run", "--port", "0", "--inject=false", "--browser-cdp", base, "--", "node", script)
	page := w.waitFor(w.stdout, `page (http://127\.0\.0\.1:\d+/)`)
	c := cdptest.Dial(t, "devtools", pageURL(t, w.addr()), nil)
	openTab(t, base, page)
	c.MustCall("Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false})
	sid := expectPageAttached(t, c).SessionID
	kill()
	c.ExpectEvent("Target.detachedFromTarget", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), `"sessionId":"`+sid+`"`)
	})
	c.ExpectEvent("Log.entryAdded", func(m cdptest.Msg) bool {
		return strings.Contains(string(m.Params), "Page "+page+" detached: the browser")
	})
	if m := c.CallIn(sid, "Runtime.evaluate", map[string]any{"expression": "1"}); m.Error == nil {
		t.Fatalf("a request in the gone page's session was answered: %s", m.Raw)
	}
	if v := c.MustCall("Runtime.evaluate", map[string]any{"expression": "6*7", "returnByValue": true}); !strings.Contains(string(v.Result), `"value":42`) {
		t.Fatalf("host evaluate after the browser went away: %s", v.Raw)
	}
}

// TestNativeBrowserWorkerKilled: a worker killed with SIGKILL cannot close
// the browser it started; its reaper does: no process of the browser's
// group and no profile remain.
func TestNativeBrowserWorkerKilled(t *testing.T) {
	dir, script := writeScript(t, nativeHost)
	w := startCmdEnv(t, dir, []string{"DISPLAY=", "WAYLAND_DISPLAY="}, "run", "--port", "0", "--browser", "--", "node", script)
	line := regexp.MustCompile(`started the browser \(pid (\d+), debugging at (\S+), profile (\S+)\)`)
	w.waitFor(w.stderr, line.String())
	w.addr()
	m := line.FindStringSubmatch(w.stderr.String())
	pid, _ := strconv.Atoi(m[1])
	profile := m[3]
	w.cmd.Process.Kill()
	w.wait()
	for deadline := time.Now().Add(cdptest.Timeout); ; time.Sleep(50 * time.Millisecond) {
		left := groupMembers(pid)
		_, err := os.Stat(profile)
		if len(left) == 0 && os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the worker's SIGKILL: the browser's group %d still has %v, profile %s: %v", pid, left, profile, err)
		}
	}
}
