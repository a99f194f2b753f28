package python

import (
	"slices"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func TestSelectTestsPython(t *testing.T) {
	pytest := Language{}.TestCommand(&sandbox.Snapshot{Files: map[string]sandbox.File{"tests/test_x.py": {Data: []byte("")}}})
	unittest := Language{}.TestCommand(&sandbox.Snapshot{Files: map[string]sandbox.File{"tests.py": {Data: []byte("")}}})
	if pytest.Name != testrun.RunnerPytest || unittest.Name != testrun.RunnerUnittest {
		t.Fatalf("runners: %s, %s", pytest.Name, unittest.Name)
	}
	cases := []struct {
		name  string
		r     testrun.Runner
		tests []testrun.Result
		want  []string // appended to pytest's args, or unittest's whole argv; nil: not narrowed
	}{
		{"pytest node ids, parametrised", pytest, []testrun.Result{
			{ID: "tests/test_x.py::TestC::test_y", Package: "tests/test_x.py"},
			{ID: "tests/test_x.py::test_p[a b-1]", Package: "tests/test_x.py"},
		}, []string{"tests/test_x.py::TestC::test_y", "tests/test_x.py::test_p[a b-1]"}},
		{"pytest: a file that failed to collect", pytest, []testrun.Result{{ID: "tests/test_x.py", Package: "tests/test_x.py", Status: testrun.StatusError}},
			[]string{"tests/test_x.py"}},
		{"pytest: the whole-run exit status", pytest, []testrun.Result{{ID: testrun.ExitID, Status: testrun.StatusError}}, nil},
		{"pytest: an id that looks like an option", pytest, []testrun.Result{{ID: "-p.py::x", Package: "-p.py"}}, nil},
		{"unittest dotted ids, a subtest runs with its test", unittest, []testrun.Result{
			{ID: "test_calc.TestCalc.test_add (i=2)"}, {ID: "test_calc.TestCalc.test_add"}, {ID: "test_io.TestIO.test_r"},
		}, []string{"python3", "-m", "unittest", "-v", "test_calc.TestCalc.test_add", "test_io.TestIO.test_r"}},
		{"a custom command", testrun.Runner{Name: testrun.RunnerCustom, Args: []string{"sh", "-c", "pytest"}}, []testrun.Result{{ID: "t.py::x"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Language{}.SelectTests(c.r, c.tests)
			if c.want == nil {
				if ok {
					t.Fatalf("narrowed to %q, want the whole suite", got.Args)
				}
				return
			}
			want := c.want
			if c.r.Name == testrun.RunnerPytest {
				want = append(slices.Clone(c.r.Args), c.want...)
			}
			if !ok || !slices.Equal(got.Args, want) {
				t.Fatalf("got %q (ok %v), want %q", got.Args, ok, want)
			}
			if got.ReportPath != c.r.ReportPath || !slices.Equal(got.Env, c.r.Env) {
				t.Errorf("runner fields changed: %+v", got)
			}
		})
	}
}
