package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// TestProgressOf: outcome classes are compared before counts, and a
// killed or timed-out attempt is never improving.
func TestProgressOf(t *testing.T) {
	tests3 := func(pass, fail int) *testrun.Report {
		r := &testrun.Report{ExitCode: 1}
		for i := 0; i < pass; i++ {
			r.Tests = append(r.Tests, testrun.Result{ID: fmt.Sprint("p", i), Status: testrun.StatusPass})
		}
		for i := 0; i < fail; i++ {
			r.Tests = append(r.Tests, testrun.Result{ID: fmt.Sprint("f", i), Status: testrun.StatusFail})
		}
		if fail == 0 {
			r.ExitCode = 0
		}
		r.Count()
		return r
	}
	oom := &testrun.Report{ExitCode: 137, OOM: true, Tests: []testrun.Result{{ID: "t", Status: testrun.StatusError, Message: "out of memory: killed"}}}
	oom.Count()
	killed := &testrun.Report{ExitCode: 137} // SIGKILL without the OOM flag
	killed.Count()
	segv := &testrun.Report{ExitCode: 139}
	timeout := &testrun.Report{ExitCode: 124, TimedOut: true, Tests: []testrun.Result{{ID: "p0", Status: testrun.StatusPass}, {ID: "slow", Status: testrun.StatusError, Message: "timed out"}}}
	timeout.Count()
	build := &testrun.Report{ExitCode: 1, Tests: []testrun.Result{{ID: "example.com/m", Status: testrun.StatusError, Message: "undefined: x"}}}
	build.Count()
	build2 := &testrun.Report{ExitCode: 1, Tests: []testrun.Result{{ID: "a", Status: testrun.StatusError}, {ID: "b", Status: testrun.StatusError}}}
	build2.Count()
	tests := []struct {
		name      string
		prev, cur *testrun.Report
		want      string
	}{
		{"first attempt", nil, tests3(1, 3), "stable"},
		{"OOM-killed after 3 failures", tests3(0, 3), oom, "regressing"},
		{"killed (137) after 3 failures", tests3(0, 3), killed, "regressing"},
		{"segfault after a build failure", build, segv, "regressing"},
		{"timeout after 3 failures", tests3(0, 3), timeout, "regressing"},
		{"timeout with fewer failures than before", tests3(0, 5), timeout, "regressing"},
		{"timeout after OOM", oom, timeout, "stable"},
		{"OOM after timeout", timeout, oom, "stable"},
		{"OOM after OOM", oom, oom, "stable"},
		{"timeout after timeout with more passes", timeout, &testrun.Report{ExitCode: 124, TimedOut: true, Passed: 5}, "stable"},
		{"test failures after OOM", oom, tests3(0, 9), "improving"},
		{"build failure after timeout", timeout, build, "improving"},
		{"test failures after a build failure", build, tests3(0, 4), "improving"},
		{"build failure after test failures", tests3(2, 1), build, "regressing"},
		{"pass after failures", tests3(3, 1), tests3(4, 0), "improving"},
		{"fewer failures", tests3(1, 3), tests3(1, 2), "improving"},
		{"more passes at equal failures", tests3(1, 2), tests3(2, 2), "improving"},
		{"more failures", tests3(1, 2), tests3(1, 3), "regressing"},
		{"same counts", tests3(1, 2), tests3(1, 2), "stable"},
		{"fewer build errors", build2, build, "improving"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := progressOf(tt.prev, tt.cur); got != tt.want {
				t.Errorf("progressOf(%s) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

// TestCounts: the progress line says when a run timed out, was killed for
// memory, or had its output cut at the cap.
func TestCounts(t *testing.T) {
	tests := []struct {
		name string
		rep  *testrun.Report
		want string
	}{
		{"pass", &testrun.Report{Passed: 3}, "3 passed, 0 failed"},
		{"timeout", &testrun.Report{Passed: 1, Failed: 1, ExitCode: 124, TimedOut: true}, "1 passed, 1 failed, timed out"},
		{"oom", &testrun.Report{Failed: 1, ExitCode: 137, OOM: true}, "0 passed, 1 failed, killed: out of memory"},
		{"exit code", &testrun.Report{ExitCode: 2}, "0 passed, 0 failed, exit code 2"},
		{"cut, parsed in full", &testrun.Report{Passed: 3000, OutputCut: &testrun.OutputCut{Parsed: testrun.ParsedFull}}, "3000 passed, 0 failed, output cut at the cap (results parsed in full)"},
		{"cut, results cut too", &testrun.Report{Passed: 2003, OutputCut: &testrun.OutputCut{Parsed: testrun.ParsedCut}}, "2003 passed, 0 failed, output cut at the cap"},
	}
	for _, tt := range tests {
		if got := counts(tt.rep); got != tt.want {
			t.Errorf("counts(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestRunLogSaysOutputCut: a baseline whose output passes the cap is still
// counted in full, the run log says in words that the text was cut, and
// [test] env reaches the test command.
func TestRunLogSaysOutputCut(t *testing.T) {
	skipShort(t)
	root := t.TempDir()
	gen := "import os\nn = int(os.environ['GEN_N'])\nprint('TAP version 13')\nfor i in range(1, n + 1):\n    print('# ' + 'x' * 100)\n    print('ok %d - test %d' % (i, i))\nprint('1..%d' % n)\n"
	if err := os.WriteFile(filepath.Join(root, "gen.py"), []byte(gen), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.TestCmd = "python3 gen.py"
	cfg.Sandbox.OutputCap = "64k"
	cfg.Test.Env = map[string]string{"GEN_N": "2000"}
	e := New(cfg, &Options{Model: &scripted{}, Backend: testBackend(t)})
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopAlreadyPassing || res.Baseline == nil || res.Baseline.Passed != 2000 || !res.Baseline.OK() {
		t.Fatalf("StopReason %q, baseline %+v; want 2000 passing tests", res.StopReason, res.Baseline)
	}
	_, entries, err := runlog.Read(filepath.Dir(res.LogPath), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var warned bool
	for _, en := range entries {
		if en.Kind == runlog.KindWarning && strings.Contains(string(en.Data), "output cut") && strings.Contains(string(en.Data), "64.0 KiB output cap") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("the run log has no output-cut warning: %d entries", len(entries))
	}
}
