package lang

import "testing"

// TestInTestData: testdata/ is test infrastructure at any depth; a
// directory merely named like it is not.
func TestInTestData(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"testdata/x.golden", true},
		{"a/testdata/x.golden", true},
		{"a/b/testdata/x.golden", true},
		{"a/b/c/testdata/d/e/x.golden", true},
		{"testdata/sub/x.json", true},
		{"x.golden", false},
		{"a/b/x.golden", false},
		{"a/testdatax/x.golden", false},
		{"a/mytestdata/x.golden", false},
		{"a/b/testdata", false}, // a file named testdata
	}
	for _, tt := range tests {
		if got := InTestData(tt.path); got != tt.want {
			t.Errorf("InTestData(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
