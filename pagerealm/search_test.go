package pagerealm

import (
	"encoding/json"
	"slices"
	"testing"
)

// Debugger.searchInContent in a page searches the script as V8 searches its
// own: line by line, a literal unless isRegex, case-insensitive unless
// caseSensitive, "\r\n" lines without their "\r", an invalid regular
// expression matching nothing, "result" always present.
func TestSearchInContent(t *testing.T) {
	source := "const Shop = 1;\r\nshop.add(2);\nlet a = (1+2);\n\xff shop\n"
	for _, tc := range []struct {
		name, params string
		want         []string // "line:content"
	}{
		{"literal, any case", `{"scriptId":"c1","query":"shop"}`, []string{"0:const Shop = 1;", "1:shop.add(2);", "3:\ufffd shop"}},
		{"case-sensitive", `{"scriptId":"c1","query":"Shop","caseSensitive":true}`, []string{"0:const Shop = 1;"}},
		{"literal specials", `{"scriptId":"c1","query":"(1+2)"}`, []string{"2:let a = (1+2);"}},
		{"regex", `{"scriptId":"c1","query":"^(const|let) ","isRegex":true}`, []string{"0:const Shop = 1;", "2:let a = (1+2);"}},
		{"invalid regex", `{"scriptId":"c1","query":"(","isRegex":true}`, []string{}},
		{"no match", `{"scriptId":"c1","query":"nowhere"}`, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := SearchInContent.answer([]byte(tc.params), []byte(source))
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Result *[]struct {
					LineNumber  int    `json:"lineNumber"`
					LineContent string `json:"lineContent"`
				} `json:"result"`
			}
			if err := json.Unmarshal(b, &got); err != nil || got.Result == nil {
				t.Fatalf("answer %s (%v): want a result list", b, err)
			}
			lines := []string{}
			for _, m := range *got.Result {
				lines = append(lines, string(rune('0'+m.LineNumber))+":"+m.LineContent)
			}
			if !slices.Equal(lines, tc.want) {
				t.Fatalf("matches %q, want %q (answer %s)", lines, tc.want, b)
			}
		})
	}
	if _, err := SearchInContent.answer([]byte(`{"query":`), []byte(source)); err == nil {
		t.Fatal("malformed params were not refused")
	}
}
