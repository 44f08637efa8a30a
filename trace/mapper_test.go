package trace

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

func TestMapFile(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"file:///ws/app.js", "/ws/app.js"},
		{"file:///ws/dir%20x/app.js", "/ws/dir x/app.js"},
		{"file://localhost/ws/app.js", "/ws/app.js"},
		{"file:///ws/../ws/./app.js", "/ws/app.js"},
		{"/ws/app.js", "/ws/app.js"},
		{"file://evil.example/ws/app.js", ""},
		{"file:relative.js", ""},
		{"node:internal/modules/cjs/loader", ""},
		{"node:fs", ""},
		{"", ""},
		{"evalmachine.<anonymous>", ""},
		{"http://127.0.0.1/app.js", ""},
		{"data:text/javascript,0", ""},
		{"wasm://wasm/abc", ""},
		{"relative/app.js", ""},
	} {
		if got := mapFile(tc.in); got != tc.want {
			t.Errorf("mapFile(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestOneBased(t *testing.T) {
	for in, want := range map[int]int{0: 1, 41: 42, -1: 0, -7: 0} {
		if got := oneBased(in); got != want {
			t.Errorf("oneBased(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestCapText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
		cut  bool
	}{
		{"short", 10, "short", false},
		{"exactly10!", 10, "exactly10!", false},
		{"eleven char", 10, "eleven ch…", true},
		{"ééééééé", 5, "éééé…", true},
		{"bad\xffutf8", 20, "bad\uFFFDutf8", false},
		{strings.Repeat("x", 10_000), 500, strings.Repeat("x", 499) + "…", true},
	} {
		got, cut := capText(tc.in, tc.n)
		if got != tc.want || cut != tc.cut {
			t.Errorf("capText(%.20q, %d) = %.30q, %v; want %.30q, %v", tc.in, tc.n, got, cut, tc.want, tc.cut)
		}
		if utf8.RuneCountInString(got) > tc.n || !utf8.ValidString(got) {
			t.Errorf("capText(%.20q, %d) = %.30q: too long or invalid", tc.in, tc.n, got)
		}
	}
}

func TestValueOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  cdpRemoteObject
		want string
	}{
		{"string", cdpRemoteObject{Type: "string", Value: jsontext.Value(`"hi\nthere"`)}, "hi\nthere"},
		{"lone surrogate", cdpRemoteObject{Type: "string", Value: jsontext.Value(`"a\ud800b"`)}, "a\uFFFDb"},
		{"number", cdpRemoteObject{Type: "number", Value: jsontext.Value(`1.5`), Description: "1.5"}, "1.5"},
		{"NaN", cdpRemoteObject{Type: "number", UnserializableValue: "NaN", Description: "NaN"}, "NaN"},
		{"-0", cdpRemoteObject{Type: "number", UnserializableValue: "-0"}, "-0"},
		{"bigint", cdpRemoteObject{Type: "bigint", UnserializableValue: "10n"}, "10n"},
		{"boolean", cdpRemoteObject{Type: "boolean", Value: jsontext.Value(`true`)}, "true"},
		{"undefined", cdpRemoteObject{Type: "undefined"}, "undefined"},
		{"null", cdpRemoteObject{Type: "object", Subtype: "null", Value: jsontext.Value(`null`)}, "null"},
		{"function", cdpRemoteObject{Type: "function", Description: "function f() {}"}, "function f() {}"},
		{"error", cdpRemoteObject{Type: "object", Subtype: "error", Description: "Error: x\n    at y (/ws/a.js:1:1)\n    at Module._compile (node:internal/modules/cjs/loader:1:1)"}, "Error: x\n    at y (/ws/a.js:1:1)"},
		{"object preview", cdpRemoteObject{Type: "object", ClassName: "Object", Description: "Object",
			Preview: &cdpPreview{Properties: []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Value string `json:"value"`
			}{{"a", "number", "1"}, {"b", "string", "x"}}}}, `{a: 1, b: "x"}`},
		{"array preview", cdpRemoteObject{Type: "object", Subtype: "array", ClassName: "Array", Description: "Array(2)",
			Preview: &cdpPreview{Overflow: true, Properties: []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Value string `json:"value"`
			}{{"0", "number", "1"}, {"1", "number", "2"}}}}, `[1, 2, …]`},
		{"map no preview", cdpRemoteObject{Type: "object", ClassName: "Map", Description: "Map(0)"}, "Map(0)"},
	} {
		if got := valueOf(tc.obj); got.Text != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got.Text, tc.want)
		}
	}
	long := valueOf(cdpRemoteObject{Type: "string", Value: jsontext.Value(`"` + strings.Repeat("s", 5000) + `"`)})
	if !long.Truncated || utf8.RuneCountInString(long.Text) != maxValueChars {
		t.Errorf("long string: %d chars, truncated %v", utf8.RuneCountInString(long.Text), long.Truncated)
	}
}

