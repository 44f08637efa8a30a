package cdpproject

import (
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/go-json-experiment/json/jsontext"
)

// encodeOptions: a page's strings reach the worker as the page made them;
// an invalid byte is sent as U+FFFD rather than the message refused.
var encodeOptions = jsonv2.AllowInvalidUTF8(true)

// Marshal encodes v, one of the worker's own CDP structs.
func Marshal(v any) ([]byte, error) { return jsonv2.Marshal(v, encodeOptions) }

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
