package hostrealm

import (
	"bytes"
	"net/url"
	"regexp"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/inspector-worker/inspector-worker/internal/cdpwire"
)

// The worker rewrites relayed messages in exactly these places, and nowhere else:
//
//  1. host → DevTools: every "url" member whose value is a bare absolute file
//     path (Node's CommonJS scripts, stack frames) becomes a file:// URL, so
//     the page-target frontend builds a proper Sources tree (RewriteFileURLs).
//  2. host → DevTools: Runtime.executionContextCreated gets auxData.frameId =
//     the main frame and isDefault = true (RewriteContextCreated); Node's
//     main context is named after the app instead of the node binary's path
//     (RenameHostContext).
//  3. DevTools → host: Debugger.setBreakpointByUrl with a file:// url is sent
//     as a urlRegex that matches both the file:// form (ES modules) and the bare
//     path form (CommonJS), so breakpoints bind whichever way Node names the
//     script, including scripts not parsed yet (MapBreakpointURL).
//
// Every rewrite splices new bytes into the original message: all other bytes,
// lone surrogates included, pass through untouched.

// urlPathMarker is how V8 serialises a "url" member holding an absolute path.
// V8 writes compact JSON, so a message without this byte sequence needs no
// rewrite and costs one scan (hasURLPath).
var urlPathMarker = []byte(`"url":"/`)

// hasURLPath is bytes.Contains(msg, urlPathMarker), found from its last
// byte: '/' is rare in most of what Node sends (a 5 MB string result has
// none), so IndexByte skips at memchr speed, where bytes.Index, put off by
// the quotes at the start of every message, fell back to its slower search
// (15% of the worker's CPU for a 5 MB answer).
func hasURLPath(msg []byte) bool {
	const pre = len(`"url":"`)
	for i := pre; i < len(msg); {
		k := bytes.IndexByte(msg[i:], '/')
		if k < 0 {
			return false
		}
		i += k
		if string(msg[i-pre:i]) == `"url":"` {
			return true
		}
		i++
	}
	return false
}

// RewriteFileURLs returns msg with bare-path "url" values turned into file://
// URLs, or msg itself when there is nothing to rewrite.
func RewriteFileURLs(msg []byte) []byte {
	if !hasURLPath(msg) {
		return msg
	}
	dec := jsontext.NewDecoder(bytes.NewReader(msg), cdpwire.DecodeOpts...)
	var out []byte
	last := int64(0)
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		if tok.Kind() != '"' || tok.String() != "url" || !isObjectName(dec) || dec.PeekKind() != '"' {
			continue
		}
		val, err := dec.ReadValue()
		if err != nil {
			break
		}
		end := dec.InputOffset()
		start := end - int64(len(val))
		path := cdpwire.Unquote(val)
		if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(msg)+64)
		}
		out = append(out, msg[last:start]...)
		out, _ = jsontext.AppendQuote(out, pathToFileURL(path))
		last = end
	}
	if out == nil {
		return msg
	}
	return append(out, msg[last:]...)
}

// isObjectName reports whether the token just read was a member name.
func isObjectName(dec *jsontext.Decoder) bool {
	kind, n := dec.StackIndex(dec.StackDepth())
	return kind == '{' && n%2 == 1
}

