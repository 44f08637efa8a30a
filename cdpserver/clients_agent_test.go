package cdpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inspector-worker/inspector-worker/internal/cdptest"
	"github.com/inspector-worker/inspector-worker/pagerealm"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// fakeAgent plays a page's client agent (client/js) for the Runtime and
// Console families: it reads every frame the worker sends the page and
// answers runtime.commands from a small object world, keeping the handles
// it hands out per DevTools session and group as the real agent must
// (docs/protocol.md "Runtime", "Console"). One goroutine reads the page's
// outbox; the test goroutine inspects what it saw.
type fakeAgent struct {
	t  *testing.T
	pg *clientPage

	mu          sync.Mutex
	cond        *sync.Cond
	frames      []sourceproto.Frame          // Guarded by mu: what the worker sent, in order.
	live        map[string]map[string]string // Guarded by mu: session → handle → group.
	provisional map[uint64][]string          // Guarded by mu: command id → handles awaiting the ack.
	next        int                          // Guarded by mu.
	silent      bool                         // Guarded by mu: never answer runtime.commands.
	done        chan struct{}
}

// openAgent opens a page with a Runtime (runtime, console and script
// capabilities) played by a fakeAgent.
func openAgent(t *testing.T, reg *sourceproto.Registry, token sourceproto.Token, id, title string) *fakeAgent {
	t.Helper()
	out := make(outbox, 4096)
	pg := openPageCaps(t, reg, token, id, "http://127.0.0.1:3000/"+id, title, out,
		sourceproto.CapRuntime|sourceproto.CapConsole|sourceproto.CapScripts)
	pg.out = out
	pg.ingest(pg.p.Replace(t, sourceproto.ReplaceInitial))
	a := &fakeAgent{t: t, pg: pg, live: map[string]map[string]string{}, provisional: map[uint64][]string{}, done: make(chan struct{})}
	a.cond = sync.NewCond(&a.mu)
	stopped := make(chan struct{})
	go a.loop(stopped)
	t.Cleanup(func() { close(a.done); <-stopped })
	return a
}

func (a *fakeAgent) setSilent(v bool) { a.mu.Lock(); a.silent = v; a.mu.Unlock() }

func (a *fakeAgent) loop(stopped chan struct{}) {
	defer close(stopped)
	for {
		select {
		case <-a.done:
			return
		case raw := <-a.pg.out:
			f, err := sourceproto.Decode(raw)
			if err != nil {
				a.t.Errorf("the worker sent the page an invalid frame: %v: %s", err, raw)
				continue
			}
			if res := a.handle(f); res != nil {
				if r := a.pg.src.Ingest(a.pg.p.Frame(a.t, res)); r.Err != nil {
					a.t.Errorf("the worker refused the agent's result: %v", r.Err)
				}
			}
		}
	}
}

// handle records f and returns the result to send, if any.
func (a *fakeAgent) handle(f sourceproto.Frame) *sourceproto.RuntimeResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	defer a.cond.Broadcast()
	a.frames = append(a.frames, f)
	switch b := f.Body.(type) {
	case *sourceproto.RuntimeCommand:
		if a.silent {
			return nil
		}
		return a.answerLocked(b)
	case *sourceproto.RuntimeAck:
		if !b.Accepted {
			for _, h := range a.provisional[b.ID] {
				delete(a.live[b.Session], h)
			}
		}
		delete(a.provisional, b.ID)
	case *sourceproto.RuntimeCancel:
		// As client/js/runtime.mjs: a withdrawn command's answer (sent
		// already, or not) will not be mapped, so its handles go.
		for _, h := range a.provisional[b.ID] {
			delete(a.live[b.Session], h)
		}
		delete(a.provisional, b.ID)
	case *sourceproto.ConsoleDisable:
		a.releaseGroupLocked(b.Session, pagerealm.ConsoleGroup)
	case *sourceproto.ConsoleDiscard:
		a.releaseGroupLocked(b.Session, pagerealm.ConsoleGroup)
	}
	return nil
}

func (a *fakeAgent) newHandleLocked(session, group string, cmd uint64) string {
	a.next++
	h := fmt.Sprintf("h:%d", a.next)
	if a.live[session] == nil {
		a.live[session] = map[string]string{}
	}
	a.live[session][h] = group
	if cmd != 0 {
		a.provisional[cmd] = append(a.provisional[cmd], h)
	}
	return h
}

func (a *fakeAgent) releaseGroupLocked(session, group string) {
	for h, g := range a.live[session] {
		if g == group {
			delete(a.live[session], h)
		}
	}
}

func (a *fakeAgent) object(session, group string, cmd uint64, class string) sourceproto.RemoteObject {
	return sourceproto.RemoteObject{Type: sourceproto.TypeObject, ClassName: class, Description: class,
		Handle: a.newHandleLocked(session, group, cmd)}
}

func str(s string) sourceproto.RemoteObject {
	b, _ := json.Marshal(s)
	return sourceproto.RemoteObject{Type: sourceproto.TypeString, Value: b}
}

