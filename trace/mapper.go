package trace

import (
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Caps on what one event may hold. Every string that comes from the target
// goes through capText; every list has a count bound.
const (
	// maxValueChars bounds one value preview and an event's detail text:
	// enough to recognise a value, too little to copy a secret-laden blob.
	maxValueChars = 500
	// maxLineChars bounds one stored output line; the rest of the line is
	// discarded (the event says so).
	maxLineChars = 1000
	// maxStackChars bounds Error.stack text (user frames only).
	maxStackChars = 4000
	// maxValues bounds the console arguments kept per event.
	maxValues = 10
	// maxFrames bounds the user frames kept per call stack.
	maxFrames = 10
	// maxPreviewProps bounds the properties rendered from a V8 preview.
	maxPreviewProps = 8
	// maxScripts bounds the user scripts remembered per session for mapping.
	maxScripts = 10_000
)

// capText returns s cut to at most n characters (runes), invalid UTF-8
// replaced, and whether it was cut. A cut string ends in "…" within n.
func capText(s string, n int) (string, bool) {
	cut := len(s) > n*utf8.UTFMax
	if cut {
		s = s[:n*utf8.UTFMax] // never scan a huge string in full
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !cut && utf8.RuneCountInString(s) <= n {
		return s, false
	}
	count := 0
	for i := range s {
		if count == n-1 {
			return s[:i] + "…", true
		}
		count++
	}
	return s + "…", true // invalid bytes collapsed below n-1 runes
}

// mapFile is the ONE place that turns a URL reported by V8 into a file path:
// file:// URLs and absolute paths become clean paths; node:internal, node:,
// eval (empty URL), data:, http(s) and every other scheme become "" and are
// filtered out by the callers.
func mapFile(raw string) string {
	switch {
	case strings.HasPrefix(raw, "file://"):
		u, err := url.Parse(raw)
		if err != nil || (u.Host != "" && u.Host != "localhost") || !filepath.IsAbs(u.Path) {
			return ""
		}
		return filepath.Clean(u.Path)
	case strings.HasPrefix(raw, "/"):
		return filepath.Clean(raw)
	}
	return ""
}

// oneBased converts a CDP 0-based line or column to 1-based; negative (V8's
// "unknown") becomes 0, which the wire omits.
func oneBased(n int) int {
	if n < 0 {
		return 0
	}
	return n + 1
}

// scriptInfo is what the mapper remembers of one user script.
type scriptInfo struct {
	path string
	smap *sourceMap // nil: no map, or it could not be used (see note)
	note string     // why a declared map is not used
}

// mapper resolves CDP positions to Locations. It is owned by the session's
// readLoop: no locking.
type mapper struct {
	root    string                 // workspace; maps are read only from inside it
	scripts map[string]*scriptInfo // by CDP scriptId; user scripts only
	byPath  map[string]*scriptInfo
	budget  int64 // source-map bytes this session may still read
	// preload is the path of the engine's preload (preload.go): never a
	// user script, and the only source of child reports.
	preload string
	// mainContext is the id of Node's default execution context (0 until
	// Runtime.enable reported it). Its destruction is how the engine learns
	// that the script ended: from the protocol, never from stderr text the
	// target could print too.
	mainContext int
}

func newMapper(root, preload string) *mapper {
	return &mapper{
		root:    root,
		preload: preload,
		scripts: map[string]*scriptInfo{},
		byPath:  map[string]*scriptInfo{},
		budget:  maxSessionMapBytes,
	}
}

// addScript records a parsed script. It returns nil for scripts that are not
// user files (node:internal, eval, wasm, data: …).
func (m *mapper) addScript(id, rawURL, sourceMapURL string) *scriptInfo {
	path := mapFile(rawURL)
	if path == "" || (m.preload != "" && path == m.preload) {
		return nil
	}
	info := &scriptInfo{path: path}
	if sourceMapURL != "" {
		info.smap, info.note = m.loadMap(path, sourceMapURL)
	}
	if len(m.scripts) < maxScripts {
		m.scripts[id] = info
		m.byPath[path] = info
	}
	return info
}

func (m *mapper) loadMap(scriptPath, ref string) (*sourceMap, string) {
	data, base, note := readSourceMap(m.root, scriptPath, ref, &m.budget)
	if note != "" {
		return nil, note
	}
	sm, err := parseSourceMap(data, base)
	if err != nil {
		return nil, err.Error()
	}
	return sm, ""
}

// position resolves a 0-based CDP position. It returns nil for non-user code.
// When the script has a usable source map and the position maps, loc is the
// original position and gen the compiled one. When the script declares a
// source map that cannot be used for this position, loc is the compiled
// position and note says why: the evidence then never treats loc as the
// original source (see confidence).
func (m *mapper) position(scriptID, rawURL string, line0, col0 int) (loc, gen *Location, note string) {
	path := mapFile(rawURL)
	info := m.scripts[scriptID]
	if m.preload != "" && path == m.preload {
		return nil, nil, "" // the engine's own preload is not user code
	}
	if path == "" {
		if rawURL != "" || info == nil {
			return nil, nil, ""
		}
		path = info.path // V8 sometimes leaves url empty but names a known user script
	}
	if info == nil || info.path != path {
		info = m.byPath[path]
	}
	here := &Location{File: path, Line: oneBased(line0), Column: oneBased(col0)}
	switch {
	case info == nil:
		return here, nil, ""
	case info.note != "":
		return here, nil, "declared source map not used: " + info.note
	case info.smap == nil:
		return here, nil, ""
	case line0 < 0:
		return here, nil, "no line to look up in the declared source map"
	}
	orig, why := info.smap.lookupWhy(line0, max(col0, 0))
	if why != "" {
		return here, nil, why
	}
	return &orig, here, ""
}

// cdpStackTrace is Runtime.StackTrace; parents (async chains) are not read.
type cdpStackTrace struct {
	CallFrames []cdpCallFrame `json:"callFrames"`
}

type cdpCallFrame struct {
	FunctionName string `json:"functionName"`
	ScriptID     string `json:"scriptId"`
	URL          string `json:"url"`
	LineNumber   int    `json:"lineNumber"`
	ColumnNumber int    `json:"columnNumber"`
}

// frames keeps the user frames of st (at most maxFrames).
func (m *mapper) frames(st *cdpStackTrace) []Frame {
	if st == nil {
		return nil
	}
	var out []Frame
	for _, cf := range st.CallFrames {
		loc, gen, note := m.position(cf.ScriptID, cf.URL, cf.LineNumber, cf.ColumnNumber)
		if loc == nil {
			continue
		}
		fn, _ := capText(cf.FunctionName, maxValueChars)
		out = append(out, Frame{Function: fn, Location: *loc, Generated: gen, mapNote: note})
		if len(out) == maxFrames {
			break
		}
	}
	return out
}

// userStack keeps the message lines of an Error.stack text and the "at"
// lines that point at user code, so node:internal frames never surface.
func userStack(stack string) string {
	var b strings.Builder
	for line := range strings.Lines(stack) {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "at ") && (strings.Contains(t, "(node:") || strings.HasPrefix(t, "at node:") ||
			strings.Contains(t, "(<anonymous>)") || strings.Contains(t, "(eval at ")) {
			continue
		}
		b.WriteString(line)
	}
	s, _ := capText(strings.TrimRight(b.String(), "\n"), maxStackChars)
	return s
}

// cdpRemoteObject is Runtime.RemoteObject minus objectId, which is never
// decoded, stored or used.
type cdpRemoteObject struct {
	Type                string         `json:"type"`
	Subtype             string         `json:"subtype"`
	ClassName           string         `json:"className"`
	Value               jsontext.Value `json:"value"`
	UnserializableValue string         `json:"unserializableValue"`
	Description         string         `json:"description"`
	Preview             *cdpPreview    `json:"preview"`
}

type cdpPreview struct {
	Overflow   bool `json:"overflow"`
	Properties []struct {
		Name  string `json:"name"`
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"properties"`
}

// valueOf is the shallow preview of a remote object, from what V8 sent
// along: unserializableValue first (NaN, -0, Infinity, 12n), then the
// primitive value, then V8's own one-level preview, then its description.
func valueOf(o cdpRemoteObject) Value {
	v := Value{Type: o.Type, Subtype: o.Subtype}
	v.Text, v.Truncated = capText(remoteText(o), maxValueChars)
	return v
}

func remoteText(o cdpRemoteObject) string {
	switch {
	case o.UnserializableValue != "":
		return o.UnserializableValue
	case o.Type == "undefined":
		return "undefined"
	case o.Subtype == "null":
		return "null"
	case o.Type == "string" && len(o.Value) > 0:
		var s string
		if json.Unmarshal(o.Value, &s, jsontext.AllowInvalidUTF8(true)) == nil {
			return s
		}
	case len(o.Value) > 0 && o.Type != "object" && o.Type != "function":
		return string(o.Value)
	case o.Subtype == "error" && o.Description != "":
		return userStack(o.Description) // an Error's description is its stack: user frames only
	case o.Preview != nil && len(o.Preview.Properties) > 0:
		return previewText(o)
	}
	if o.Description != "" {
		return o.Description
	}
	return "[" + o.Type + "]"
}

// previewText renders V8's one-level preview as {a: 1, b: "x"} or [1, 2].
func previewText(o cdpRemoteObject) string {
	open, closing := "{", "}"
	if o.Subtype == "array" {
		open, closing = "[", "]"
	}
	var b strings.Builder
	if o.Subtype != "array" && o.ClassName != "" && o.ClassName != "Object" {
		b.WriteString(o.ClassName + " ")
	}
	b.WriteString(open)
	for i, p := range o.Preview.Properties {
		if i == maxPreviewProps {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if o.Subtype != "array" {
			b.WriteString(p.Name + ": ")
		}
		if p.Type == "string" {
			b.WriteString(`"` + p.Value + `"`)
		} else {
			b.WriteString(p.Value)
		}
	}
	if o.Preview.Overflow && len(o.Preview.Properties) <= maxPreviewProps {
		b.WriteString(", …")
	}
	b.WriteString(closing)
	return b.String()
}
