package cdpwire

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// DecodeOpts tolerate what V8 and DevTools really send: lone surrogates
// ("\ud800") and invalid UTF-8 must survive, so strings are never normalised.
var DecodeOpts = []jsontext.Options{
	jsontext.AllowInvalidUTF8(true),
	jsontext.AllowDuplicateNames(true),
}

// Unquote is the string a JSON string value holds, or "" when it holds
// none (not a string, or lone surrogates with no UTF-8 form).
func Unquote(v jsontext.Value) string {
	b, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return ""
	}
	return string(b)
}

// ReadName reads an object member name. The string is copied: a jsontext
// Token is only valid until the decoder's next call.
func ReadName(dec *jsontext.Decoder) (string, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return "", err
	}
	if tok.Kind() != '"' {
		return "", fmt.Errorf("cdpserver: member name is a %v, not a string", tok.Kind())
	}
	return tok.String(), nil
}

// FindMember returns the byte range of the value at the given member path.
func FindMember(msg []byte, path ...string) (start, end int64, ok bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(msg), DecodeOpts...)
	for depth, want := range path {
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
			return 0, 0, false
		}
		found := false
		for dec.PeekKind() != '}' && dec.PeekKind() != 0 {
			name, err := ReadName(dec)
			if err != nil {
				return 0, 0, false
			}
			if name == want {
				found = true
				break
			}
			if err := dec.SkipValue(); err != nil {
				return 0, 0, false
			}
		}
		if !found {
			return 0, 0, false
		}
		if depth == len(path)-1 {
			val, err := dec.ReadValue()
			if err != nil {
				return 0, 0, false
			}
			end = dec.InputOffset()
			return end - int64(len(val)), end, true
		}
	}
	return 0, 0, false
}

// ReplaceParams returns msg with its "params" value replaced.
func ReplaceParams(msg, params []byte) []byte {
	s, e, ok := FindMember(msg, "params")
	if !ok {
		return msg
	}
	var b bytes.Buffer
	b.Grow(len(msg) + len(params))
	b.Write(msg[:s])
	b.Write(params)
	b.Write(msg[e:])
	return b.Bytes()
}
