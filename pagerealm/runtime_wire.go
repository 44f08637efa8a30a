package pagerealm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/inspector-worker/inspector-worker/cdpproject"
	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The one boundary between CDP Runtime and the page protocol: a window's
// request params become a runtime.command (objectIds → the page's
// handles), and a runtime.result becomes the CDP answer (handles → the
// window's objectIds, objectMapper), projected by cdpproject.

// cdpRuntimeParams is the union of the CDP Runtime params the client
// backend reads. The read loop's message bound (maxDevToolsMessage) bounds
// it; sourceproto's limits (MaxValueBytes, MaxCallArguments …) are checked
// when the command is marshalled, and a command over them is refused.
type cdpRuntimeParams struct {
	Expression               string            `json:"expression"`
	ObjectGroup              string            `json:"objectGroup"`
	IncludeCommandLineAPI    bool              `json:"includeCommandLineAPI"`
	Silent                   bool              `json:"silent"`
	ReturnByValue            bool              `json:"returnByValue"`
	GeneratePreview          bool              `json:"generatePreview"`
	UserGesture              bool              `json:"userGesture"`
	AwaitPromise             bool              `json:"awaitPromise"`
	ThrowOnSideEffect        bool              `json:"throwOnSideEffect"`
	ReplMode                 bool              `json:"replMode"`
	Timeout                  float64           `json:"timeout"`
	ObjectID                 string            `json:"objectId"`
	PromiseObjectID          string            `json:"promiseObjectId"`
	OwnProperties            bool              `json:"ownProperties"`
	AccessorPropertiesOnly   bool              `json:"accessorPropertiesOnly"`
	NonIndexedPropertiesOnly bool              `json:"nonIndexedPropertiesOnly"`
	FunctionDeclaration      string            `json:"functionDeclaration"`
	Arguments                []cdpCallArgument `json:"arguments"`
	PersistScript            bool              `json:"persistScript"`
}

type cdpCallArgument struct {
	Value               json.RawMessage `json:"value"`
	UnserializableValue string          `json:"unserializableValue"`
	ObjectID            string          `json:"objectId"`
}

// handleResolver turns a window's objectIds into one page generation's
// handles, refusing ids of the host, of another page, of an earlier load of
// this page, and ids the window does not hold (another window's included:
// every window has its own table).
type handleResolver struct {
	t            *object.Table
	realm        string
	gen          uint64
	page         string
	lastObjectID string // the last id resolved (releaseObject forgets it)
}

func (r *handleResolver) handle(objectID string) (string, object.Entry, error) {
	if objectID == "" {
		return "", object.Entry{}, errors.New("an objectId is required")
	}
	if !object.Owns(objectID) {
		return "", object.Entry{}, fmt.Errorf("object %s belongs to the Node host; host objects cannot be passed to the page %q", objectID, r.page)
	}
	e, ok := r.t.Entry(objectID)
	switch {
	case !ok:
		//lint:ignore ST1005 V8's own words for an unknown objectId
		return "", e, errors.New("Could not find object with given id")
	case e.Handle.Realm != r.realm:
		return "", e, fmt.Errorf("object %s belongs to another page; objects cannot cross pages", objectID)
	case e.Handle.Generation != r.gen:
		return "", e, fmt.Errorf("object %s belongs to an earlier load of the page %q", objectID, r.page)
	}
	r.lastObjectID = objectID
	return e.Handle.ID, e, nil
}

// Runtime is a page realm's handler for one CDP Runtime method (the
// method table's AnswerAgent entries): how the request becomes a
// runtime.command, and how the page's result becomes the CDP answer.
type Runtime struct {
	// command builds the runtime.command and the object group its result's
	// handles join (CDP: the request's objectGroup, else the group of the
	// object it names).
	command func(p *cdpRuntimeParams, r *handleResolver) (*sourceproto.RuntimeCommand, string, error)
	// answer renders the page's successful result; nil:
	// cdpproject.RuntimeResult.
	answer func(res *sourceproto.RuntimeResult, m *objectMapper) ([]byte, error)
	// keepsNoObjects: the result's objects get no objectIds and the page
	// is told not to keep them (a syntax check).
	keepsNoObjects bool
	// withoutAgent is the answer when the page's agent did not offer the
	// runtime capability; "" refuses the request.
	withoutAgent string
}

// render is the CDP answer to the page's successful result.
func (rt *Runtime) render(res *sourceproto.RuntimeResult, m *objectMapper) ([]byte, error) {
	if rt.answer != nil {
		return rt.answer(res, m)
	}
	return cdpproject.RuntimeResult(res, m.values())
}

