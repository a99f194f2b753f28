package lang

import "testing"

// ScanHeader: blank lines and // and /* */ comments are the header's, an
// item runs to the line item says, the first line item refuses ends it,
// and trailing blank lines do not count.
func TestScanHeader(t *testing.T) {
	// item takes "use x" lines, and "use {" runs to the next line with "}".
	item := func(ls []string, i int, t string) (int, bool) {
		if t == "use {" {
			for j := i; j < len(ls); j++ {
				if ls[j] == "}" {
					return j, true
				}
			}
			return i, false
		}
		return i, len(t) > 4 && t[:4] == "use "
	}
	tests := []struct {
		name, src string
		want      int
	}{
		{"empty", "", 0},
		{"body only", "fn main() {}\n", 0},
		{"comments", "// a\n/* b\n c */\n\nfn x() {}\n", 3},
		{"items and comments", "// license\n\nuse a\nuse b // why\n\nfn x() {}\n", 4},
		{"item over lines", "use {\n a,\n}\nfn x() {}\n", 3},
		{"unclosed comment runs to the end", "/* never closed\nuse a\n", 3},
		{"trailing blanks not counted", "use a\n\n\n", 1},
		{"a refused line ends it", "use a\nlet x\nuse b\n", 1},
	}
	for _, tt := range tests {
		if got := ScanHeader([]byte(tt.src), item); got != tt.want {
			t.Errorf("%s: ScanHeader(%q) = %d, want %d", tt.name, tt.src, got, tt.want)
		}
	}
}
