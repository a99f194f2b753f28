package golang

import (
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func TestHeaderLines(t *testing.T) {
	src := "// Copyright.\n\n//go:build linux\n\npackage x\n\nimport (\n\t\"fmt\"\n)\n\nimport \"os\"\n\nfunc f() { fmt.Println(os.Args) }\n"
	if got := (Language{}).HeaderLines("x.go", []byte(src)); got != 11 {
		t.Errorf("HeaderLines = %d, want 11", got)
	}
	if got := (Language{}).HeaderLines("x.go", []byte("package x\n\nfunc f() {}\n")); got != 1 {
		t.Errorf("no imports: HeaderLines = %d, want 1", got)
	}
}

func TestTestHelperFiles(t *testing.T) {
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"a_test.go": {}, "b_test.go": {}, "a.go": {}, "sub/c_test.go": {},
	}}
	got := (Language{}).TestHelperFiles(snap, "a_test.go")
	if len(got) != 1 || got[0] != "b_test.go" {
		t.Errorf("TestHelperFiles = %q, want [b_test.go]", got)
	}
}
