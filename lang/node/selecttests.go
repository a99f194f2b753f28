package node

import (
	"path"
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

var _ lang.TestSelector = Language{}

// SelectTests narrows jest and vitest (run directly or as the test
// script's runner) to the test files of tests, given after the runner's
// arguments as path filters, and ava (the test script's, or run directly
// by a test_cmd such as `npx ava --tap`) to their titles with --match, which keeps each test's
// id (see [Ava]). mocha (whose files come from its
// configuration), node --test (whose TAP names no file) and composed
// scripts are not narrowed.
func (Language) SelectTests(r testrun.Runner, tests []testrun.Result) (testrun.Runner, bool) {
	if len(tests) > 0 && (r.Name == RunnerAva || avaArgs(r.Args)) {
		return avaMatch(r, tests)
	}
	if (r.Name != testrun.RunnerJest && r.Name != testrun.RunnerVitest) || len(tests) == 0 {
		return r, false
	}
	var files []string
	for _, t := range tests {
		f := t.Package
		if f == "" || strings.HasPrefix(f, "-") || strings.HasPrefix(f, "/") || strings.ContainsAny(f, "\n\x00") || path.Ext(f) == "" {
			return r, false
		}
		if !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	out := r
	out.Args = append(slices.Clone(r.Args), files...)
	return out, true
}
