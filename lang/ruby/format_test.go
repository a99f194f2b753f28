package ruby

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Output captured from Debian's ruby 3.1 with its minitest 5.15.
const (
	verbose = `Run options: -v --seed 1

# Running:

CalcTest#test_add = 0.00 s = F
CalcTest#test_ok = 0.00 s = .
CalcTest#test_boom = 0.00 s = E
CalcTest#test_skip = 0.00 s = S

Finished in 0.007580s, 527.6999 runs/s, 263.8499 assertions/s.

  1) Failure:
CalcTest#test_add [/tmp/ws/test/calc_test.rb:5]:
Expected: 3
  Actual: -1

  2) Error:
CalcTest#test_boom:
RuntimeError: boom
    /tmp/ws/lib/calc.rb:9:in ` + "`boom'" + `
    /tmp/ws/test/calc_test.rb:11:in ` + "`test_boom'" + `

  3) Skipped:
CalcTest#test_skip [/tmp/ws/test/calc_test.rb:14]:
later

4 runs, 2 assertions, 1 failures, 1 errors, 1 skips
`
	quiet = `Run options: --seed 7599

# Running:

E.SF

Finished in 0.000908s, 4405.3300 runs/s, 2202.6650 assertions/s.

  1) Error:
CalcTest#test_boom:
RuntimeError: boom
    /workspace/test/calc_test.rb:11:in ` + "`test_boom'" + `

  2) Failure:
CalcTest#test_add [/workspace/test/calc_test.rb:5]:
Expected: 3
  Actual: -1

4 runs, 2 assertions, 1 failures, 1 errors, 1 skips

You have skipped tests. Run with --verbose for details.
`
	hung = "Run options: -v --seed 1\n\n# Running:\n\nCalcTest#test_add = 0.00 s = .\nHangTest#test_hang = waiting\n"
)

type want struct {
	status           testrun.Status
	file             string
	line             int
	message          string
	expected, actual string
}

func TestParse(t *testing.T) {
	tests := []struct {
		name                    string
		res                     sandbox.Result
		passed, failed, skipped int
		tests                   map[string]want
		mismatch                bool
	}{
		{name: "verbose", res: sandbox.Result{ExitCode: 1, Stdout: []byte(verbose)}, passed: 1, failed: 2, skipped: 1,
			tests: map[string]want{
				"CalcTest#test_add":  {status: testrun.StatusFail, file: "test/calc_test.rb", line: 5, message: "Expected: 3\n  Actual: -1", expected: "3", actual: "-1"},
				"CalcTest#test_ok":   {status: testrun.StatusPass},
				"CalcTest#test_boom": {status: testrun.StatusError, file: "lib/calc.rb", line: 9, message: "RuntimeError: boom"},
				"CalcTest#test_skip": {status: testrun.StatusSkip, file: "test/calc_test.rb", line: 14, message: "later"},
			}},
		{name: "quiet: failures named, passes counted", res: sandbox.Result{ExitCode: 1, Stdout: []byte(quiet)}, passed: 1, failed: 2, skipped: 1,
			tests: map[string]want{
				"CalcTest#test_add":  {status: testrun.StatusFail, file: "test/calc_test.rb", line: 5, expected: "3", actual: "-1"},
				"CalcTest#test_boom": {status: testrun.StatusError, file: "test/calc_test.rb", line: 11},
			}},
		{name: "timed out in a test", res: sandbox.Result{ExitCode: 137, TimedOut: true, Stdout: []byte(hung)}, passed: 1, failed: 1,
			tests: map[string]want{"HangTest#test_hang": {status: testrun.StatusError, message: "timed out"}}},
		{name: "process exited in a test", res: sandbox.Result{ExitCode: 3, Stdout: []byte(hung)}, passed: 1, failed: 1,
			tests: map[string]want{"HangTest#test_hang": {status: testrun.StatusError, message: Format.Unfinished}}},
		{name: "a pass line printed over the real failure", mismatch: true, passed: 1, failed: 1,
			res: sandbox.Result{ExitCode: 0, Stdout: []byte("CalcTest#test_add = 0.00 s = .\n\n1 runs, 1 assertions, 1 failures, 0 errors, 0 skips\n")}},
		{name: "summary missing", mismatch: true, passed: 1,
			res: sandbox.Result{ExitCode: 0, Stdout: []byte("CalcTest#test_add = 0.00 s = .\n")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := (Language{}).TestCommand(nil)
			r.Root = "/tmp/ws"
			rep := testrun.Parse(r, &tt.res, nil)
			if rep.Runner != "minitest" || rep.Passed != tt.passed || rep.Failed != tt.failed || rep.Skipped != tt.skipped {
				t.Errorf("Parse = %s %d/%d/%d, want minitest %d/%d/%d passed/failed/skipped: %+v", rep.Runner, rep.Passed, rep.Failed, rep.Skipped, tt.passed, tt.failed, tt.skipped, rep.Tests)
			}
			for id, w := range tt.tests {
				var got *testrun.Result
				for i := range rep.Tests {
					if rep.Tests[i].ID == id {
						got = &rep.Tests[i]
					}
				}
				if got == nil {
					t.Errorf("no result %s in %+v", id, rep.Tests)
					continue
				}
				if got.Status != w.status || got.File != w.file || got.Line != w.line || (w.message != "" && got.Message != w.message) ||
					got.Expected != w.expected || got.Actual != w.actual {
					t.Errorf("%s = %+v, want %+v", id, *got, w)
				}
			}
			if (len(rep.Mismatch) > 0) != tt.mismatch || (tt.mismatch && rep.OK()) {
				t.Errorf("Mismatch = %q, OK = %v; want mismatch %v", rep.Mismatch, rep.OK(), tt.mismatch)
			}
		})
	}
}

// A configured command (rake test, rails test) is recognised by
// minitest's summary among every format.
func TestSniffed(t *testing.T) {
	r := testrun.Custom("rake test", []*testrun.Format{testrun.GoTestJSON("", nil), testrun.TAP, Format, testrun.Unittest})
	rep := testrun.Parse(r, &sandbox.Result{ExitCode: 1, Stdout: []byte(quiet)}, nil)
	if rep.Runner != "minitest" || rep.Failed != 2 {
		t.Errorf("Parse(custom) = %s, %d failed; want minitest, 2", rep.Runner, rep.Failed)
	}
}

func TestResultLine(t *testing.T) {
	for _, l := range strings.Split(verbose, "\n") {
		want := startRe.MatchString(l) || sectionRe.MatchString(l) || headRe.MatchString(l) || summaryRe.MatchString(l)
		if got := Format.ResultLine([]byte(l)); got != want {
			t.Errorf("ResultLine(%q) = %v, want %v", l, got, want)
		}
	}
	for _, l := range []string{"0.00 s = .", "waiting", "Expected: 3", "    /tmp/ws/lib/calc.rb:9:in `boom'"} {
		if got := Format.ResultLine([]byte(l)); got != (l == "0.00 s = .") {
			t.Errorf("ResultLine(%q) = %v", l, got)
		}
	}
}
