//go:build linux

package clientjs_test

// A minimal CDP client for the page benchmarks: headless Chromium with a
// remote-debugging port, tabs opened with /json/new, one WebSocket per tab
// and one call at a time on it (the benchmarks never enable a domain that
// sends events they need; events are read and dropped).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// cdpBrowser is one headless Chromium with a debugging port.
type cdpBrowser struct {
	t    testing.TB
	pid  int
	base string // http://127.0.0.1:port
}

// openCDPBrowser starts chromium with --remote-debugging-port=0 and waits
// for its DevToolsActivePort; the process group is killed at test end.
func openCDPBrowser(t testing.TB) *cdpBrowser {
	t.Helper()
	dir := t.TempDir()
	more := []string{"--disable-background-timer-throttling", "--disable-renderer-backgrounding",
		"--disable-backgrounding-occluded-windows", "--remote-debugging-port=0", "--remote-allow-origins=*"}
	if f := os.Getenv("IW_JS_FLAGS"); f != "" {
		more = append(more, "--js-flags="+f) // e.g. --no-turbo-inlining, for a profile by function
	}
	pid := startChromium(t, dir, "about:blank", more...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
		if err == nil {
			if line, _, ok := strings.Cut(string(b), "\n"); ok && line != "" {
				return &cdpBrowser{t: t, pid: pid, base: "http://127.0.0.1:" + line}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("chromium wrote no DevToolsActivePort in 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cdpPage is one tab's CDP connection. Not safe for concurrent calls.
type cdpPage struct {
	t      testing.TB
	c      *websocket.Conn
	id     int
	keep   bool     // keep events for waitEvent (a browser connection); a tab's are dropped
	events [][]byte // the events call read past while it waited, when keep
}

// open opens url in a new tab and connects to it.
func (b *cdpBrowser) open(url string) *cdpPage {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPut, b.base+"/json/new?"+url, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	var target struct{ WebSocketDebuggerURL string }
	if err := json.NewDecoder(res.Body).Decode(&target); err != nil || target.WebSocketDebuggerURL == "" {
		b.t.Fatalf("/json/new: %v %+v", err, target)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, target.WebSocketDebuggerURL, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	c.SetReadLimit(256 << 20) // a CPU profile of a long run is tens of MiB
	b.t.Cleanup(func() { _ = c.CloseNow() })
	return &cdpPage{t: b.t, c: c}
}

// call sends one command and returns its result, skipping events.
func (p *cdpPage) call(method string, params any) (json.RawMessage, error) {
	p.id++
	msg, err := json.Marshal(map[string]any{"id": p.id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := p.c.Write(ctx, websocket.MessageText, msg); err != nil {
		return nil, err
	}
	for {
		_, b, err := p.c.Read(ctx)
		if err != nil {
			return nil, err
		}
		var r struct {
			ID     int
			Method string
			Result json.RawMessage
			Error  *struct{ Message string }
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, err
		}
		if r.Method != "" && p.keep {
			p.events = append(p.events, b)
		}
		if r.ID != p.id || r.Method != "" {
			continue
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, r.Error.Message)
		}
		return r.Result, nil
	}
}

// waitEvent returns the named event's params: one call already read past
// (a connection that keeps events), or the next to arrive.
func (p *cdpPage) waitEvent(name string) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for {
		var data []byte
		if len(p.events) > 0 {
			data, p.events = p.events[0], p.events[1:]
		} else {
			var err error
			if _, data, err = p.c.Read(ctx); err != nil {
				return nil, err
			}
		}
		var r struct {
			Method string
			Params json.RawMessage
		}
		if err := json.Unmarshal(data, &r); err == nil && r.Method == name {
			return r.Params, nil
		}
	}
}

// eval evaluates expr (awaiting a promise) and decodes its value into v.
func (p *cdpPage) eval(expr string, v any) {
	p.t.Helper()
	if err := p.evalErr(expr, v); err != nil {
		p.t.Fatal(err)
	}
}

func (p *cdpPage) evalErr(expr string, v any) error {
	res, err := p.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		return err
	}
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails json.RawMessage
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return fmt.Errorf("%s: %s", expr, r.ExceptionDetails)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(r.Result.Value, v)
}

// waitEval polls expr until it is true.
func (p *cdpPage) waitEval(expr string) {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ok bool
		if err := p.evalErr(expr, &ok); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			var state any
			_ = p.evalErr("JSON.stringify({href: location.href, stats: window.__inspectorWorkerClient && __inspectorWorkerClient.stats()})", &state)
			p.t.Fatalf("timeout waiting for %s: %v", expr, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// treeCPU is the user+system CPU time of pid and all its descendants.
func treeCPU(pid int) time.Duration {
	var sum time.Duration
	for _, d := range treeCPUByType(pid) {
		sum += d
	}
	return sum
}

// treeCPUByType is treeCPU per Chromium process type (the --type= of its
// command line: renderer, utility (the network service among them),
// gpu-process, zygote…; "browser" without one); one pass over /proc.
func treeCPUByType(pid int) map[string]time.Duration {
	out := map[string]time.Duration{}
	for p, ticks := range procTree(pid) {
		out[procType(p)] += ticksCPU(ticks)
	}
	return out
}

// treeCPUByThread is treeCPUByType split further by thread name (the comm
// of /proc/<pid>/task/<tid>/stat: CrRendererMain, Chrome_ChildIOThread,
// ThreadPoolForeg… where V8's concurrent GC runs), keyed "type/thread",
// for the process types in types only.
func treeCPUByThread(pid int, types ...string) map[string]time.Duration {
	out := map[string]time.Duration{}
	for p := range procTree(pid) {
		typ := procType(p)
		if !slices.Contains(types, typ) {
			continue
		}
		dir := "/proc/" + strconv.Itoa(p) + "/task/"
		tasks, _ := os.ReadDir(dir)
		for _, t := range tasks {
			name, _, ticks, ok := procStat(dir + t.Name() + "/stat")
			if !ok {
				continue
			}
			// Numbered pools (ThreadPoolForegr, …) keep their prefix only.
			out[typ+"/"+strings.TrimRight(name, "0123456789")] += ticksCPU(ticks)
		}
	}
	return out
}

// procTree maps pid and each of its descendants to its user+system clock
// ticks, from one pass over /proc.
func procTree(pid int) map[int]uint64 {
	type proc struct {
		ppid  int
		ticks uint64
	}
	procs := map[int]proc{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if _, ppid, ticks, ok := procStat("/proc/" + d.Name() + "/stat"); ok { // else exited meanwhile
			procs[p] = proc{ppid, ticks}
		}
	}
	out := map[int]uint64{}
	for p, pr := range procs {
		for q := p; q > 1; q = procs[q].ppid {
			if q == pid {
				out[p] = pr.ticks
				break
			}
			if _, ok := procs[q]; !ok {
				break
			}
		}
	}
	return out
}

// procStat reads a /proc stat file: "pid (comm) state ppid …", where comm
// may hold spaces and parentheses; utime and stime are fields 14 and 15.
func procStat(path string) (comm string, ppid int, ticks uint64, ok bool) {
	comm, f, ok := procFields(path)
	if !ok {
		return "", 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	u, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	return comm, ppid, u + st, true
}

// procFields reads a /proc stat file into its comm and the fields after
// it (f[0] is field 3, the state); at least 13 of them when ok.
func procFields(path string) (comm string, f []string, ok bool) {
	stat, err := os.ReadFile(path)
	if err != nil {
		return "", nil, false
	}
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", nil, false
	}
	f = strings.Fields(string(stat[end+1:]))
	return string(stat[open+1 : end]), f, len(f) >= 13
}

// ticksCPU converts clock ticks (1/100 s on Linux) to a duration.
func ticksCPU(ticks uint64) time.Duration { return time.Duration(ticks) * 10 * time.Millisecond }

// procType is a Chromium process's --type= (with the utility's
// --utility-sub-type= service name when there is one), or "browser".
func procType(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return "gone"
	}
	typ, sub := "browser", ""
	// Chromium rewrites its children's argv into one space-separated string.
	for _, a := range strings.FieldsFunc(string(b), func(r rune) bool { return r == 0 || r == ' ' }) {
		if v, ok := strings.CutPrefix(a, "--type="); ok {
			typ = v
		}
		if v, ok := strings.CutPrefix(a, "--utility-sub-type="); ok {
			sub = v
		}
	}
	if sub != "" {
		typ += ":" + sub
	}
	return typ
}

// faults is what treeFaults counts.
type faults struct {
	minflt uint64
	stime  time.Duration
}

// treeFaults sums, over br's renderer processes, the minor page faults
// and the system CPU time (/proc stat fields 10 and 15): memory the
// renderers touch afresh (after Chromium's allocator handed it back to
// the kernel) shows as both. A nil browser counts nothing.
func treeFaults(br *cdpBrowser) faults {
	var sum faults
	if br == nil {
		return sum
	}
	for p := range procTree(br.pid) {
		if procType(p) != "renderer" {
			continue
		}
		if _, f, ok := procFields("/proc/" + strconv.Itoa(p) + "/stat"); ok {
			mf, _ := strconv.ParseUint(f[7], 10, 64)
			st, _ := strconv.ParseUint(f[12], 10, 64)
			sum.minflt += mf
			sum.stime += ticksCPU(st)
		}
	}
	return sum
}
