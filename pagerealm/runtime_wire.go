package pagerealm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	cdpruntime "github.com/chromedp/cdproto/runtime"

	"github.com/inspector-worker/inspector-worker/object"
	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// The one boundary between CDP Runtime and the page protocol: a window's
// request params become a runtime.command (objectIds → the page's
// handles), and a runtime.result becomes the CDP answer (handles → the
// window's objectIds), built with cdproto's Runtime types.

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
	// projectRuntimeResult.
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
	return projectRuntimeResult(res, m)
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
	CompileScript = &Runtime{answer: compileScriptAnswer, keepsNoObjects: true,
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

func (m *objectMapper) id(handle string) cdpruntime.RemoteObjectID {
	if handle == "" || m.full || m.noHandles {
		return ""
	}
	id, ok := m.t.Add(object.Handle{Realm: m.realm, Generation: m.gen, ID: handle}, m.group)
	if !ok {
		m.full = true
		return ""
	}
	m.ids = append(m.ids, id)
	return cdpruntime.RemoteObjectID(id)
}

// rollback forgets what was added: the result is not delivered.
func (m *objectMapper) rollback() {
	for _, id := range m.ids {
		m.t.Release(id)
	}
	m.ids = nil
}

// getPropertiesAnswer is cdproto's GetPropertiesResult with "result"
// always present: the frontend reads it without checking.
type getPropertiesAnswer struct {
	Result             []*cdpruntime.PropertyDescriptor         `json:"result"`
	InternalProperties []*cdpruntime.InternalPropertyDescriptor `json:"internalProperties,omitempty"`
	PrivateProperties  []*cdpruntime.PrivatePropertyDescriptor  `json:"privateProperties,omitempty"`
	ExceptionDetails   *cdpruntime.ExceptionDetails             `json:"exceptionDetails,omitempty"`
}

// namesAnswer is GlobalLexicalScopeNames' answer with "names" always present.
type namesAnswer struct {
	Names []string `json:"names"`
}

// projectRuntimeResult renders a successful runtime.result as the CDP
// answer's result object.
func projectRuntimeResult(res *sourceproto.RuntimeResult, m *objectMapper) ([]byte, error) {
	var v any
	switch res.Method {
	case sourceproto.MethodEvaluate:
		v = &cdpruntime.EvaluateResult{Result: m.object(&res.Evaluate.Result), ExceptionDetails: m.exception(res.Evaluate.ExceptionDetails)}
	case sourceproto.MethodCallFunctionOn:
		v = &cdpruntime.CallFunctionOnResult{Result: m.object(&res.CallFunctionOn.Result), ExceptionDetails: m.exception(res.CallFunctionOn.ExceptionDetails)}
	case sourceproto.MethodAwaitPromise:
		v = &cdpruntime.AwaitPromiseResult{Result: m.object(&res.AwaitPromise.Result), ExceptionDetails: m.exception(res.AwaitPromise.ExceptionDetails)}
	case sourceproto.MethodGetProperties:
		v = m.properties(res.GetProperties)
	case sourceproto.MethodGlobalLexicalScopeNames:
		v = &namesAnswer{Names: append([]string{}, res.GlobalLexicalScopeNames.Names...)}
	case sourceproto.MethodReleaseObject, sourceproto.MethodReleaseObjectGroup:
		return []byte(`{}`), nil
	default:
		return nil, fmt.Errorf("the page answered an unknown method %q", res.Method)
	}
	return jsonv2.Marshal(v, jsonv2.AllowInvalidUTF8(true))
}

// compileScriptAnswer renders the page's answer to a syntax check
// (compileScriptCommand): no scriptId (nothing is kept), the SyntaxError
// when there is one.
func compileScriptAnswer(res *sourceproto.RuntimeResult, m *objectMapper) ([]byte, error) {
	if res.Method != sourceproto.MethodEvaluate {
		return nil, fmt.Errorf("the page answered %q to a syntax check", res.Method)
	}
	v := &cdpruntime.CompileScriptResult{ExceptionDetails: m.exception(res.Evaluate.ExceptionDetails)}
	return jsonv2.Marshal(v, jsonv2.AllowInvalidUTF8(true))
}

func (m *objectMapper) properties(r *sourceproto.GetPropertiesResult) *getPropertiesAnswer {
	out := &getPropertiesAnswer{Result: make([]*cdpruntime.PropertyDescriptor, 0, len(r.Result)), ExceptionDetails: m.exception(r.ExceptionDetails)}
	for i := range r.Result {
		d := &r.Result[i]
		out.Result = append(out.Result, &cdpruntime.PropertyDescriptor{
			Name: d.Name, Value: m.object(d.Value), Writable: d.Writable.V, Get: m.object(d.Get), Set: m.object(d.Set),
			Configurable: d.Configurable, Enumerable: d.Enumerable, WasThrown: d.WasThrown, IsOwn: d.IsOwn, Symbol: m.object(d.Symbol),
		})
	}
	for i := range r.InternalProperties {
		d := &r.InternalProperties[i]
		out.InternalProperties = append(out.InternalProperties, &cdpruntime.InternalPropertyDescriptor{Name: d.Name, Value: m.object(d.Value)})
	}
	for i := range r.PrivateProperties {
		d := &r.PrivateProperties[i]
		out.PrivateProperties = append(out.PrivateProperties, &cdpruntime.PrivatePropertyDescriptor{
			Name: d.Name, Value: m.object(d.Value), Get: m.object(d.Get), Set: m.object(d.Set)})
	}
	return out
}

func (m *objectMapper) object(o *sourceproto.RemoteObject) *cdpruntime.RemoteObject {
	if o == nil {
		return nil
	}
	out := &cdpruntime.RemoteObject{
		Type: cdpruntime.RemoteObjectType(o.Type), Subtype: cdpruntime.RemoteObjectSubtype(o.Subtype), ClassName: o.ClassName,
		UnserializableValue: cdpruntime.UnserializableValue(o.UnserializableValue), Description: o.Description,
		ObjectID: m.id(o.Handle), Preview: preview(o.Preview),
	}
	switch {
	case len(o.Value) > 0:
		out.Value = jsonv2.Value(append([]byte(nil), o.Value...))
	case o.Type == sourceproto.TypeObject && o.Subtype == "null":
		out.Value = jsonv2.Value("null") // the decoder reads "value":null as absent
	}
	return out
}

func preview(p *sourceproto.ObjectPreview) *cdpruntime.ObjectPreview {
	if p == nil {
		return nil
	}
	out := &cdpruntime.ObjectPreview{Type: cdpruntime.ObjectPreviewType(p.Type), Subtype: cdpruntime.ObjectPreviewSubtype(p.Subtype),
		Description: p.Description, Overflow: p.Overflow, Properties: make([]*cdpruntime.PropertyPreview, 0, len(p.Properties))}
	for i := range p.Properties {
		pp := &p.Properties[i]
		out.Properties = append(out.Properties, &cdpruntime.PropertyPreview{Name: pp.Name, Type: cdpruntime.PropertyPreviewType(pp.Type),
			Value: pp.Value, ValuePreview: preview(pp.ValuePreview), Subtype: cdpruntime.PropertyPreviewSubtype(pp.Subtype)})
	}
	for i := range p.Entries {
		e := &p.Entries[i]
		out.Entries = append(out.Entries, &cdpruntime.EntryPreview{Key: preview(e.Key), Value: preview(&e.Value)})
	}
	return out
}

func (m *objectMapper) exception(d *sourceproto.ExceptionDetails) *cdpruntime.ExceptionDetails {
	if d == nil {
		return nil
	}
	out := &cdpruntime.ExceptionDetails{ExceptionID: d.ExceptionID, Text: d.Text, LineNumber: d.LineNumber, ColumnNumber: d.ColumnNumber,
		URL: d.URL, Exception: m.object(d.Exception), ExecutionContextID: cdpruntime.ExecutionContextID(m.ctxID)}
	if d.URL != "" && m.scriptID != nil {
		out.ScriptID = cdp.ScriptID(m.scriptID(d.URL))
	}
	if st := d.StackTrace; st != nil {
		out.StackTrace = &cdpruntime.StackTrace{Description: st.Description, CallFrames: make([]*cdpruntime.CallFrame, 0, len(st.CallFrames))}
		for _, f := range st.CallFrames {
			cf := &cdpruntime.CallFrame{FunctionName: f.FunctionName, URL: f.URL, LineNumber: f.LineNumber, ColumnNumber: f.ColumnNumber}
			if m.scriptID != nil {
				cf.ScriptID = cdp.ScriptID(m.scriptID(f.URL))
			}
			out.StackTrace.CallFrames = append(out.StackTrace.CallFrames, cf)
		}
	}
	return out
}
