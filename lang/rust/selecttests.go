package rust

import (
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

var _ lang.TestSelector = Language{}

// SelectTests narrows [Runner] to the tests' names, given to every test
// binary as exact libtest filters (`cargo test … -- --exact NAME…`; the
// names reach cargo as the shell's positional parameters, never as
// script text). A crate that did not build, a binary that crashed or a
// custom command is not narrowed.
func (Language) SelectTests(r testrun.Runner, tests []testrun.Result) (testrun.Runner, bool) {
	if r.Name != RunnerName || len(tests) == 0 || !slices.Equal(r.Args, Runner().Args) {
		return r, false
	}
	var names []string
	for _, t := range tests {
		n := t.Name
		if n == "" || n == "build failed" || n == t.Package || strings.HasPrefix(n, "-") || strings.ContainsAny(n, "\n\x00") {
			return r, false
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	out := runner(`exec cargo test --offline --no-fail-fast -- --exact "$@" 2>&1`)
	out.Env = r.Env
	out.Args = append(out.Args, "sh")
	out.Args = append(out.Args, names...)
	return out, true
}