func TestUserStack(t *testing.T) {
	in := "TypeError: x is not a function\n" +
		"    at run (/ws/app.js:3:5)\n" +
		"    at Module._compile (node:internal/modules/cjs/loader:1518:14)\n" +
		"    at node:internal/main/run_main_module:28:49\n" +
		"    at eval (eval at <anonymous> (/ws/app.js:1:1), <anonymous>:1:1)\n" +
		"    at Array.forEach (<anonymous>)\n" +
		"    at main (/ws/app.js:9:1)"
	want := "TypeError: x is not a function\n    at run (/ws/app.js:3:5)\n    at main (/ws/app.js:9:1)"
	if got := userStack(in); got != want {
		t.Errorf("userStack = %q, want %q", got, want)
	}
}

func TestMapperPositions(t *testing.T) {
	m := newMapper("/ws", "")
	if m.addScript("1", "node:internal/main", "") != nil {
		t.Error("node:internal script was recorded")
	}
	if m.addScript("2", "", "") != nil {
		t.Error("eval script was recorded")
	}
	if info := m.addScript("3", "file:///ws/app.js", ""); info == nil || info.path != "/ws/app.js" {
		t.Fatalf("user script: %+v", info)
	}
	loc, gen, note := m.position("3", "file:///ws/app.js", 2, 4)
	if loc == nil || *loc != (Location{File: "/ws/app.js", Line: 3, Column: 5}) || gen != nil || note != "" {
		t.Errorf("position = %+v, %+v, %q", loc, gen, note)
	}
	if loc, _, _ := m.position("3", "", 0, 0); loc == nil || loc.File != "/ws/app.js" {
		t.Errorf("empty url of a known user script: %+v", loc)
	}
	if loc, _, _ := m.position("2", "", 0, 0); loc != nil {
		t.Errorf("eval position: %+v", loc)
	}
	if loc, _, _ := m.position("1", "node:internal/main", 0, 0); loc != nil {
		t.Errorf("internal position: %+v", loc)
	}
	frames := m.frames(&cdpStackTrace{CallFrames: []cdpCallFrame{
		{FunctionName: "f", ScriptID: "3", URL: "file:///ws/app.js", LineNumber: 0, ColumnNumber: 0},
		{FunctionName: "Module._compile", ScriptID: "1", URL: "node:internal/modules/cjs/loader", LineNumber: 5},
	}})
	if len(frames) != 1 || frames[0].Function != "f" || frames[0].Location.Line != 1 {
		t.Errorf("frames = %+v", frames)
	}
	if info := m.addScript("4", "file:///ws/out.js", "missing.js.map"); info.smap != nil || info.note == "" {
		t.Errorf("a missing map: %+v", info)
	}
	if loc, gen, note := m.position("4", "file:///ws/out.js", 0, 0); loc == nil || loc.File != "/ws/out.js" || gen != nil || !strings.Contains(note, "not used") {
		t.Errorf("position in a script whose map is unusable: %+v, %+v, %q", loc, gen, note)
	}
}