// runtimeCommand builds the runtime.command for a CDP Runtime request by
// the method's handler rt in the method table, and the object group its
// result's handles join. Without a handler the method is refused, naming
// the served ones.
func runtimeCommand(rt *Runtime, method string, params []byte, r *handleResolver, served []string) (*sourceproto.RuntimeCommand, string, error) {
	var p cdpRuntimeParams
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, "", fmt.Errorf("invalid params: %v", err)
		}
	}
	if rt != nil {
		return rt.command(&p, r)
	}
	return nil, "", fmt.Errorf("%s is not offered in client pages: the page agent serves %s",
		method, strings.Join(served, ", "))
}

// The page agent's Runtime methods: the handlers the method table's pages'
// column names (AnswerAgent).
var (
	Evaluate = &Runtime{command: func(p *cdpRuntimeParams, _ *handleResolver) (*sourceproto.RuntimeCommand, string, error) {
		return &sourceproto.RuntimeCommand{Method: sourceproto.MethodEvaluate, Evaluate: &sourceproto.EvaluateParams{
			Expression: p.Expression, ObjectGroup: p.ObjectGroup, IncludeCommandLineAPI: p.IncludeCommandLineAPI,
			Silent: p.Silent, ReturnByValue: p.ReturnByValue, GeneratePreview: p.GeneratePreview, UserGesture: p.UserGesture,
			AwaitPromise: p.AwaitPromise, ThrowOnSideEffect: p.ThrowOnSideEffect, ReplMode: p.ReplMode, Timeout: int64(p.Timeout),
		}}, p.ObjectGroup, nil
	}}
	GetProperties = &Runtime{command: func(p *cdpRuntimeParams, r *handleResolver) (*sourceproto.RuntimeCommand, string, error) {
		h, e, err := r.handle(p.ObjectID)
		if err != nil {
			return nil, "", err
		}
		return &sourceproto.RuntimeCommand{Method: sourceproto.MethodGetProperties, GetProperties: &sourceproto.GetPropertiesParams{
			Handle: h, OwnProperties: p.OwnProperties, AccessorPropertiesOnly: p.AccessorPropertiesOnly,
			GeneratePreview: p.GeneratePreview, NonIndexedPropertiesOnly: p.NonIndexedPropertiesOnly,
		}}, e.Group, nil
	}}
	CallFunctionOn = &Runtime{command: callFunctionOnCommand}
	AwaitPromise   = &Runtime{command: func(p *cdpRuntimeParams, r *handleResolver) (*sourceproto.RuntimeCommand, string, error) {
		h, e, err := r.handle(p.PromiseObjectID)
		if err != nil {
			return nil, "", err
		}
		return &sourceproto.RuntimeCommand{Method: sourceproto.MethodAwaitPromise, AwaitPromise: &sourceproto.AwaitPromiseParams{
			Handle: h, ReturnByValue: p.ReturnByValue, GeneratePreview: p.GeneratePreview,
		}}, e.Group, nil
	}}
	ReleaseObject = &Runtime{command: func(p *cdpRuntimeParams, r *handleResolver) (*sourceproto.RuntimeCommand, string, error) {
		h, _, err := r.handle(p.ObjectID)
		if err != nil {
			return nil, "", err
		}
		return &sourceproto.RuntimeCommand{Method: sourceproto.MethodReleaseObject,
			ReleaseObject: &sourceproto.ReleaseObjectParams{Handle: h}}, "", nil
	}}
	// A page without the runtime capability has no names to complete.
	GlobalLexicalScopeNames = &Runtime{withoutAgent: `{"names":[]}`,
		command: func(*cdpRuntimeParams, *handleResolver) (*sourceproto.RuntimeCommand, string, error) {
			return &sourceproto.RuntimeCommand{Method: sourceproto.MethodGlobalLexicalScopeNames,
				GlobalLexicalScopeNames: &sourceproto.GlobalLexicalScopeNamesParams{}}, "", nil
		}}
	CompileScript = &Runtime{answer: func(res *sourceproto.RuntimeResult, m *objectMapper) ([]byte, error) {
		return cdpproject.CompileScriptResult(res, m.values())
	}, keepsNoObjects: true,
		command: func(p *cdpRuntimeParams, _ *handleResolver) (*sourceproto.RuntimeCommand, string, error) {
			return compileScriptCommand(p)
		}}
)

