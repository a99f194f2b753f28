package main

import (
	"slices"
	"testing"

	"github.com/fixpoint-dev/fixpoint/internal/bench/swe"
)

// TestBenchSWEOnly: --only picks instances by id within --split (a
// held-out id never runs in a tuning run), --limit counts what is left,
// and an id the file does not have is named.
func TestBenchSWEOnly(t *testing.T) {
	in := []swe.Instance{{ID: "a__x-1", Split: "tuning"}, {ID: "a__x-2", Split: "heldout"}, {ID: "b__y-3", Split: "tuning"}, {ID: "b__y-4", Split: "tuning"}}
	ids := func(is []swe.Instance) []string {
		var out []string
		for _, i := range is {
			out = append(out, i.ID)
		}
		return out
	}
	for _, c := range []struct {
		split, only string
		limit       int
		want        []string
	}{
		{"", "", 0, []string{"a__x-1", "a__x-2", "b__y-3", "b__y-4"}},
		{"tuning", "", 0, []string{"a__x-1", "b__y-3", "b__y-4"}},
		{"tuning", " b__y-4 ,a__x-1", 0, []string{"a__x-1", "b__y-4"}},
		{"tuning", "a__x-2", 0, nil},
		{"", "a__x-2,b__y-3", 1, []string{"a__x-2"}},
	} {
		if got := ids(filterInstances(in, c.split, 0, c.only, c.limit)); !slices.Equal(got, c.want) {
			t.Errorf("split %q only %q limit %d: %q, want %q", c.split, c.only, c.limit, got, c.want)
		}
	}
	if got := unknownIDs(in, "a__x-1, nope,b__y-3,x"); !slices.Equal(got, []string{"nope", "x"}) {
		t.Errorf("unknown ids %q", got)
	}
}
