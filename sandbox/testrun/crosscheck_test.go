package testrun

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// The forges of issue 20 rewrite the report file at exit or add lines to
// the output; the runner's own summary, already written, stays. Each case
// that disagrees has a near miss that agrees.
func TestCrossCheck(t *testing.T) {
	pass := func(ids ...string) []Result {
		var out []Result
		for _, id := range ids {
			out = append(out, Result{ID: id, Status: StatusPass})
		}
		return out
	}
	tests := []struct {
		name           string
		runner         string
		tests          []Result
		stdout, stderr string
		cut            bool
		want           string // a substring of the reasons; "" = agrees
	}{
		{name: "pytest junit rewritten at exit", runner: RunnerPytest, tests: pass("t.py::a", "t.py::b", "t.py::c"),
			stdout: "..F\nFAILED t.py::c - assert 1 == 2\n1 failed, 2 passed in 0.05s\n", want: "reports 1 failure(s)"},
		{name: "pytest names a passed test as failed", runner: RunnerPytest, tests: pass("t.py::a", "t.py::c"),
			stdout: "FAILED t.py::c - assert 1 == 2\n2 passed in 0.05s\n", want: "names t.py::c as failed"},
		{name: "pytest fake summary after the real one", runner: RunnerPytest, tests: pass("t.py::a", "t.py::b"),
			stdout: "1 failed, 1 passed in 0.05s\n2 passed in 0.01s\n", want: "reports 1 failure(s)"},
		{name: "pytest more passes than the runner counted", runner: RunnerPytest, tests: pass("t.py::a", "t.py::b", "t.py::x"),
			stdout: "2 passed in 0.05s\n", want: "reports 2 passed test(s) and the parsed results 3"},
		{name: "pytest summary missing (exited before it)", runner: RunnerPytest, tests: pass("t.py::a"),
			stdout: ".\n", want: "summary is missing"},
		{name: "pytest -qq: no counts line, the short summary", runner: RunnerPytest, tests: pass("t.py::a"),
			stdout: ".  [100%]\n=== short test summary info ===\nPASSED t.py::a\n"},
		{name: "pytest agrees", runner: RunnerPytest, tests: pass("t.py::a", "t.py::b"),
			stdout: "PASSED t.py::a\nPASSED t.py::b\n========== 2 passed, 1 warning in 0.05s ==========\n"},
		{name: "pytest summary missing from cut output", runner: RunnerPytest, tests: pass("t.py::a"), stdout: "…", cut: true},
		{name: "jest json rewritten at exit", runner: RunnerJest, tests: pass("a", "b"),
			stderr: "Tests:       1 failed, 1 passed, 2 total\n", want: "jest's summary line reports 1 failure(s)"},
		{name: "jest summary missing", runner: RunnerJest, tests: pass("a"), stderr: "PASS src/a.test.js\n", want: "missing"},
		{name: "jest agrees", runner: RunnerJest, tests: pass("a", "b"), stderr: "Tests:       2 passed, 2 total\n"},
		{name: "vitest", runner: RunnerVitest, tests: pass("a"), stdout: "      Tests  1 failed | 1 passed (2)\n", want: "vitest's summary line reports 1 failure(s)"},
		{name: "mocha json rewritten at exit", runner: RunnerMocha, tests: pass("a"), stdout: "  1 passing (3ms)\n  1 failing\n", want: "mocha's summary line"},
		{name: "mocha agrees", runner: RunnerMocha, tests: pass("a"), stdout: "  1 passing (3ms)\n"},
		{name: "node TAP written to the parent's stdout", runner: RunnerNode, tests: pass("a", "b", "c"),
			stdout: "ok 1 - a\nok 2 - b\nok 3 - c\n# pass 2\n# fail 1\n", want: "# fail"},
		{name: "node TAP extra passes", runner: RunnerNode, tests: pass("a", "b", "c"),
			stdout: "# pass 3\n# fail 0\n# pass 1\n# fail 0\n", want: "reports 1 passed test(s) and the parsed results 3"},
		{name: "node TAP agrees", runner: RunnerNode, tests: pass("a", "b"), stdout: "ok 1 - a\nok 2 - b\n# pass 2\n# fail 0\n"},
		{name: "unknown runner has no summary", runner: RunnerExitCode, stdout: "1 failed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &Report{Runner: tt.runner, Tests: tt.tests}
			rep.Count()
			got := strings.Join(crossCheck(formatNamed(tt.runner), rep, []byte(tt.stdout), []byte(tt.stderr), tt.cut), "; ")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("crossCheck = %q, want %q", got, tt.want)
			}
		})
	}
}

// A report that disagrees with its runner is not OK, whatever its counts.
func TestParseMismatchIsNotOK(t *testing.T) {
	junit := `<testsuites><testsuite name="pytest" tests="1" failures="0"><testcase classname="t" name="test_a" file="t.py"/></testsuite></testsuites>`
	res := &sandbox.Result{ExitCode: 0, Stdout: []byte("FAILED t.py::test_a - assert 1 == 2\n1 failed in 0.01s\n")}
	rep := Parse(Runner{Name: RunnerPytest, Format: Pytest}, res, []byte(junit))
	if rep.OK() || len(rep.Mismatch) == 0 {
		t.Fatalf("Parse(forged junit) OK = %v, Mismatch %q; want not OK with a mismatch", rep.OK(), rep.Mismatch)
	}
}
