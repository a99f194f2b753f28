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

// TestIsSnapshot: the recorded outputs of snapshot tests, at any depth.
func TestIsSnapshot(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"src/__snapshots__/app.test.js.snap", true},
		{"__snapshots__/app.test.ts.snap", true},
		{"a/b/__snapshots__/c/x.snap", true},
		{"tests/__snapshots__/test_api.ambr", true},
		{"pkg/a/b/__snapshots__/test_api.ambr", true},     // syrupy, nested
		{"src/snapshots/crate__tests__render.snap", true}, // insta
		{"src/snapshot.ts", false},
		{"snap/snapcraft.yaml", false},
		{"src/snapshots.rs", false},
		{"a/__snapshots__", false}, // a file named like the directory
	}
	for _, tt := range tests {
		if got := IsSnapshot(tt.path); got != tt.want {
			t.Errorf("IsSnapshot(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
