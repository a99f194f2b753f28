package golang

import (
	"slices"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func TestSelectTestsGo(t *testing.T) {
	base := testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "test", "-count=1", "-json", "./..."}}
	test := func(pkg, name string) testrun.Result {
		return testrun.Result{ID: pkg + "." + name, Name: name, Package: pkg, Status: testrun.StatusFail}
	}
	cases := []struct {
		name  string
		r     testrun.Runner
		tests []testrun.Result
		want  []string // nil: not narrowed
	}{
		{"one test", base, []testrun.Result{test("example.com/m", "TestA")},
			[]string{"go", "test", "-count=1", "-json", "-run", "^(TestA)$", "example.com/m"}},
		{"subtests run with their parent, names quoted", base,
			[]testrun.Result{test("example.com/m/p", "TestT/case_1"), test("example.com/m/p", "TestT/case.2"), test("example.com/m", "TestB")},
			[]string{"go", "test", "-count=1", "-json", "-run", "^(TestT|TestB)$", "example.com/m/p", "example.com/m"}},
		{"a package that did not build runs whole", base,
			[]testrun.Result{{ID: "example.com/m/q", Name: "build failed", Package: "example.com/m/q", Status: testrun.StatusError}, test("example.com/m", "TestA")},
			[]string{"go", "test", "-count=1", "-json", "example.com/m/q", "example.com/m"}},
		{"a whole-run exit status is not a package", base,
			[]testrun.Result{{ID: testrun.ExitID, Name: "exit", Status: testrun.StatusError}}, nil},
		{"a package that looks like a flag", base, []testrun.Result{test("-exec=sh", "TestA")}, nil},
		{"a custom command", testrun.Runner{Name: testrun.RunnerCustom, Args: []string{"sh", "-c", "go test ./..."}}, []testrun.Result{test("example.com/m", "TestA")}, nil},
		{"a flag with a separate value", testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "test", "-tags", "x", "./..."}}, []testrun.Result{test("example.com/m", "TestA")}, nil},
		{"a selection of its own", testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "test", "-run=X", "./..."}}, []testrun.Result{test("example.com/m", "TestA")}, nil},
		{"nothing to select", base, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := slices.Clone(c.r.Args)
			got, ok := Language{}.SelectTests(c.r, c.tests)
			if !slices.Equal(c.r.Args, before) {
				t.Errorf("the runner given was modified: %q", c.r.Args)
			}
			if c.want == nil {
				if ok {
					t.Fatalf("narrowed to %q, want the whole suite", got.Args)
				}
				return
			}
			if !ok || !slices.Equal(got.Args, c.want) {
				t.Fatalf("got %q (ok %v), want %q", got.Args, ok, c.want)
			}
			if got.Format != c.r.Format || got.Name != c.r.Name {
				t.Errorf("runner fields changed: %+v", got)
			}
		})
	}
}
