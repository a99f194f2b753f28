package main

import (
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// The summary line names what a user must know: a time limit and where it
// is set, or that no test ran at all (not a green "0 passed").
func timedOutReport() *testrun.Report {
	rep := &testrun.Report{Runner: "go", TimedOut: true, ExitCode: 124, Duration: 120 * time.Second,
		Tests: []testrun.Result{{ID: "p.TestA", Status: testrun.StatusPass}, {ID: "p.TestB", Status: testrun.StatusPass}, {ID: "p.TestC", Status: testrun.StatusPass},
			{ID: "p.TestFail", Status: testrun.StatusFail}, {ID: "p.TestHang", Status: testrun.StatusError, Message: "timed out"}},
		Timeout: &testrun.Timeout{Limit: 120 * time.Second, Setting: testrun.TimeoutSetting, Running: []string{"p.TestHang"}}}
	rep.Count()
	rep.Timeout.Note = rep.Timeout.Sentence(rep)
	return rep
}

func TestPrintReportExplains(t *testing.T) {
	tests := []struct {
		name string
		rep  *testrun.Report
		want []string
	}{
		{"timed out", &testrun.Report{Runner: "go", TimedOut: true, Duration: 120 * time.Second, Passed: 3, Failed: 1,
			Tests: []testrun.Result{{ID: "p.TestHang", Status: testrun.StatusError, Message: "timed out"}}},
			[]string{"3 passed, 1 failed", "timed out after 2m0s", "sandbox.timeout", "--timeout", "ERROR p.TestHang"}},
		{"timed out, as Run reports it", timedOutReport(),
			[]string{"3 passed, 2 failed", "time limit of 2m0s", "(3 passed, 1 failed)", "still running: p.TestHang", `raise sandbox.timeout (now "2m0s")`, "--timeout"}},
		{"no tests", &testrun.Report{Runner: "go", Command: []string{"go", "test", "./..."}},
			[]string{"no tests found", `"go test ./..."`, "test_cmd"}},
		{"pytest no tests", &testrun.Report{Runner: "pytest", ExitCode: 5, Command: []string{"pytest"}},
			[]string{"no tests found"}},
	}
	for _, tt := range tests {
		var b strings.Builder
		printReport(&b, tt.rep)
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, w, b.String())
			}
		}
	}
	var b strings.Builder
	printReport(&b, &testrun.Report{Runner: "go", Passed: 2, Tests: []testrun.Result{{ID: "a", Status: testrun.StatusPass}, {ID: "b", Status: testrun.StatusPass}}})
	if strings.Contains(b.String(), "no tests found") || strings.Contains(b.String(), "timed out") {
		t.Errorf("a green run says more than its counts:\n%s", b.String())
	}
}