// syntaxCheck is the page-side syntax check compileScriptCommand sends.
// `new Function(src)` compiles without running, but V8 parses the body
// inside a wrapper, so an unfinished line fails at the wrapper's closing
// brace ("Unexpected token '}'") instead of "Unexpected end of input",
// which is what the frontend looks for to decide that Enter continues the
// line. So the source is compiled twice, the second time with a different
// token after it: when the error moves with the token, it was at the end
// of the source, and the answer is V8's "Unexpected end of input"; when it
// stays, it is the source's own error, rethrown as is.
const syntaxCheck = `(function (src) {
  function err(s) { try { new Function(s); return null; } catch (e) { return e instanceof SyntaxError ? String(e.message) : null; } }
  var a = err(src);
  if (a === null) return;
  if (err(src + "\n]") !== a) throw new SyntaxError("Unexpected end of input");
  new Function(src);
})`

// compileScriptCommand checks syntax in the page without running the code
// (syntaxCheck). The frontend asks on Enter whether an expression is
// complete and reads only the exception's description. Differences from
// V8's script grammar (a top-level `return` passes) are documented; a kept
// (persistScript) script is refused: nothing would run it.
func compileScriptCommand(p *cdpRuntimeParams) (*sourceproto.RuntimeCommand, string, error) {
	if p.PersistScript {
		return nil, "", fmt.Errorf("persistScript: a page keeps no compiled scripts (Runtime.runScript is not offered); use Runtime.evaluate")
	}
	quoted, err := json.Marshal(p.Expression)
	if err != nil {
		return nil, "", fmt.Errorf("invalid expression: %v", err)
	}
	return &sourceproto.RuntimeCommand{Method: sourceproto.MethodEvaluate, Evaluate: &sourceproto.EvaluateParams{
		Expression: syntaxCheck + "(" + string(quoted) + ")", Silent: true,
	}}, "", nil
}

func callFunctionOnCommand(p *cdpRuntimeParams, r *handleResolver) (*sourceproto.RuntimeCommand, string, error) {
	c := &sourceproto.CallFunctionOnParams{
		FunctionDeclaration: p.FunctionDeclaration, Silent: p.Silent, ReturnByValue: p.ReturnByValue,
		GeneratePreview: p.GeneratePreview, UserGesture: p.UserGesture, AwaitPromise: p.AwaitPromise,
		ObjectGroup: p.ObjectGroup, ThrowOnSideEffect: p.ThrowOnSideEffect,
	}
	group := p.ObjectGroup
	if p.ObjectID != "" {
		h, e, err := r.handle(p.ObjectID)
		if err != nil {
			return nil, "", err
		}
		c.Handle = h
		if group == "" {
			group = e.Group
		}
	}
	for _, a := range p.Arguments {
		arg := sourceproto.CallArgument{Value: sourceproto.RawJSON(a.Value), UnserializableValue: a.UnserializableValue}
		if a.ObjectID != "" {
			h, _, err := r.handle(a.ObjectID)
			if err != nil {
				return nil, "", fmt.Errorf("argument: %w", err)
			}
			arg.Handle = h
		}
		c.Arguments = append(c.Arguments, arg)
	}
	return &sourceproto.RuntimeCommand{Method: sourceproto.MethodCallFunctionOn, CallFunctionOn: c}, group, nil
}

// objectMapper gives a result's handles objectIds in the window's table.
type objectMapper struct {
	t        *object.Table
	realm    string
	gen      uint64
	group    string
	ctxID    int
	scriptID func(url string) string
	ids      []string // added so far, for rollback
	full     bool     // the table refused one
	// noHandles renders objects without objectIds (a syntax check's
	// exception): the result is not acknowledged, so the page frees them.
	noHandles bool
}

func (m *objectMapper) id(handle string) string {
	if handle == "" || m.full || m.noHandles {
		return ""
	}
	id, ok := m.t.Add(object.Handle{Realm: m.realm, Generation: m.gen, ID: handle}, m.group)
	if !ok {
		m.full = true
		return ""
	}
	m.ids = append(m.ids, id)
	return id
}

// rollback forgets what was added: the result is not delivered.
func (m *objectMapper) rollback() {
	for _, id := range m.ids {
		m.t.Release(id)
	}
	m.ids = nil
}

// values is the projection of the result's values into the window.
func (m *objectMapper) values() *cdpproject.Values {
	return &cdpproject.Values{ObjectID: m.id, ScriptID: m.scriptID, ContextID: m.ctxID}
}
