package trace

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixtureMap(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "sourcemap", "app.js.map"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestFixtureMapLookup checks the decoder against positions tsc wrote (see
// testdata/sourcemap/app.ts for the lines).
func TestFixtureMapLookup(t *testing.T) {
	sm, err := parseSourceMap(fixtureMap(t), "/ws")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line0, col0 int
		want        Location
		ok          bool
	}{
		{0, 0, Location{"/ws/app.ts", 9, 1}, true},    // function parse(
		{7, 8, Location{"/ws/app.ts", 17, 5}, true},   // throw new RangeError(
		{7, 14, Location{"/ws/app.ts", 17, 11}, true}, // new RangeError(
		{7, 0, Location{"/ws/app.ts", 17, 5}, true},   // indentation maps to the line's first segment
		{5, 4, Location{"/ws/app.ts", 15, 3}, true},   // console.log(
		{12, 4, Location{"/ws/app.ts", 23, 3}, true},  // check(parse(raw))
		{14, 0, Location{}, false},                    // the sourceMappingURL comment
		{99, 0, Location{}, false},
		{-1, 0, Location{}, false},
	} {
		got, ok := sm.lookup(tc.line0, tc.col0)
		if ok != tc.ok || got != tc.want {
			t.Errorf("lookup(%d, %d) = %+v, %v; want %+v, %v", tc.line0, tc.col0, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDecodeSegment(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int64
		err  bool
	}{
		{"A", []int64{0}, false},
		{"AAAA", []int64{0, 0, 0, 0}, false},
		{"AAQA", []int64{0, 0, 8, 0}, false},
		{"D", []int64{-1}, false},
		{"gB", []int64{16}, false},
		{"AAAAA", []int64{0, 0, 0, 0, 0}, false},
		{"AA", nil, true},     // 2 fields
		{"AAAAAA", nil, true}, // 6 fields
		{"g", nil, true},      // ends inside a value
		{"A*", nil, true},     // not base64
		{"gggggggggggA", nil, true},
	} {
		f, n, err := decodeSegment(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("decodeSegment(%q) error = %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if err == nil && (n != len(tc.want) || !equalPrefix(f[:n], tc.want)) {
			t.Errorf("decodeSegment(%q) = %v, want %v", tc.in, f[:n], tc.want)
		}
	}
}

func equalPrefix(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDecodeMappingsRejects(t *testing.T) {
	for _, m := range []string{
		"ACAA",       // source 1 of 1
		"AAfA",       // line -16
		"AAAf",       // column -16
		"AA",         // 2 fields
		"f",          // generated column -16
		"AAAA;;A%AA", // not base64
	} {
		if _, err := decodeMappings(m, 1); !errors.Is(err, errSourceMap) {
			t.Errorf("decodeMappings(%q) = %v, want errSourceMap", m, err)
		}
	}
	lines, err := decodeMappings("AAAA,EAAE;;A", 1)
	if err != nil || len(lines) != 3 || len(lines[0]) != 2 || len(lines[1]) != 0 || lines[2][0].src != -1 {
		t.Errorf("decodeMappings = %+v, %v", lines, err)
	}
}

func TestParseSourceMapRejects(t *testing.T) {
	for _, m := range []string{
		`{"version":2,"sources":[],"mappings":""}`,
		`{"version":3,"sections":[{"offset":{"line":0,"column":0},"map":{}}]}`,
		`not json`,
		`{"version":3,"sources":["a.ts"],"mappings":"ACAA"}`,
	} {
		if _, err := parseSourceMap([]byte(m), "/ws"); !errors.Is(err, errSourceMap) {
			t.Errorf("parseSourceMap(%s) = %v, want errSourceMap", m, err)
		}
	}
}

func TestSourcePath(t *testing.T) {
	for _, tc := range []struct{ root, src, want string }{
		{"", "app.ts", "/ws/dist/app.ts"},
		{"", "../src/app.ts", "/ws/src/app.ts"},
		{"../src", "app.ts", "/ws/src/app.ts"},
		{"", "file:///abs/app.ts", "/abs/app.ts"},
		{"", "/abs/app.ts", "/abs/app.ts"},
		{"", "webpack://proj/./src/app.ts", ""},
		{"", "dir%20x/app.ts", "/ws/dist/dir x/app.ts"},
	} {
		if got := sourcePath("/ws/dist", tc.root, tc.src); got != tc.want {
			t.Errorf("sourcePath(root %q, %q) = %q, want %q", tc.root, tc.src, got, tc.want)
		}
	}
}

// TestReadSourceMap covers inline maps, the workspace boundary (symlinks
// included) and the byte budget.
func TestReadSourceMap(t *testing.T) {
	outside := workspace(t, map[string]string{"evil.js.map": string(fixtureMap(t))})
	ws := workspace(t, map[string]string{"app.js.map": string(fixtureMap(t))})
	must(t, os.Symlink(filepath.Join(outside, "evil.js.map"), filepath.Join(ws, "link.js.map")))
	script := filepath.Join(ws, "app.js")
	budget := int64(maxSessionMapBytes)

	if data, base, note := readSourceMap(ws, script, "app.js.map", &budget); note != "" || base != ws || len(data) == 0 {
		t.Errorf("file map: %d bytes, base %q, note %q", len(data), base, note)
	}
	inline := "data:application/json;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(fixtureMap(t))
	if data, base, note := readSourceMap(ws, script, inline, &budget); note != "" || base != ws || len(data) == 0 {
		t.Errorf("inline map: %d bytes, base %q, note %q", len(data), base, note)
	}
	for _, ref := range []string{
		filepath.Join(outside, "evil.js.map"),
		"file://" + filepath.Join(outside, "evil.js.map"),
		"../" + filepath.Base(outside) + "/evil.js.map",
		"link.js.map",
		"missing.js.map",
		"https://example.com/app.js.map",
		"data:application/json;base64,%%%",
	} {
		if _, _, note := readSourceMap(ws, script, ref, &budget); note == "" {
			t.Errorf("readSourceMap(%q) was accepted", ref)
		}
	}
	small := int64(10)
	if _, _, note := readSourceMap(ws, script, "app.js.map", &small); !strings.Contains(note, "larger than") {
		t.Errorf("over budget: note %q", note)
	}
}

func FuzzDecodeMappings(f *testing.F) {
	for _, seed := range []string{"AAQA,SAAS,KAAK", "AAAA;;A", "gggggggggggA", "ACAA", "D,AAAAA;E", ""} {
		f.Add(seed, 2)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = max(0, min(n, 100))
		lines, err := decodeMappings(s, n)
		if err != nil {
			return
		}
		sm := &sourceMap{sources: make([]string, n), lines: lines}
		for i := range sm.sources {
			sm.sources[i] = "/ws/s.ts"
		}
		for line := range min(len(lines), 50) {
			for _, col := range []int{0, 1, 7, 1 << 20} {
				if loc, ok := sm.lookup(line, col); ok && (loc.Line < 1 || loc.Column < 1) {
					t.Fatalf("lookup(%d, %d) = %+v", line, col, loc)
				}
			}
		}
	})
}

func FuzzParseSourceMap(f *testing.F) {
	f.Add(fixtureMap(f))
	f.Add([]byte(`{"version":3,"sources":["a.ts"],"sourceRoot":"../src","mappings":"AAAA;AACA"}`))
	f.Add([]byte(`{"version":3,"sections":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sm, err := parseSourceMap(data, "/ws")
		if err != nil {
			return
		}
		for line := range min(len(sm.lines), 50) {
			_, _ = sm.lookup(line, 0)
		}
	})
}
