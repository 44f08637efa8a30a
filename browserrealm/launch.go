//go:build unix

package browserrealm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// startTimeout bounds the wait for a started browser's DevToolsActivePort
// (about 1 s on this machine; a cold start under load takes several).
const startTimeout = 30 * time.Second

// closeGrace is how long a started browser gets to exit after
// Browser.close before its process group is killed.
const closeGrace = 5 * time.Second

// Launched is a Chromium the worker started: a temporary profile, remote
// debugging on a loopback port the browser chose.
type Launched struct {
	Endpoint string // http://127.0.0.1:PORT
	cmd      *exec.Cmd
	profile  string
	exited   chan struct{}
	reaper   *reaper // nil until started; stops the browser if the worker dies without Close
}

// FindChromium names the browser to start: $CHROME, then /usr/bin/chromium,
// then chromium, google-chrome, google-chrome-stable or chromium-browser on
// PATH.
func FindChromium() (string, error) {
	if c := os.Getenv("CHROME"); c != "" {
		return c, nil
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	for _, name := range []string{"chromium", "google-chrome", "google-chrome-stable", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found: set $CHROME to a Chromium-family browser, or install chromium")
}

// Launch starts the browser on url with a temporary profile. headless runs
// it without a window (no display, or tests). Close stops it and removes
// the profile.
func Launch(ctx context.Context, url string, headless bool) (*Launched, error) {
	bin, err := FindChromium()
	if err != nil {
		return nil, err
	}
	profile, err := os.MkdirTemp("", "inspector-worker-browser-")
	if err != nil {
		return nil, err
	}
	args := []string{"--user-data-dir=" + profile, "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
		"--no-first-run", "--no-default-browser-check", "--disable-dev-shm-usage"}
	if headless {
		args = append(args, "--headless=new")
	}
	if os.Getuid() == 0 {
		args = append(args, "--no-sandbox") // Chromium refuses to run as root with its sandbox
	}
	if url == "" {
		url = "about:blank"
	}
	cmd := exec.Command(bin, append(args, url)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers are killed with it
	if err := cmd.Start(); err != nil {
		os.RemoveAll(profile)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	l := &Launched{cmd: cmd, profile: profile, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(l.exited) }()
	if l.reaper, err = startReaper(cmd.Process.Pid, profile); err != nil {
		l.Close()
		return nil, fmt.Errorf("start the browser's reaper: %w", err)
	}
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	for {
		b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if line, _, ok := strings.Cut(string(b), "\n"); err == nil && ok && line != "" {
			l.Endpoint = "http://127.0.0.1:" + line
			return l, nil
		}
		select {
		case <-l.exited:
			l.Close()
			return nil, fmt.Errorf("%s exited at start (run it by hand to see why)", bin)
		case <-deadline.C:
			l.Close()
			return nil, fmt.Errorf("%s wrote no DevToolsActivePort in %v", bin, startTimeout)
		case <-ctx.Done():
			l.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Pid is the browser's process id.
func (l *Launched) Pid() int { return l.cmd.Process.Pid }

// Profile is the temporary profile directory.
func (l *Launched) Profile() string { return l.profile }

// Close stops the browser (SIGTERM to its process group, then SIGKILL after
// closeGrace), waits for it and removes the profile. Safe to call twice.
func (l *Launched) Close() {
	pgid := l.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-l.exited:
	case <-time.After(closeGrace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-l.exited
	}
	// Helpers of the group that outlived the browser process.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	_ = os.RemoveAll(l.profile)
	l.reaper.release()
}
