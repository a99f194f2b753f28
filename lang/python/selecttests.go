package python

import (
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

var _ lang.TestSelector = Language{}

// SelectTests narrows pytest to the tests' node ids
// ("tests/test_x.py::TestC::test_y[1-2]"; a file that failed to collect
// by its path) and unittest to their dotted ids ("test_x.TestC.test_y";
// a module that failed to import by its name), given after the runner's
// own arguments. A custom command is not narrowed.
func (Language) SelectTests(r testrun.Runner, tests []testrun.Result) (testrun.Runner, bool) {
	if len(tests) == 0 || len(r.Args) < 3 || r.Args[1] != "-m" {
		return r, false
	}
	var ids []string
	add := func(id string) bool {
		if id == "" || strings.HasPrefix(id, "-") || strings.ContainsAny(id, "\n\x00") {
			return false
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
		return true
	}
	out := r
	switch {
	case r.Name == testrun.RunnerPytest && r.Args[2] == "pytest":
		for _, t := range tests {
			id := t.ID
			if !strings.Contains(id, ".py::") && !strings.HasSuffix(id, ".py") {
				id = t.Package // an entry that is not a test: its file
			}
			if !strings.Contains(id, ".py") || !add(id) {
				return r, false
			}
		}
		out.Args = append(slices.Clone(r.Args), ids...)
	case r.Name == testrun.RunnerUnittest && r.Args[2] == "unittest" && slices.Equal(r.Args[3:], []string{"discover", "-v"}):
		for _, t := range tests {
			id, _, _ := strings.Cut(t.ID, " (") // a subtest runs with its test
			if strings.ContainsAny(id, " /") || !add(id) {
				return r, false
			}
		}
		out.Args = append([]string{r.Args[0], "-m", "unittest", "-v"}, ids...)
	default:
		return r, false
	}
	return out, true
}