func pathToFileURL(p string) string {
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// RewriteContextCreated sets auxData.frameId and auxData.isDefault on a host
// Runtime.executionContextCreated event. The frontend attaches a context to a
// frame through auxData.frameId; without it the Console has no context to
// evaluate in on a page target. Other auxData members are kept.
func RewriteContextCreated(msg []byte, frameID string) []byte {
	start, end, ok := cdpwire.FindMember(msg, "params", "context", "auxData")
	if !ok {
		// No auxData: insert one right after the context's opening brace.
		cs, ce, ok := cdpwire.FindMember(msg, "params", "context")
		if !ok || msg[cs] != '{' {
			return msg
		}
		aux := appendAuxData(nil, nil, frameID)
		out := append(bytes.Clone(msg[:cs+1]), `"auxData":`...)
		out = append(out, aux...)
		if len(bytes.TrimSpace(msg[cs+1:ce-1])) > 0 {
			out = append(out, ',')
		}
		return append(out, msg[cs+1:]...)
	}
	aux := appendAuxData(nil, msg[start:end], frameID)
	out := append(bytes.Clone(msg[:start]), aux...)
	return append(out, msg[end:]...)
}

// RenameHostContext gives Node's main context (auxData.isDefault true, as
// Node sends it) the app's name. Node names it "<process title>[<pid>]",
// which under `run` is the node binary's full path: that is what the
// Console's context selector showed (the label is the context's name; the
// frame's name is only a fallback for an empty one). Other contexts (vm
// contexts, isDefault false) keep their names. Call it before
// RewriteContextCreated, which makes every context a default one.
func RenameHostContext(msg []byte, name string) []byte {
	as, ae, ok := cdpwire.FindMember(msg, "params", "context", "auxData", "isDefault")
	if !ok || string(msg[as:ae]) != "true" {
		return msg
	}
	ns, ne, ok := cdpwire.FindMember(msg, "params", "context", "name")
	if !ok || msg[ns] != '"' {
		return msg
	}
	out := bytes.Clone(msg[:ns])
	out, _ = jsontext.AppendQuote(out, name)
	return append(out, msg[ne:]...)
}

// appendAuxData copies the members of old (an object, may be nil) except
// frameId and isDefault, then adds those two.
func appendAuxData(b, old []byte, frameID string) []byte {
	b = append(b, '{')
	if len(old) > 0 {
		dec := jsontext.NewDecoder(bytes.NewReader(old), cdpwire.DecodeOpts...)
		if _, err := dec.ReadToken(); err == nil {
			for dec.PeekKind() != '}' {
				name, err := cdpwire.ReadName(dec)
				if err != nil {
					break
				}
				val, err := dec.ReadValue()
				if err != nil {
					break
				}
				if name == "frameId" || name == "isDefault" {
					continue
				}
				b, _ = jsontext.AppendQuote(b, name)
				b = append(b, ':')
				b = append(b, val...)
				b = append(b, ',')
			}
		}
	}
	b = append(b, `"isDefault":true,"frameId":`...)
	b, _ = jsontext.AppendQuote(b, frameID)
	return append(b, '}')
}

// MapBreakpointURL rewrites Debugger.setBreakpointByUrl params whose "url" is a
// file:// URL into an equivalent "urlRegex" that also matches the bare path
// Node uses for CommonJS scripts. Params without a file:// url come back
// unchanged. The params object is rebuilt member by member (it is small and
// DevTools-made), every other member's value copied as raw bytes.
func MapBreakpointURL(params []byte) []byte {
	dec := jsontext.NewDecoder(bytes.NewReader(params), cdpwire.DecodeOpts...)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return params
	}
	out := []byte{'{'}
	mapped := false
	for dec.PeekKind() == '"' {
		name, err := cdpwire.ReadName(dec)
		if err != nil {
			return params
		}
		val, err := dec.ReadValue()
		if err != nil {
			return params
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		if re, ok := fileURLRegex(name, val); ok && !mapped {
			out = append(out, `"urlRegex":`...)
			out, _ = jsontext.AppendQuote(out, re)
			mapped = true
			continue
		}
		out, _ = jsontext.AppendQuote(out, name)
		out = append(out, ':')
		out = append(out, val...)
	}
	if !mapped {
		return params
	}
	return append(out, '}')
}

// fileURLRegex returns the regex for a "url" member holding a file:// URL.
func fileURLRegex(name string, val jsontext.Value) (string, bool) {
	if name != "url" || val.Kind() != '"' {
		return "", false
	}
	raw := cdpwire.Unquote(val)
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", false
	}
	return "^(?:" + regexp.QuoteMeta(raw) + "|" + regexp.QuoteMeta(u.Path) + ")$", true
}
