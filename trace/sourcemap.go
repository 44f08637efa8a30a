package trace

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Why the engine decodes source maps itself (see doc.go for the full
// argument): V8 reports GENERATED positions in every CDP event, even with
// --enable-source-maps, which only rewrites Error.stack text. The evidence
// compares the failure's file with the immediate cause's file, so both must
// be in the same coordinates; only a decoder of our own maps console and
// script positions too.

const (
	// maxSourceMapBytes bounds one map: tsc and esbuild maps of large bundles
	// are a few MiB; anything bigger is not worth the read loop's time.
	maxSourceMapBytes = 8 << 20
	// maxSessionMapBytes bounds all maps one session reads.
	maxSessionMapBytes = 64 << 20
	// maxMapSources bounds the sources array of one map.
	maxMapSources = 10_000
	// maxVLQShift stops a base64 VLQ digit run before it overflows 32 bits.
	maxVLQShift = 30
)

// errSourceMap marks a map that cannot be used; the script then stays
// unmapped (its positions are the compiled ones) and says why.
var errSourceMap = errors.New("trace: unusable source map")

type mapping struct {
	genCol int32
	src    int32 // -1: a segment without source (an unmapped range)
	line   int32
	col    int32
}

// sourceMap is a decoded Source Map v3 (no index maps).
type sourceMap struct {
	sources []string    // absolute paths; "" for a source that is not a file
	raw     []string    // the sources as the map names them (capped), for notes
	lines   [][]mapping // per generated line, sorted by genCol
}

// readSourceMap loads the map that script scriptPath names in its
// sourceMappingURL comment: an inline data: URL, or a file next to it. Files
// are read only from inside the workspace and within *budget bytes. It
// returns the map bytes and the directory its sources are relative to, or a
// note saying why no map is used.
func readSourceMap(root, scriptPath, ref string, budget *int64) (data []byte, base string, note string) {
	if strings.HasPrefix(ref, "data:") {
		data, err := decodeDataURL(ref)
		if err != nil {
			return nil, "", err.Error()
		}
		return data, filepath.Dir(scriptPath), ""
	}
	u, err := url.Parse(ref)
	var path string
	switch {
	case err != nil:
		return nil, "", fmt.Sprintf("source map URL %q: %v", ref, err)
	case u.Scheme == "file":
		path = mapFile(ref)
	case u.Scheme == "" && u.Host == "":
		path = filepath.Join(filepath.Dir(scriptPath), filepath.FromSlash(u.Path))
	}
	if path == "" {
		return nil, "", fmt.Sprintf("source map URL %q is neither a file nor inline", ref)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, "", fmt.Sprintf("source map %s: %v", path, err)
	}
	if !within(root, real) {
		return nil, "", fmt.Sprintf("source map %s is outside the workspace and is not read", real)
	}
	data, err = readBounded(real, min(maxSourceMapBytes, *budget))
	if err != nil {
		return nil, "", err.Error()
	}
	*budget -= int64(len(data))
	return data, filepath.Dir(real), ""
}

func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("source map: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("source map %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("source map %s is larger than %d bytes (per-map and per-session caps)", path, limit)
	}
	return data, nil
}

// decodeDataURL decodes data:[mediatype][;base64],payload.
func decodeDataURL(ref string) ([]byte, error) {
	meta, payload, ok := strings.Cut(strings.TrimPrefix(ref, "data:"), ",")
	if !ok {
		return nil, fmt.Errorf("%w: inline source map without a comma", errSourceMap)
	}
	if len(payload) > maxSourceMapBytes*4/3+4 {
		return nil, fmt.Errorf("%w: inline source map larger than %d bytes", errSourceMap, maxSourceMapBytes)
	}
	if strings.HasSuffix(meta, ";base64") {
		data, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			return nil, fmt.Errorf("%w: inline source map: %v", errSourceMap, err)
		}
		return data, nil
	}
	s, err := url.PathUnescape(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: inline source map: %v", errSourceMap, err)
	}
	return []byte(s), nil
}

// parseSourceMap decodes a v3 map whose relative sources live under base.
func parseSourceMap(data []byte, base string) (*sourceMap, error) {
	var raw struct {
		Version    int            `json:"version"`
		Sources    []string       `json:"sources"`
		SourceRoot string         `json:"sourceRoot"`
		Mappings   string         `json:"mappings"`
		Sections   jsontext.Value `json:"sections"`
	}
	if err := json.Unmarshal(data, &raw, jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)); err != nil {
		return nil, fmt.Errorf("%w: %v", errSourceMap, err)
	}
	switch {
	case raw.Version != 3:
		return nil, fmt.Errorf("%w: version %d, want 3", errSourceMap, raw.Version)
	case len(raw.Sections) > 0:
		return nil, fmt.Errorf("%w: index maps (sections) are not supported", errSourceMap)
	case len(raw.Sources) > maxMapSources:
		return nil, fmt.Errorf("%w: %d sources (cap %d)", errSourceMap, len(raw.Sources), maxMapSources)
	}
	sm := &sourceMap{sources: make([]string, len(raw.Sources)), raw: make([]string, len(raw.Sources))}
	for i, s := range raw.Sources {
		sm.sources[i] = sourcePath(base, raw.SourceRoot, s)
		sm.raw[i], _ = capText(s, 200)
	}
	lines, err := decodeMappings(raw.Mappings, len(raw.Sources))
	if err != nil {
		return nil, err
	}
	sm.lines = lines
	return sm, nil
}

