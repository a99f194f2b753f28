package repomap

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func TestSymbols(t *testing.T) {
	tests := []struct {
		path, src string
		want      []string
	}{
		{"a.go", "package a\n\ntype T struct{}\n\nfunc (t *T) M(x int) error { return nil }\n\nfunc F(a, b string) (int, error) { return 0, nil }\n\nconst C = 1\n", []string{"struct T", "func (*T) M(x int) error", "func F(a, b string) (int, error)", "const C"}},
		{"bad.go", "package a\nfunc {", nil},
		{"m.py", "import os\n\nclass Shape:\n    def area(self):\n        pass\n\ndef helper(x):\n    return x\n\nasync def fetch():\n    pass\n", []string{"class Shape", "def Shape.area", "def helper", "def fetch"}},
		{"m.js", "export function add(a, b) {}\nclass Box {}\nexport const PI = 3;\nasync function load() {}\n", []string{"function add", "class Box", "const PI", "function load"}},
		{"README.md", "# hi", nil},
	}
	for _, tt := range tests {
		got := Symbols(tt.path, []byte(tt.src))
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Symbols(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestBuildBudget(t *testing.T) {
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	for _, p := range []string{"a.go", "b.go", "c.go", ".env"} {
		snap.Files[p] = sandbox.File{Data: []byte("package x\nfunc " + strings.ToUpper(p[:1]) + "() {}\n")}
	}
	include := func(p string) bool { return p != ".env" }
	full := Build(snap, &Options{Include: include})
	if full != "a.go: func A()\nb.go: func B()\nc.go: func C()\n" {
		t.Errorf("Build = %q", full)
	}
	// A tight budget keeps symbols of the relevant file first.
	got := Build(snap, &Options{Include: include, MaxBytes: 30, Relevant: []string{"c.go"}})
	if got != "a.go\nb.go\nc.go: func C()\n" {
		t.Errorf("Build(tight) = %q", got)
	}
	got = Build(snap, &Options{Include: include, MaxBytes: 10})
	if !strings.HasSuffix(got, "more files\n") || len(got) > 40 {
		t.Errorf("Build(tiny) = %q", got)
	}
}