// answerLocked is the object world: evaluate "obj" is an object, "promise"
// a promise, "throw" throws, "null" is null, "empty" the empty string,
// anything else is the number 42; an object has
// a number "a" and an object "nested"; callFunctionOn answers which
// handles it got, so a test sees the worker's mapping.
func (a *fakeAgent) answerLocked(c *sourceproto.RuntimeCommand) *sourceproto.RuntimeResult {
	r := &sourceproto.RuntimeResult{Session: c.Session, ID: c.ID, Method: c.Method}
	known := func(h string) bool { _, ok := a.live[c.Session][h]; return ok }
	noHandle := &sourceproto.TransportError{Code: sourceproto.ErrCodeNoSuchHandle, Message: "no such handle"}
	switch c.Method {
	case sourceproto.MethodEvaluate:
		res := &sourceproto.EvaluateResult{Result: sourceproto.RemoteObject{Type: sourceproto.TypeNumber, Value: sourceproto.RawJSON("42")}}
		switch c.Evaluate.Expression {
		case "obj":
			res.Result = a.object(c.Session, c.Evaluate.ObjectGroup, c.ID, "Object")
		case "null":
			res.Result = sourceproto.RemoteObject{Type: sourceproto.TypeObject, Subtype: "null"}
		case "empty":
			res.Result = str("")
		case "promise":
			res.Result = a.object(c.Session, c.Evaluate.ObjectGroup, c.ID, "Promise")
			res.Result.Subtype = "promise"
		case "throw":
			ex := a.object(c.Session, c.Evaluate.ObjectGroup, c.ID, "Error")
			ex.Subtype = "error"
			res.Result = ex
			res.ExceptionDetails = &sourceproto.ExceptionDetails{Text: "Uncaught", URL: "http://127.0.0.1:3000/app.js", Exception: &ex,
				StackTrace: &sourceproto.StackTrace{CallFrames: []sourceproto.CallFrame{{FunctionName: "f", URL: "http://127.0.0.1:3000/app.js", LineNumber: 3}}}}
		}
		r.Evaluate = res
	case sourceproto.MethodGetProperties:
		if !known(c.GetProperties.Handle) {
			r.Error = noHandle
			break
		}
		group := a.live[c.Session][c.GetProperties.Handle]
		num := sourceproto.RemoteObject{Type: sourceproto.TypeNumber, Value: sourceproto.RawJSON("1")}
		nested := a.object(c.Session, group, c.ID, "Object")
		r.GetProperties = &sourceproto.GetPropertiesResult{Result: []sourceproto.PropertyDescriptor{
			{Name: "a", Value: &num, Configurable: true, Enumerable: true, IsOwn: true},
			{Name: "nested", Value: &nested, Configurable: true, Enumerable: true, IsOwn: true},
		}}
	case sourceproto.MethodCallFunctionOn:
		got := []string{"this=" + c.CallFunctionOn.Handle}
		for _, arg := range c.CallFunctionOn.Arguments {
			if arg.Handle != "" && !known(arg.Handle) {
				r.Error = noHandle
				return r
			}
			got = append(got, "arg="+arg.Handle+string(arg.Value))
		}
		if c.CallFunctionOn.Handle != "" && !known(c.CallFunctionOn.Handle) {
			r.Error = noHandle
			break
		}
		r.CallFunctionOn = &sourceproto.CallFunctionOnResult{Result: str(strings.Join(got, " "))}
	case sourceproto.MethodAwaitPromise:
		if !known(c.AwaitPromise.Handle) {
			r.Error = noHandle
			break
		}
		r.AwaitPromise = &sourceproto.AwaitPromiseResult{Result: sourceproto.RemoteObject{Type: sourceproto.TypeNumber, Value: sourceproto.RawJSON("7")}}
	case sourceproto.MethodReleaseObject:
		delete(a.live[c.Session], c.ReleaseObject.Handle)
		r.ReleaseObject = &sourceproto.ReleaseObjectResult{}
	case sourceproto.MethodReleaseObjectGroup:
		a.releaseGroupLocked(c.Session, c.ReleaseObjectGroup.ObjectGroup)
		r.ReleaseObjectGroup = &sourceproto.ReleaseObjectGroupResult{}
	case sourceproto.MethodGlobalLexicalScopeNames:
		r.GlobalLexicalScopeNames = &sourceproto.GlobalLexicalScopeNamesResult{Names: []string{"cart", "user"}}
	}
	return r
}

// waitFrame waits for the first frame after index from that satisfies match
// and returns it with its index.
func (a *fakeAgent) waitFrame(what string, from int, match func(sourceproto.Frame) bool) (sourceproto.Frame, int) {
	a.t.Helper()
	timer := time.AfterFunc(cdptest.Timeout, func() { a.mu.Lock(); a.cond.Broadcast(); a.mu.Unlock() })
	defer timer.Stop()
	start := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		for i := from; i < len(a.frames); i++ {
			if match(a.frames[i]) {
				return a.frames[i], i
			}
		}
		if time.Since(start) >= cdptest.Timeout {
			a.t.Fatalf("the page never got %s; it got %d frames", what, len(a.frames))
		}
		a.cond.Wait()
	}
}

// count is the number of frames so far (an index for waitFrame).
func (a *fakeAgent) count() int { a.mu.Lock(); defer a.mu.Unlock(); return len(a.frames) }

// liveHandles is how many handles the page holds for a session.
func (a *fakeAgent) liveHandles(session string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.live[session])
}

// waitLive waits until the page holds want handles for session.
func (a *fakeAgent) waitLive(session string, want int) {
	a.t.Helper()
	deadline := time.Now().Add(cdptest.Timeout)
	for a.liveHandles(session) != want {
		if time.Now().After(deadline) {
			a.t.Fatalf("the page holds %d handles for %s, want %d", a.liveHandles(session), session, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func isCommand(method sourceproto.RuntimeMethod, match func(*sourceproto.RuntimeCommand) bool) func(sourceproto.Frame) bool {
	return func(f sourceproto.Frame) bool {
		c, ok := f.Body.(*sourceproto.RuntimeCommand)
		return ok && c.Method == method && (match == nil || match(c))
	}
}
