package cdpproject

import (
	"github.com/chromedp/cdproto/cdp/jsonv2"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// encodeOptions: a page's strings reach the worker as the page made them;
// an invalid byte is sent as U+FFFD rather than the message refused. And
// every RemoteObject is written as remoteObjectWire.
var encodeOptions = json.JoinOptions(
	jsonv2.AllowInvalidUTF8(true),
	json.WithMarshalers(json.MarshalToFunc(func(enc *jsontext.Encoder, o *cdpruntime.RemoteObject) error {
		if o == nil {
			return enc.WriteToken(jsontext.Null)
		}
		return json.MarshalEncode(enc, (*remoteObjectWire)(o))
	})),
)

// remoteObjectWire is cdpruntime.RemoteObject with "value" left out only
// when absent. cdproto tags it omitempty, and jsonv2's omitempty leaves out
// a value that encodes as null, "", {} or []: a null object, an empty
// string or an empty array by value lost their value (V8 sends it), which
// the frontend then shows as undefined. Same fields, so a pointer converts.
type remoteObjectWire struct {
	Type                cdpruntime.RemoteObjectType     `json:"type"`
	Subtype             cdpruntime.RemoteObjectSubtype  `json:"subtype,omitempty,omitzero"`
	ClassName           string                          `json:"className,omitempty,omitzero"`
	Value               jsonv2.Value                    `json:"value,omitzero"`
	UnserializableValue cdpruntime.UnserializableValue  `json:"unserializableValue,omitempty,omitzero"`
	Description         string                          `json:"description,omitempty,omitzero"`
	DeepSerializedValue *cdpruntime.DeepSerializedValue `json:"deepSerializedValue,omitempty,omitzero"`
	ObjectID            cdpruntime.RemoteObjectID       `json:"objectId,omitempty,omitzero"`
	Preview             *cdpruntime.ObjectPreview       `json:"preview,omitempty,omitzero"`
	CustomPreview       *cdpruntime.CustomPreview       `json:"customPreview,omitempty,omitzero"`
}

// Marshal encodes v, one of the worker's own CDP structs.
func Marshal(v any) ([]byte, error) { return json.Marshal(v, encodeOptions) }

// mustMarshal is Marshal for the worker's own structs, which always encode:
// a failure is a bug that must show, not a message silently missing.
func mustMarshal(v any) []byte {
	b, err := Marshal(v)
	if err != nil {
		panic("cdpproject: encoding " + err.Error())
	}
	return b
}

type event struct {
	Method string `json:"method"`
	Params any    `json:"params"`
}

// Event is a CDP event (or a request without an id): method first, as the
// frontend and the worker's own prefix checks read it.
func Event(method string, params any) []byte { return mustMarshal(event{method, params}) }

// Raw is params already encoded (a window's own request params, replayed).
func Raw(params []byte) jsontext.Value { return jsontext.Value(params) }
