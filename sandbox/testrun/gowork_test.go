package testrun

import "testing"

// In a Go workspace a package's directory comes from the member module
// whose path is its longest prefix (example.com/a/sub is its own module).
func TestGoPackageDirInWorkspace(t *testing.T) {
	p := &goParser{modDirs: map[string]string{
		"example.com/a":     "a",
		"example.com/a/sub": "nested/sub",
		"example.com/root":  ".",
	}}
	tests := []struct{ pkg, want string }{
		{"example.com/a", "a"},
		{"example.com/a/x/y", "a/x/y"},
		{"example.com/a/sub/z", "nested/sub/z"},
		{"example.com/root", ""},
		{"example.com/root/cmd", "cmd"},
		{"example.com/ab", ""},
		{"other.org/q", ""},
	}
	for _, tt := range tests {
		if got := p.pkgDir(tt.pkg); got != tt.want {
			t.Errorf("pkgDir(%q) = %q, want %q", tt.pkg, got, tt.want)
		}
	}
}
