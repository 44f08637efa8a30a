package cdpproject

import (
	"github.com/chromedp/cdproto/cdp"
	cdpdebugger "github.com/chromedp/cdproto/debugger"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/go-json-experiment/json/jsontext"
)

// contextAuxData is a page context's auxData, as Chromium describes a
// frame's main world.
type contextAuxData struct {
	IsDefault bool        `json:"isDefault"`
	Type      string      `json:"type,omitempty"`
	FrameID   cdp.FrameID `json:"frameId"`
}

// Context names a page's execution context in the windows.
type Context struct {
	ID       int
	UniqueID string
	Origin   string
	Name     string
	FrameID  string
	// Isolated: a named world (Page.createIsolatedWorld), not the frame's
	// default context.
	Isolated bool
}

// ExecutionContextCreated is Runtime.executionContextCreated of a frame's
// default context, or of a named world.
func ExecutionContextCreated(c Context) []byte {
	aux := mustMarshal(&contextAuxData{IsDefault: true, Type: "default", FrameID: cdp.FrameID(c.FrameID)})
	if c.Isolated {
		aux = mustMarshal(&contextAuxData{Type: "isolated", FrameID: cdp.FrameID(c.FrameID)})
	}
	return Event("Runtime.executionContextCreated", &cdpruntime.EventExecutionContextCreated{Context: &cdpruntime.ExecutionContextDescription{
		ID: cdpruntime.ExecutionContextID(c.ID), Origin: c.Origin, Name: c.Name, UniqueID: c.UniqueID, AuxData: aux,
	}})
}

// contextDestroyed keeps executionContextId, which cdproto's struct no
// longer has (the protocol deprecated it) and the frontend still reads.
type contextDestroyed struct {
	ExecutionContextID cdpruntime.ExecutionContextID `json:"executionContextId"`
	cdpruntime.EventExecutionContextDestroyed
}

// ExecutionContextDestroyed is Runtime.executionContextDestroyed.
func ExecutionContextDestroyed(id int, uniqueID string) []byte {
	return Event("Runtime.executionContextDestroyed", &contextDestroyed{cdpruntime.ExecutionContextID(id),
		cdpruntime.EventExecutionContextDestroyed{ExecutionContextUniqueID: uniqueID}})
}

// scriptParsed keeps sourceMapURL and length present when empty, as the
// worker always sent them (cdproto omits them when zero).
type scriptParsed struct {
	cdpdebugger.EventScriptParsed
	SourceMapURL string `json:"sourceMapURL"`
	Length       int64  `json:"length"`
}

// ScriptParsed is Debugger.scriptParsed of a page script the worker knows
// by URL only: no source positions, no hash of its own (the id stands in),
// so the frontend asks Debugger.getScriptSource when it opens it.
func ScriptParsed(scriptID, url string, c Context) []byte {
	aux := mustMarshal(&contextAuxData{IsDefault: true, FrameID: cdp.FrameID(c.FrameID)})
	return Event("Debugger.scriptParsed", &scriptParsed{EventScriptParsed: cdpdebugger.EventScriptParsed{
		ScriptID: cdp.ScriptID(scriptID), URL: url, ExecutionContextID: cdpruntime.ExecutionContextID(c.ID),
		Hash: scriptID, ExecutionContextAuxData: aux,
	}})
}

// BreakpointResolved is Debugger.breakpointResolved of a breakpoint the
// window names id, at location as V8 reported it (its bytes are kept).
func BreakpointResolved(id string, location []byte) []byte {
	return Event("Debugger.breakpointResolved", &struct {
		BreakpointID cdpdebugger.BreakpointID `json:"breakpointId"`
		Location     jsontext.Value           `json:"location"`
	}{cdpdebugger.BreakpointID(id), location})
}
