package agent

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func report(exit int, tests ...testrun.Result) *testrun.Report {
	rep := &testrun.Report{ExitCode: exit, Tests: tests}
	rep.Count()
	return rep
}

func res(id string, st testrun.Status) testrun.Result {
	return testrun.Result{ID: id, Status: st, Message: "m"}
}

// TestJudgeRetry: a newly failing test that passes on retry counts as
// flaky, one that fails again as broken; a wholly passing re-run is the
// report judged, else the first run stays failing by its exit code.
func TestJudgeRetry(t *testing.T) {
	base := report(1, res("A", testrun.StatusPass), res("B", testrun.StatusPass), res("C", testrun.StatusFail))
	first := report(1, res("A", testrun.StatusFail), res("B", testrun.StatusError), res("C", testrun.StatusPass))
	if got := newlyFailing(base, first); strings.Join(got, ",") != "A,B" {
		t.Fatalf("newlyFailing = %v, want A,B", got)
	}
	if got := newlyFailing(nil, first); got != nil {
		t.Errorf("newlyFailing without a baseline = %v", got)
	}

	again := report(1, res("A", testrun.StatusPass), res("B", testrun.StatusFail), res("C", testrun.StatusPass))
	final, notes := judgeRetry(first, again, []string{"A", "B"})
	want := []string{"re-ran A: passed on retry — counted as flaky, not broken", "re-ran B: failed again — counted as broken"}
	if strings.Join(notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes = %q, want %q", notes, want)
	}
	if final.OK() || final.Passed != 2 || final.Failed != 1 {
		t.Errorf("final OK=%v passed/failed %d/%d, want not OK 2/1", final.OK(), final.Passed, final.Failed)
	}
	why := verdict(ModeFix, base, final)
	if s := strings.Join(why, "; "); strings.Contains(s, "test A ") || !strings.Contains(s, "test B passed before the run and now is error") {
		t.Errorf("verdict = %q: want B broken and A not", s)
	}
	if first.Tests[0].Status != testrun.StatusFail {
		t.Errorf("judgeRetry changed the first report")
	}

	allPass := report(0, res("A", testrun.StatusPass), res("B", testrun.StatusPass), res("C", testrun.StatusPass))
	final, notes = judgeRetry(first, allPass, []string{"A", "B"})
	if final != allPass || len(notes) != 2 || len(verdict(ModeFix, base, final)) != 0 {
		t.Errorf("a wholly passing re-run: final %p (want %p), notes %q, verdict %q", final, allPass, notes, verdict(ModeFix, base, final))
	}

	gone := report(1, res("C", testrun.StatusPass))
	if _, notes = judgeRetry(first, gone, []string{"A"}); len(notes) != 1 || !strings.Contains(notes[0], "did not run again") {
		t.Errorf("notes for a vanished test = %q", notes)
	}
}

// TestRunRetriesAFlakyTest: a fix that is right, with a test that passed
// at baseline failing once (its second run, in the fresh sandbox that
// verifies), is verified after one re-run in another fresh sandbox, and the
// run says so.
func TestRunRetriesAFlakyTest(t *testing.T) {
	skipShort(t)
	root := copyTree(t, goBugDir)
	// Under /tmp and world-writable: the host backend may run the tests as
	// another uid (t.TempDir's parent is 0700).
	dir, err := os.MkdirTemp("", "fixpoint-flaky-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	counter := filepath.Join(dir, "runs")
	flaky := `package stats

import (
	"os"
	"testing"
)

// TestFlaky fails on its second run only.
func TestFlaky(t *testing.T) {
	b, _ := os.ReadFile(` + "`" + counter + "`" + `)
	b = append(b, 'x')
	if err := os.WriteFile(` + "`" + counter + "`" + `, b, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(` + "`" + counter + "`" + `, 0o666) // past the umask: each session may run as its own uid
	if len(b) == 2 {
		t.Fatal("timed out under load")
	}
}
`
	if err = os.WriteFile(filepath.Join(root, "stats", "flaky_test.go"), []byte(flaky), 0o644); err != nil {
		t.Fatal(err)
	}
	e := New(testConfig(t), &Options{Model: goBugModel(demo.GoBugFix), Backend: testBackend(t)})
	defer e.Close()
	var mu sync.Mutex
	var msgs []string
	out, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, func(ev Event) {
		mu.Lock()
		msgs = append(msgs, ev.Message)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := os.ReadFile(counter)
	// The iteration runs only the tests that failed at baseline; the whole
	// suite runs in the fresh sandbox, where TestFlaky fails, and once more
	// in another fresh sandbox.
	if len(runs) != 3 {
		t.Fatalf("TestFlaky ran %d times, want 3 (baseline, the fresh sandbox's verification, its re-run); %s %+v", len(runs), out.StopReason, out.Final)
	}
	if out.FullRuns != 3 || out.TargetedRuns != 1 {
		t.Errorf("full runs %d, targeted runs %d; want 3 and 1", out.FullRuns, out.TargetedRuns)
	}
	if !out.Verified {
		t.Fatalf("not verified: %s\nevents:\n%s", out.StopReason, strings.Join(msgs, "\n"))
	}
	all := strings.Join(msgs, "\n")
	if !strings.Contains(all, "re-ran example.com/gobug/stats.TestFlaky: passed on retry — counted as flaky, not broken") ||
		!strings.Contains(all, "re-running the tests once in another fresh sandbox") {
		t.Errorf("events do not say the test was re-run:\n%s", all)
	}
}
