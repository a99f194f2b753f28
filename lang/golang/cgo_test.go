package golang

import (
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func TestImportsC(t *testing.T) {
	yes := []string{
		"package x\n\n// #include <stdio.h>\nimport \"C\"\n",
		"package x\n/*\n#cgo LDFLAGS: -lm\n*/\nimport \"C\" // cgo\n",
		"package x\n\nimport (\n\t\"fmt\"\n\t\"C\"\n)\n",
	}
	no := []string{
		"package x\n\nimport \"fmt\"\n\nvar s = `import \"C\"`\n",
		"package x\n\n// import \"C\" is how cgo starts\nfunc f() {}\n",
		"package x\n\nimport \"CC\"\n",
		"package x\n\nfunc f() {}\n\nimport \"C\"\n",
	}
	for _, s := range yes {
		if !importsC(s) {
			t.Errorf("importsC(%q) = false", s)
		}
	}
	for _, s := range no {
		if importsC(s) {
			t.Errorf("importsC(%q) = true", s)
		}
	}
}

// TestCgoModule: a module whose code (not only its tests, vendor or
// testdata) imports "C" is found, its tests run with CGO_ENABLED=1, and
// doctor names the file.
func TestCgoModule(t *testing.T) {
	snap := func(files map[string]string) *sandbox.Snapshot {
		s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
		for p, c := range files {
			s.Files[p] = sandbox.File{Data: []byte(c)}
		}
		return s
	}
	cgo := "package lib\n\n// int add(int a, int b) { return a + b; }\nimport \"C\"\n"
	plain := map[string]string{"go.mod": "module example.com/m\n", "lib/lib.go": "package lib\n", "lib/c_test.go": cgo, "vendor/x/x.go": cgo, "testdata/y.go": cgo}
	with := map[string]string{"go.mod": "module example.com/m\n", "lib/lib.go": "package lib\n", "lib/add.go": cgo}
	if f := CgoFile(snap(plain)); f != "" {
		t.Errorf("CgoFile = %q for cgo only in tests, vendor and testdata", f)
	}
	if r := (Language{}).TestCommand(snap(plain)); slices.Contains(r.Env, "CGO_ENABLED=1") {
		t.Errorf("a module without cgo runs with %v", r.Env)
	}
	if f := CgoFile(snap(with)); f != "lib/add.go" {
		t.Errorf("CgoFile = %q, want lib/add.go", f)
	}
	if r := (Language{}).TestCommand(snap(with)); !slices.Contains(r.Env, "CGO_ENABLED=1") {
		t.Errorf("a cgo module runs with env %v, want CGO_ENABLED=1", r.Env)
	}
	notes := (Language{}).Notes(snap(with))
	if len(notes) != 1 || !strings.Contains(notes[0], "lib/add.go uses cgo") {
		t.Errorf("Notes = %q", notes)
	}
	if img := (Language{}).Image(); !slices.Contains(img.Extra, "gcc") || !slices.Contains(img.Extra, "libc6-dev") {
		t.Errorf("the go image lacks a C compiler: Extra %v", img.Extra)
	}
}
