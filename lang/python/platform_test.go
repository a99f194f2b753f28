package python

import (
	"slices"
	"testing"
)

// The branches of a platform test linux does not take, in each form a
// module writes one: sys.platform, os.name, platform.system(), startswith,
// membership, a negation, and a module-level name bound to a test; a test
// it cannot decide (a version check) marks nothing.
func TestOtherPlatformLines(t *testing.T) {
	for _, c := range []struct {
		src  string
		want [][2]int
	}{
		{"import sys\nif sys.platform == 'win32':\n    def f():\n        pass\nelse:\n    def f():\n        pass\n", [][2]int{{2, 4}}},
		{"if os.name == 'posix':\n    A = 1\nelse:\n    A = 2\n", [][2]int{{3, 4}}},
		{"if platform.system() == 'Darwin':\n    A = 1\nelif platform.system() == 'Linux':\n    A = 2\nelse:\n    A = 3\n", [][2]int{{1, 2}, {5, 6}}},
		{"IS_WIN = sys.platform.startswith('win')\n\nif not IS_WIN:\n    A = 1\nelse:\n    A = 2\n", [][2]int{{5, 6}}},
		{"if sys.platform in ('win32', 'cygwin'):\n    A = 1\n", [][2]int{{1, 2}}},
		{"def g():\n    if sys.platform != 'win32':\n        return 1\n    return 2\n", nil},
		{"if sys.version_info >= (3, 8):\n    A = 1\nelse:\n    A = 2\n", nil},
	} {
		got := Language{}.OtherPlatformLines("m.py", []byte(c.src))
		if !slices.Equal(got, c.want) {
			t.Errorf("OtherPlatformLines(%q) = %v, want %v", c.src, got, c.want)
		}
	}
	if got := (Language{}).OtherPlatformLines("m.js", []byte("if sys.platform == 'win32':\n    A = 1\n")); got != nil {
		t.Errorf("a file of another language: %v", got)
	}
}
