package edit

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkApply measures a block against a 20k-line file: a realistic
// 8-line SEARCH, and a pathological 5k-line SEARCH of repeated lines.
func BenchmarkApply(b *testing.B) {
	var file strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&file, "\tx%d := compute(%d)\n", i, i)
	}
	repeated := strings.Repeat("\n", 20000)
	cases := []struct {
		name, file, search, replace string
	}{
		{"realistic", file.String(), "\tx15000 := compute(15000)\n\tx15001 := compute(15001)\n\tx15002 := compute(15002)\n\tx15003 := compute(15003)\n", "\ty := 1\n"},
		{"tolerant", file.String(), "  x15000 := compute(15000)\n  x15001 := compute(15001)\n", "  y := 1\n"},
		{"pathological", repeated + "end\n", strings.Repeat("\n", 5000) + "end\n", "fin\n"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			snap := snapOf(map[string]string{"f": c.file})
			blocks := []Block{{Path: "f", Search: c.search, Replace: c.replace, Index: 1}}
			for b.Loop() {
				if _, err := Apply(snap, blocks, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLineEdits measures hunks for a 20k-line file with 50 scattered
// changes.
func BenchmarkLineEdits(b *testing.B) {
	var before, after strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&before, "line %d\n", i)
		if i%400 == 0 {
			fmt.Fprintf(&after, "changed %d\n", i)
		} else {
			fmt.Fprintf(&after, "line %d\n", i)
		}
	}
	bb, ab := []byte(before.String()), []byte(after.String())
	for b.Loop() {
		if h := LineEdits(bb, ab); len(h) != 50 {
			b.Fatalf("%d hunks, want 50", len(h))
		}
	}
}
