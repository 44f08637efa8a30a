package cdptest

import (
	"encoding/json"
	"time"
)

// Attached is what a test reads of a Target.attachedToTarget.
type Attached struct {
	SessionID  string `json:"sessionId"`
	TargetInfo struct {
		TargetID string `json:"targetId"`
		Type     string `json:"type"`
		Title    string `json:"title"`
		URL      string `json:"url"`
		Attached bool   `json:"attached"`
	} `json:"targetInfo"`
	WaitingForDebugger bool `json:"waitingForDebugger"`
}

// ExpectAttached waits for the next Target.attachedToTarget and fails the
// test unless it is an attached worker child target with a session.
func (cl *Client) ExpectAttached() Attached {
	cl.t.Helper()
	m := cl.ExpectEvent("Target.attachedToTarget", nil)
	var a Attached
	if err := json.Unmarshal(m.Params, &a); err != nil {
		cl.t.Fatalf("%s: attachedToTarget: %v: %s", cl.name, err, m.Raw)
	}
	if a.SessionID == "" || a.TargetInfo.TargetID == "" || a.TargetInfo.Type != "worker" || !a.TargetInfo.Attached {
		cl.t.Fatalf("%s: attachedToTarget is not a worker child target: %s", cl.name, m.Raw)
	}
	return a
}

// EvaluateIn evaluates expression in the child session and returns its
// value (by value) and whether it threw.
func (cl *Client) EvaluateIn(sessionID, expression string, commandLineAPI bool) (value json.RawMessage, threw bool) {
	cl.t.Helper()
	m := cl.CallIn(sessionID, "Runtime.evaluate", map[string]any{
		"expression": expression, "returnByValue": true, "includeCommandLineAPI": commandLineAPI,
	})
	if m.Error != nil || m.SessionID != sessionID {
		cl.t.Fatalf("%s: Runtime.evaluate in session %s: %s", cl.name, sessionID, m.Raw)
	}
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		cl.t.Fatalf("%s: Runtime.evaluate: %v: %s", cl.name, err, m.Raw)
	}
	if r.ExceptionDetails != nil {
		cl.t.Logf("%s: session %s: %s threw: %.300s", cl.name, sessionID, expression, r.ExceptionDetails)
	}
	return r.Result.Value, r.ExceptionDetails != nil
}

// ThreadIDIn evaluates the thread's own threadId in the child session,
// once the thread has run its first line, which must set
// globalThis.threadStarted = true. A thread is attached while Node is
// still starting it: a require then runs inside Node's half-made module
// loader (seen: "testEnabled is not a function"), and an evaluation with
// the command-line API before Node has installed its require there leaves
// the thread's console without require for good (seen: "require is not
// defined" for 60 s). So it first waits with a plain expression.
func (cl *Client) ThreadIDIn(sessionID string) int {
	cl.t.Helper()
	deadline := time.Now().Add(cl.wait())
	for tries := 1; ; tries++ {
		if v, _ := cl.EvaluateIn(sessionID, "globalThis.threadStarted === true", false); string(v) == "true" {
			if tries > 1 {
				cl.t.Logf("%s: session %s: the thread ran its first line by try %d", cl.name, sessionID, tries)
			}
			break
		}
		if time.Now().After(deadline) {
			cl.t.Fatalf("%s: session %s: the thread did not start within %v", cl.name, sessionID, cl.wait())
		}
		time.Sleep(20 * time.Millisecond)
	}
	v, threw := cl.EvaluateIn(sessionID, "require('worker_threads').threadId", true)
	var id int
	if threw || json.Unmarshal(v, &id) != nil {
		cl.t.Fatalf("%s: session %s: threadId: %s (threw %v)", cl.name, sessionID, v, threw)
	}
	return id
}
