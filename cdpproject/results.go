package cdpproject

import (
	"fmt"

	cdpruntime "github.com/chromedp/cdproto/runtime"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

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

// RuntimeResult renders a page's successful runtime.result as the CDP
// answer's result object.
func RuntimeResult(res *sourceproto.RuntimeResult, v *Values) ([]byte, error) {
	var out any
	switch res.Method {
	case sourceproto.MethodEvaluate:
		out = &cdpruntime.EvaluateResult{Result: v.RemoteObject(&res.Evaluate.Result), ExceptionDetails: v.Exception(res.Evaluate.ExceptionDetails)}
	case sourceproto.MethodCallFunctionOn:
		out = &cdpruntime.CallFunctionOnResult{Result: v.RemoteObject(&res.CallFunctionOn.Result), ExceptionDetails: v.Exception(res.CallFunctionOn.ExceptionDetails)}
	case sourceproto.MethodAwaitPromise:
		out = &cdpruntime.AwaitPromiseResult{Result: v.RemoteObject(&res.AwaitPromise.Result), ExceptionDetails: v.Exception(res.AwaitPromise.ExceptionDetails)}
	case sourceproto.MethodGetProperties:
		out = v.properties(res.GetProperties)
	case sourceproto.MethodGlobalLexicalScopeNames:
		out = &namesAnswer{Names: append([]string{}, res.GlobalLexicalScopeNames.Names...)}
	case sourceproto.MethodReleaseObject, sourceproto.MethodReleaseObjectGroup:
		return []byte(`{}`), nil
	default:
		return nil, fmt.Errorf("the page answered an unknown method %q", res.Method)
	}
	return Marshal(out)
}

// CompileScriptResult renders the page's answer to a syntax check: no
// scriptId (nothing is kept), the SyntaxError when there is one.
func CompileScriptResult(res *sourceproto.RuntimeResult, v *Values) ([]byte, error) {
	if res.Method != sourceproto.MethodEvaluate {
		return nil, fmt.Errorf("the page answered %q to a syntax check", res.Method)
	}
	return Marshal(&cdpruntime.CompileScriptResult{ExceptionDetails: v.Exception(res.Evaluate.ExceptionDetails)})
}

func (v *Values) properties(r *sourceproto.GetPropertiesResult) *getPropertiesAnswer {
	out := &getPropertiesAnswer{Result: make([]*cdpruntime.PropertyDescriptor, 0, len(r.Result)), ExceptionDetails: v.Exception(r.ExceptionDetails)}
	for i := range r.Result {
		d := &r.Result[i]
		out.Result = append(out.Result, &cdpruntime.PropertyDescriptor{
			Name: d.Name, Value: v.RemoteObject(d.Value), Writable: d.Writable.V, Get: v.RemoteObject(d.Get), Set: v.RemoteObject(d.Set),
			Configurable: d.Configurable, Enumerable: d.Enumerable, WasThrown: d.WasThrown, IsOwn: d.IsOwn, Symbol: v.RemoteObject(d.Symbol),
		})
	}
	for i := range r.InternalProperties {
		d := &r.InternalProperties[i]
		out.InternalProperties = append(out.InternalProperties, &cdpruntime.InternalPropertyDescriptor{Name: d.Name, Value: v.RemoteObject(d.Value)})
	}
	for i := range r.PrivateProperties {
		d := &r.PrivateProperties[i]
		out.PrivateProperties = append(out.PrivateProperties, &cdpruntime.PrivatePropertyDescriptor{
			Name: d.Name, Value: v.RemoteObject(d.Value), Get: v.RemoteObject(d.Get), Set: v.RemoteObject(d.Set)})
	}
	return out
}
