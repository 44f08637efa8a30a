package cdpproject

import (
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	cdpruntime "github.com/chromedp/cdproto/runtime"

	"github.com/inspector-worker/inspector-worker/sourceproto"
)

// Values projects one page context's values into one window. The page's
// handles never reach a window: ObjectID gives each its objectId in the
// window's table.
type Values struct {
	// ObjectID returns the window's objectId for a page handle, "" for none
	// (the table refused it, or the result is not kept). nil: no objectIds.
	ObjectID func(handle string) string
	// ScriptID returns the scriptId the window knows for a script URL, ""
	// when none. nil: every scriptId is "".
	ScriptID func(url string) string
	// ContextID is the context's id in the windows.
	ContextID int
}

func (v *Values) objectID(handle string) string {
	if handle == "" || v.ObjectID == nil {
		return ""
	}
	return v.ObjectID(handle)
}

func (v *Values) scriptID(url string) cdp.ScriptID {
	if v.ScriptID == nil {
		return ""
	}
	return cdp.ScriptID(v.ScriptID(url))
}

// RemoteObject projects a page value; nil for nil.
func (v *Values) RemoteObject(o *sourceproto.RemoteObject) *cdpruntime.RemoteObject {
	if o == nil {
		return nil
	}
	return remoteObject(o, v.objectID(o.Handle))
}

// remoteObject is the one projection of a page value, with its objectId
// in the receiving window ("" for none).
func remoteObject(o *sourceproto.RemoteObject, objectID string) *cdpruntime.RemoteObject {
	return &cdpruntime.RemoteObject{
		Type: cdpruntime.RemoteObjectType(o.Type), Subtype: cdpruntime.RemoteObjectSubtype(o.Subtype), ClassName: o.ClassName,
		Value: objectValue(o), UnserializableValue: cdpruntime.UnserializableValue(o.UnserializableValue),
		Description: o.Description, ObjectID: cdpruntime.RemoteObjectID(objectID), Preview: Preview(o.Preview),
	}
}

// nullValue: the page protocol's decoder reads "value":null as absent;
// CDP's null object carries it.
var nullValue = jsonv2.Value("null")

// objectValue is a value's "value" member, nil when it has none. The
// decoder validated it already; it is shared, not copied: the projection
// lives no longer than the item it came from.
func objectValue(o *sourceproto.RemoteObject) jsonv2.Value {
	switch {
	case len(o.Value) > 0:
		return jsonv2.Value(o.Value)
	case o.Type == sourceproto.TypeObject && o.Subtype == "null":
		return nullValue
	}
	return nil
}

// Preview projects an object preview; nil for nil.
func Preview(p *sourceproto.ObjectPreview) *cdpruntime.ObjectPreview {
	if p == nil {
		return nil
	}
	out := &cdpruntime.ObjectPreview{Type: cdpruntime.ObjectPreviewType(p.Type), Subtype: cdpruntime.ObjectPreviewSubtype(p.Subtype),
		Description: p.Description, Overflow: p.Overflow, Properties: make([]*cdpruntime.PropertyPreview, 0, len(p.Properties))}
	for i := range p.Properties {
		pp := &p.Properties[i]
		out.Properties = append(out.Properties, &cdpruntime.PropertyPreview{Name: pp.Name, Type: cdpruntime.PropertyPreviewType(pp.Type),
			Value: pp.Value, ValuePreview: Preview(pp.ValuePreview), Subtype: cdpruntime.PropertyPreviewSubtype(pp.Subtype)})
	}
	for i := range p.Entries {
		e := &p.Entries[i]
		out.Entries = append(out.Entries, &cdpruntime.EntryPreview{Key: Preview(e.Key), Value: Preview(&e.Value)})
	}
	return out
}

// StackTrace projects a page's stack trace, naming each frame's script by
// the scriptId the window knows for its URL; nil for nil.
func (v *Values) StackTrace(st *sourceproto.StackTrace) *cdpruntime.StackTrace {
	if st == nil {
		return nil
	}
	out := &cdpruntime.StackTrace{Description: st.Description, CallFrames: make([]*cdpruntime.CallFrame, 0, len(st.CallFrames))}
	for i := range st.CallFrames {
		f := &st.CallFrames[i]
		out.CallFrames = append(out.CallFrames, &cdpruntime.CallFrame{FunctionName: f.FunctionName, ScriptID: v.scriptID(f.URL),
			URL: f.URL, LineNumber: f.LineNumber, ColumnNumber: f.ColumnNumber})
	}
	return out
}

// Exception projects exception details; nil for nil.
func (v *Values) Exception(d *sourceproto.ExceptionDetails) *cdpruntime.ExceptionDetails {
	if d == nil {
		return nil
	}
	out := &cdpruntime.ExceptionDetails{ExceptionID: d.ExceptionID, Text: d.Text, LineNumber: d.LineNumber, ColumnNumber: d.ColumnNumber,
		URL: d.URL, StackTrace: v.StackTrace(d.StackTrace), Exception: v.RemoteObject(d.Exception),
		ExecutionContextID: cdpruntime.ExecutionContextID(v.ContextID)}
	if d.URL != "" {
		out.ScriptID = v.scriptID(d.URL)
	}
	return out
}
