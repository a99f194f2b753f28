package golang

import (
	"regexp"
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

var _ lang.TestSelector = Language{}

// SelectTests narrows a `go test` runner to the packages of tests and, when
// every one of them is a test (not a package that failed to build or
// failed outside its tests), to their top-level functions with
// `-run '^(TestA|TestB)$'` (a subtest runs with its parent). The
// packages are named by import path, which go test resolves inside the
// module and in every module of a go.work. A custom command is not
// narrowed.
// goBoolFlags are the go test flags without a value that a runner may
// carry before its packages.
var goBoolFlags = map[string]bool{"-json": true, "-v": true, "-race": true, "-short": true, "-failfast": true, "-cover": true}

func (Language) SelectTests(r testrun.Runner, tests []testrun.Result) (testrun.Runner, bool) {
	if r.Name != testrun.RunnerGo || len(r.Args) < 2 || r.Args[0] != "go" || r.Args[1] != "test" || len(tests) == 0 {
		return r, false
	}
	var flags []string
	for _, a := range r.Args[2:] {
		switch {
		case !strings.HasPrefix(a, "-"):
			continue // a package pattern: replaced below
		case strings.HasPrefix(a, "-run") || strings.HasPrefix(a, "-skip"):
			return r, false // a selection of its own
		case !strings.Contains(a, "=") && !goBoolFlags[a]:
			return r, false // a flag whose value is the next word
		}
		flags = append(flags, a)
	}
	var pkgs, names []string
	whole := false
	for _, t := range tests {
		if t.Package == "" || strings.HasPrefix(t.Package, "-") || strings.ContainsAny(t.Package, " \t\n") {
			return r, false
		}
		if !slices.Contains(pkgs, t.Package) {
			pkgs = append(pkgs, t.Package)
		}
		if t.ID == t.Package || t.Name == "build failed" || !strings.HasPrefix(t.ID, t.Package+".") {
			whole = true // the package as a whole: every test in it
			continue
		}
		top, _, _ := strings.Cut(strings.TrimPrefix(t.ID, t.Package+"."), "/")
		if top == "" {
			return r, false
		}
		if !slices.Contains(names, top) {
			names = append(names, top)
		}
	}
	out := r
	out.Args = append([]string{"go", "test"}, flags...)
	if !whole {
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = regexp.QuoteMeta(n)
		}
		out.Args = append(out.Args, "-run", "^("+strings.Join(quoted, "|")+")$")
	}
	out.Args = append(out.Args, pkgs...)
	return out, true
}
