package golang

import (
	"slices"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// The spectrum's runs are the trace run of the failing tests with
// -short, and the same of their packages whole: no -run (nor the subtest
// pattern), the same counted coverage; a nested module keeps its -C and profile path; a runner the
// tracer refuses is refused too.
func TestSpectrumTestsGo(t *testing.T) {
	snap := traceSnap("go.mod", "module example.com/m\n\ngo 1.22\n", "calc/calc.go", "package calc\n")
	base := testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "test", "-count=1", "-json", "./..."}}
	sub := func(id string) testrun.Result {
		return testrun.Result{ID: "example.com/m/calc." + id, Name: id, Package: "example.com/m/calc", Status: testrun.StatusFail}
	}
	tests := []struct {
		name  string
		r     testrun.Runner
		fails []testrun.Result
		fail  []string
		want  []string
	}{
		{name: "one test", r: base, fails: []testrun.Result{sub("TestDouble")},
			fail: []string{"go", "test", "-covermode=count", "-coverpkg=example.com/m/...", "-coverprofile=.fixpoint/trace", "-short", "-count=1", "-json", "-run", "^(TestDouble)$", "example.com/m/calc"},
			want: []string{"go", "test", "-covermode=count", "-coverpkg=example.com/m/...", "-coverprofile=.fixpoint/trace", "-short", "-count=1", "-json", "example.com/m/calc"}},
		{name: "failing subtests", r: base, fails: []testrun.Result{sub("TestDiff"), sub("TestDiff/Reporter/Named")},
			fail: []string{"go", "test", "-covermode=count", "-coverpkg=example.com/m/...", "-coverprofile=.fixpoint/trace", "-short", "-count=1", "-json", "-run", "^(TestDiff)$/^(Reporter)$/^(Named)$", "example.com/m/calc"},
			want: []string{"go", "test", "-covermode=count", "-coverpkg=example.com/m/...", "-coverprofile=.fixpoint/trace", "-short", "-count=1", "-json", "example.com/m/calc"}},
		{name: "short already", r: testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "test", "-short", "-race", "./..."}}, fails: []testrun.Result{sub("TestDouble")},
			fail: []string{"go", "test", "-covermode=atomic", "-coverpkg=example.com/m/...", "-coverprofile=.fixpoint/trace", "-short", "-race", "-run", "^(TestDouble)$", "example.com/m/calc"},
			want: []string{"go", "test", "-covermode=atomic", "-coverpkg=example.com/m/...", "-coverprofile=.fixpoint/trace", "-short", "-race", "example.com/m/calc"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fail, got, ok := Language{}.SpectrumTests(snap, tc.r, tc.fails)
			if !ok || !slices.Equal(got.Args, tc.want) || got.TracePath != lang.TracePath {
				t.Errorf("SpectrumTests all = %q (%v, trace %q), want %q", got.Args, ok, got.TracePath, tc.want)
			}
			if !slices.Equal(fail.Args, tc.fail) || fail.TracePath != lang.TracePath {
				t.Errorf("SpectrumTests fail = %q (trace %q), want %q", fail.Args, fail.TracePath, tc.fail)
			}
		})
	}
	nested := traceSnap("v2/go.mod", "module example.com/m/v2\n", "v2/a.go", "package m\n")
	r := testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "-C", "v2", "test", "-json", "./..."}}
	nf := []testrun.Result{{ID: "example.com/m/v2.TestA", Name: "TestA", Package: "example.com/m/v2", Status: testrun.StatusFail}}
	if _, got, ok := (Language{}).SpectrumTests(nested, r, nf); !ok || got.Args[2] != "v2" || !slices.Contains(got.Args, "-coverprofile=../.fixpoint/trace") || slices.Contains(got.Args, "-run") {
		t.Errorf("nested module's spectrum run = %q, %v", got.Args, ok)
	}
	own := testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "test", "-coverprofile=c.out", "./..."}}
	if _, got, ok := (Language{}).SpectrumTests(snap, own, []testrun.Result{sub("TestDouble")}); ok {
		t.Errorf("a runner with its own profile got a spectrum run %q", got.Args)
	}
}
