package testrun

import (
	"strings"
	"testing"
)

// Tests written after the held-out mutation audit (internal/mutation/
// heldout.txtar): each fails for one of the mutants that survived it.

// A run the memory limit killed is never OK, whatever was parsed.
func TestReportOOMIsNotOK(t *testing.T) {
	if (&Report{ExitCode: 0, OOM: true, Passed: 3}).OK() {
		t.Error("Report{OOM: true}.OK() = true, want false")
	}
}

// A teardown error pytest reports after the test's pass wins over the pass.
func TestPytestTeardownErrorAfterPass(t *testing.T) {
	report := []byte(`<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="2">` +
		`<testcase classname="test_a" name="test_x" file="test_a.py" line="1"></testcase>` +
		`<testcase classname="test_a" name="test_x" file="test_a.py" line="1"><error message="teardown failed">boom</error></testcase>` +
		`</testsuite></testsuites>`)
	res := parsePytest(report, nil, newNormalizer(""))
	if len(res) != 1 || res[0].Status != StatusError {
		t.Fatalf("parsePytest = %+v, want one test with status error", res)
	}
}

// Without a report, an XFAIL summary line is a skip, never a pass.
func TestPytestXfailSummaryIsNoPass(t *testing.T) {
	res := parsePytest(nil, []byte("XFAIL test_a.py::test_x - known bug\nPASSED test_a.py::test_y\n"), newNormalizer(""))
	for _, r := range res {
		if strings.HasSuffix(r.ID, "test_x") && r.Status == StatusPass {
			t.Errorf("XFAIL test_x parsed as %s, want skip", r.Status)
		}
	}
}

// A private-mode escape (ESC [ ? 1049 h, the alternate screen) never
// survives into a message.
func TestAnsiPrivateModeStripped(t *testing.T) {
	if got := ansiRe.ReplaceAllString("a\x1b[?1049hb\x1b[?25l", ""); got != "ab" {
		t.Errorf("ansiRe strips to %q, want %q", got, "ab")
	}
}