// sourcePath resolves one entry of "sources" to an absolute file path, or ""
// when it names no file (webpack://, http:, …).
func sourcePath(base, root, src string) string {
	if root != "" && !strings.Contains(src, "://") && !strings.HasPrefix(src, "/") {
		src = strings.TrimSuffix(root, "/") + "/" + src
	}
	if strings.HasPrefix(src, "file://") || strings.HasPrefix(src, "/") {
		return mapFile(src)
	}
	if u, err := url.Parse(src); err != nil || u.Scheme != "" || u.Host != "" {
		return ""
	}
	if p, err := url.PathUnescape(src); err == nil {
		src = p
	}
	return filepath.Join(base, filepath.FromSlash(src))
}

// decodeMappings decodes the "mappings" string: lines separated by ';',
// segments by ',', each segment 1, 4 or 5 base64 VLQ fields relative to the
// previous segment. Every field is range-checked, so a hostile map yields an
// error, never a panic or a huge allocation (the input is already bounded).
func decodeMappings(s string, nSources int) ([][]mapping, error) {
	lines := make([][]mapping, 0, strings.Count(s, ";")+1)
	var src, line, col, name int64
	for lineText := range strings.SplitSeq(s, ";") {
		var segs []mapping
		genCol := int64(0)
		for seg := range strings.SplitSeq(lineText, ",") {
			if seg == "" {
				continue
			}
			f, n, err := decodeSegment(seg)
			if err != nil {
				return nil, err
			}
			genCol += f[0]
			m := mapping{src: -1}
			if n >= 4 {
				src, line, col = src+f[1], line+f[2], col+f[3]
				if src >= int64(nSources) || src < 0 || line < 0 || col < 0 {
					return nil, fmt.Errorf("%w: segment %q points outside the sources or before line 1", errSourceMap, seg)
				}
				m = mapping{src: int32(src), line: int32(line), col: int32(col)}
			}
			if n == 5 {
				name += f[4]
			}
			if genCol < 0 || genCol > math.MaxInt32 || line > math.MaxInt32 || col > math.MaxInt32 {
				return nil, fmt.Errorf("%w: segment %q is out of range", errSourceMap, seg)
			}
			m.genCol = int32(genCol)
			segs = append(segs, m)
		}
		slices.SortStableFunc(segs, func(a, b mapping) int { return int(a.genCol) - int(b.genCol) })
		lines = append(lines, segs)
	}
	_ = name // names are not used: frames keep V8's function names
	return lines, nil
}

// decodeSegment decodes up to five VLQ fields and reports how many.
func decodeSegment(seg string) ([5]int64, int, error) {
	var f [5]int64
	n := 0
	var value int64
	shift := 0
	for i := 0; i < len(seg); i++ {
		d := strings.IndexByte(base64Alphabet, seg[i])
		if d < 0 {
			return f, 0, fmt.Errorf("%w: %q is not a base64 VLQ digit", errSourceMap, seg[i])
		}
		if shift > maxVLQShift {
			return f, 0, fmt.Errorf("%w: VLQ value too large in %q", errSourceMap, seg)
		}
		value |= int64(d&31) << shift
		if d&32 != 0 {
			shift += 5
			continue
		}
		if n == len(f) {
			return f, 0, fmt.Errorf("%w: segment %q has more than 5 fields", errSourceMap, seg)
		}
		if value&1 != 0 {
			f[n] = -(value >> 1)
		} else {
			f[n] = value >> 1
		}
		n++
		value, shift = 0, 0
	}
	if shift != 0 {
		return f, 0, fmt.Errorf("%w: segment %q ends inside a VLQ value", errSourceMap, seg)
	}
	if n != 1 && n != 4 && n != 5 {
		return f, 0, fmt.Errorf("%w: segment %q has %d fields, want 1, 4 or 5", errSourceMap, seg, n)
	}
	return f, n, nil
}

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// lookup maps a 0-based generated position to the original one: the last
// segment of that line starting at or before col, or the line's first
// segment when col lies in its leading indentation. Positions in unmapped
// ranges or lines report false.
func (sm *sourceMap) lookup(line0, col0 int) (Location, bool) {
	loc, why := sm.lookupWhy(line0, col0)
	return loc, why == ""
}

// lookupWhy is lookup that says why a position does not map.
func (sm *sourceMap) lookupWhy(line0, col0 int) (Location, string) {
	if line0 < 0 || line0 >= len(sm.lines) || len(sm.lines[line0]) == 0 {
		return Location{}, "the source map has no mapping for compiled line " + strconv.Itoa(line0+1)
	}
	segs := sm.lines[line0]
	i, _ := slices.BinarySearchFunc(segs, col0, func(m mapping, c int) int {
		if int(m.genCol) <= c {
			return -1
		}
		return 1
	})
	i = max(i-1, 0)
	m := segs[i]
	switch {
	case m.src < 0:
		return Location{}, "the source map leaves this compiled position unmapped"
	case sm.sources[m.src] == "":
		return Location{}, fmt.Sprintf("the source map names %q, which is not a file the engine can resolve", sm.raw[m.src])
	}
	return Location{File: sm.sources[m.src], Line: oneBased(int(m.line)), Column: oneBased(int(m.col))}, ""
}
