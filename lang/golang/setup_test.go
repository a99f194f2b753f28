package golang

import (
	"github.com/fixpoint-dev/fixpoint/lang/langtest"
	"strings"
	"testing"
)

func TestSetupChanges(t *testing.T) {
	const mod = "module example.com/x\n\ngo 1.22\n\nrequire (\n\tgithub.com/a/b v1.2.0\n\tgolang.org/x/text v0.14.0 // indirect\n)\n"
	gm := func(s string) map[string]string { return map[string]string{"go.mod": s} }
	langtest.RunSetupCases(t, Language{}, []langtest.SetupCase{
		{Name: "replace with a path", Before: gm(mod), After: gm(mod + "replace github.com/a/b => ../evil\n"), Want: []string{`go.mod: replaces "github.com/a/b" with "../evil"`}},
		{Name: "replace block with another module", Before: gm(mod), After: gm(mod + "replace (\n\tgithub.com/a/b v1.2.0 => github.com/evil/b v1.0.0\n)\n"),
			Want: []string{`replaces "github.com/a/b v1.2.0" with "github.com/evil/b v1.0.0"`}},
		{Name: "toolchain", Before: gm(mod), After: gm(strings.Replace(mod, "go 1.22\n", "go 1.22\ntoolchain go1.23.4\n", 1)), Want: []string{`sets the toolchain line "go1.23.4"`}},
		{Name: "go line", Before: gm(mod), After: gm(strings.Replace(mod, "go 1.22", "go 1.24", 1)), Want: []string{`changes the go line from "1.22" to "1.24"`}},
		{Name: "required version", Before: gm(mod), After: gm(strings.Replace(mod, "v1.2.0", "v1.9.9", 1)), Want: []string{`changes the required version of "github.com/a/b" from "v1.2.0" to "v1.9.9"`}},
		{Name: "single-line require changed", Before: gm("module m\nrequire github.com/a/b v1.0.0\n"), After: gm("module m\nrequire github.com/a/b v1.0.1\n"), Want: []string{"from \"v1.0.0\" to \"v1.0.1\""}},
		{Name: "go.work", Before: map[string]string{}, After: map[string]string{"go.work": "go 1.22\nuse ./evil\n"}, Want: []string{"go.work: changes the Go workspace"}},
		{Name: "a nested module's go.mod", Before: map[string]string{"tools/go.mod": "module t\n"}, After: map[string]string{"tools/go.mod": "module t\nreplace a => ../../b\n"}, Want: []string{"tools/go.mod: replaces"}},

		// Near misses.
		{Name: "comment", Before: gm(mod), After: gm(strings.Replace(mod, "// indirect", "", 1))},
		{Name: "new requirement is left to the allow-list", Before: gm(mod), After: gm(mod + "require github.com/c/d v1.0.0\n")},
		{Name: "go.sum", Before: map[string]string{"go.sum": "a v1 h1:x\n"}, After: map[string]string{"go.sum": "a v1 h1:x\nb v1 h1:y\n"}},
		{Name: "source file", Before: map[string]string{"x.go": "package x"}, After: map[string]string{"x.go": "package x // y"}},
		{Name: "replace removed", Before: gm(mod + "replace github.com/a/b => ../b\n"), After: gm(mod)},
	})
}

// snapOf is a snapshot of files (path -> content).
var snapOf = langtest.SnapOf
