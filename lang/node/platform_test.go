package node

import (
	"slices"
	"testing"
)

// The branches of a process.platform test linux does not take, directly,
// negated, through an alias, along an else-if chain; an undecidable test
// marks nothing.
func TestOtherPlatformLines(t *testing.T) {
	for _, c := range []struct {
		src  string
		want [][2]int
	}{
		{"if (process.platform === 'win32') {\n  a();\n} else {\n  b();\n}\n", [][2]int{{1, 3}}},
		{"const isWin = process.platform === 'win32';\nif (!isWin) {\n  a();\n} else {\n  b();\n}\n", [][2]int{{4, 6}}},
		{"if (process.platform === 'darwin') {\n  a();\n} else if (process.platform === 'linux') {\n  b();\n} else {\n  c();\n}\n", [][2]int{{1, 3}, {5, 7}}},
		{"if (os.platform() !== 'linux') {\n  a();\n}\n", [][2]int{{1, 3}}},
		{"if (process.env.CI) {\n  a();\n} else {\n  b();\n}\n", nil},
	} {
		got := Language{}.OtherPlatformLines("x.js", []byte(c.src))
		if !slices.Equal(got, c.want) {
			t.Errorf("OtherPlatformLines(%q) = %v, want %v", c.src, got, c.want)
		}
	}
}
