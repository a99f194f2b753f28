package testrun

import (
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// unexpectedSuccessOut is `python3.11 -m unittest -v` on a class with a
// pass, two unexpected successes (expectedFailure tests that pass), an
// expected failure and a failure.
const unexpectedSuccessOut = `test_a (test_u.T.test_a) ... ok
test_b (test_u.T.test_b) ... unexpected success
test_c (test_u.T.test_c) ... unexpected success
test_d (test_u.T.test_d) ... expected failure
test_e (test_u.T.test_e) ... FAIL

======================================================================
FAIL: test_e (test_u.T.test_e)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/workspace/test_u.py", line 10, in test_e
    def test_e(self): self.assertEqual(1, 2)
                      ^^^^^^^^^^^^^^^^^^^^^^
AssertionError: 1 != 2

======================================================================
UNEXPECTED SUCCESS: test_b (test_u.T.test_b)
UNEXPECTED SUCCESS: test_c (test_u.T.test_c)
----------------------------------------------------------------------
Ran 5 tests in 0.001s

FAILED (failures=1, expected failures=1, unexpected successes=2)
`

// TestUnittestUnexpectedSuccessIsAFailure: unittest counts an unexpected
// success (a test marked expectedFailure that passes) against the run
// (wasSuccessful() is false, the exit code 1); so does fixpoint, for every
// such test, whether Python prints the UNEXPECTED SUCCESS section (3.11+)
// or only the verbose line (older versions).
func TestUnittestUnexpectedSuccessIsAFailure(t *testing.T) {
	withoutSection := unexpectedSuccessOut[:len("test_a (test_u.T.test_a) ... ok\ntest_b (test_u.T.test_b) ... unexpected success\ntest_c (test_u.T.test_c) ... unexpected success\ntest_d (test_u.T.test_d) ... expected failure\n")] +
		"\n----------------------------------------------------------------------\nRan 4 tests in 0.001s\n\nFAILED (expected failures=1, unexpected successes=2)\n"
	for _, tt := range []struct {
		name, out string
		failed    int
	}{
		{"3.11 with the section", unexpectedSuccessOut, 3},
		{"verbose lines only", withoutSection, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := Parse(Runner{Name: RunnerUnittest, Format: Unittest}, &sandbox.Result{ExitCode: 1, Stderr: []byte(tt.out)}, nil)
			st := map[string]Status{}
			for _, r := range rep.Tests {
				st[r.ID] = r.Status
			}
			want := map[string]Status{"test_u.T.test_a": StatusPass, "test_u.T.test_b": StatusFail, "test_u.T.test_c": StatusFail, "test_u.T.test_d": StatusSkip}
			for id, w := range want {
				if st[id] != w {
					t.Errorf("%s = %q, want %q (all: %v)", id, st[id], w, st)
				}
			}
			for _, r := range rep.Tests {
				if (r.ID == "test_u.T.test_b" || r.ID == "test_u.T.test_c") && r.Message != "unexpected success" {
					t.Errorf("%s message = %q, want %q", r.ID, r.Message, "unexpected success")
				}
			}
			if rep.Passed != 1 || rep.Failed != tt.failed || rep.OK() {
				t.Errorf("passed %d, failed %d, OK %v; want 1, %d, false", rep.Passed, rep.Failed, rep.OK(), tt.failed)
			}
		})
	}
}
