package pagerealm

import (
	"slices"
	"strings"
	"testing"
)

// The share of Debugger.enable's list: a page with few scripts lists them
// all; the rest share equally what is left; nobody gets more than it has.
func TestFairShares(t *testing.T) {
	for _, tc := range []struct {
		wants  []int
		budget int
		want   []int
	}{
		{[]int{5, 2000, 10}, 20_000, []int{5, 2000, 10}},
		{[]int{2000, 5, 2000, 2000}, 3005, []int{1000, 5, 1000, 1000}},
		{[]int{2000, 100, 2000}, 1000, []int{450, 100, 450}},
		{[]int{7, 7, 7}, 10, []int{3, 3, 4}},
		{nil, 10, []int{}},
	} {
		got := fairShares(tc.wants, tc.budget)
		total := 0
		for _, n := range got {
			total += n
		}
		if !slices.Equal(got, tc.want) && (len(got) != 0 || len(tc.want) != 0) {
			t.Errorf("fairShares(%v, %d) = %v, want %v", tc.wants, tc.budget, got, tc.want)
		}
		if total > tc.budget {
			t.Errorf("fairShares(%v, %d) hands out %d", tc.wants, tc.budget, total)
		}
	}
	if got := scriptsLeftOut("p", 10, 0, 0); got != "" {
		t.Errorf("nothing left out: %q", got)
	}
	if got := scriptsLeftOut("p", 1000, 1000, 5); !strings.Contains(got, "Sources lists 1000 scripts of the page p; 1005 are left out: 5 past") || !strings.Contains(got, "1000 past this window's share") {
		t.Errorf("scriptsLeftOut = %q", got)
	}
}
