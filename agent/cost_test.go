package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// testCommands lists the command of every test run in a run's log.
func testCommands(t *testing.T, res *Result) [][]string {
	t.Helper()
	_, entries, err := runlog.Read(filepath.Dir(res.LogPath), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, e := range entries {
		if e.Kind != runlog.KindTest {
			continue
		}
		var rep testrun.Report
		if err := json.Unmarshal(e.Data, &rep); err != nil {
			t.Fatal(err)
		}
		out = append(out, rep.Command)
	}
	return out
}

// TestFixRunsTheWholeSuiteTwice: a fix found in the second iteration runs
// the whole suite twice (the baseline, the fresh sandbox's verification)
// and, in each iteration, only the test that failed at baseline (by name,
// in its package).
func TestFixRunsTheWholeSuiteTwice(t *testing.T) {
	fix := "stats/stats.go\n<<<<<<< SEARCH\n\treturn s[mid-1], nil\n=======\n\tif len(s)%2 == 0 {\n\t\treturn (s[mid-1] + s[mid]) / 2, nil\n\t}\n\treturn s[mid], nil\n>>>>>>> REPLACE\n"
	m := goBugModel(wrongMedian("s[mid]", "s[mid-1]"), fix)
	res, _ := runGoBug(t, m, nil)
	if !res.Verified {
		t.Fatalf("not verified: %s", res.StopReason)
	}
	// Targeted: iteration 1, its re-run (the wrong edit breaks
	// TestMedian/odd, which passed at baseline: a newly failing test gets
	// one), iteration 2.
	if res.FullRuns != 2 || res.TargetedRuns != 3 {
		t.Errorf("full runs %d, targeted runs %d; want 2 and 3", res.FullRuns, res.TargetedRuns)
	}
	if len(res.Iterations) != 2 || !res.Iterations[0].Targeted || !res.Iterations[1].Targeted {
		t.Fatalf("iterations = %+v, want two that ran the failing test only", res.Iterations)
	}
	if it := res.Iterations[0]; it.Failed == 0 || it.Passed+it.Failed >= res.Baseline.Passed+res.Baseline.Failed {
		t.Errorf("first iteration counted %d passed, %d failed: not the failing test only (baseline %d/%d)", it.Passed, it.Failed, res.Baseline.Passed, res.Baseline.Failed)
	}
	cmds := testCommands(t, res)
	var narrowed, whole int
	for _, c := range cmds {
		if i := slices.Index(c, "-run"); i >= 0 {
			narrowed++
			if c[i+1] != "^(TestMedian)$" || c[len(c)-1] != "example.com/gobug/stats" {
				t.Errorf("narrowed command %q, want -run ^(TestMedian)$ example.com/gobug/stats", c)
			}
			continue
		}
		whole++
	}
	if narrowed != 3 || whole != 2 {
		t.Errorf("test commands %q: want 3 narrowed and 2 whole", cmds)
	}
	// The verdict is the fresh run of the whole suite.
	if res.Final.Passed != res.Baseline.Passed+res.Baseline.Failed || res.Final.Failed != 0 {
		t.Errorf("final %d passed %d failed; baseline %d/%d", res.Final.Passed, res.Final.Failed, res.Baseline.Passed, res.Baseline.Failed)
	}
}

// TestFixRegressionOutsideTheFailingTests: an edit that makes the failing
// test pass and breaks another is caught by the whole suite in the fresh
// sandbox; the model is told it is a regression (not state left behind),
// and the next iteration's fix is verified.
func TestFixRegressionOutsideTheFailingTests(t *testing.T) {
	breakMean := "stats/stats.go\n<<<<<<< SEARCH\n\treturn sum / float64(len(xs)), nil\n=======\n\treturn sum / float64(len(xs)+1), nil\n>>>>>>> REPLACE\n"
	fixMean := "stats/stats.go\n<<<<<<< SEARCH\n\treturn sum / float64(len(xs)+1), nil\n=======\n\treturn sum / float64(len(xs)), nil\n>>>>>>> REPLACE\n"
	m := goBugModel(demo.GoBugFix+"\n"+breakMean, fixMean)
	res, _ := runGoBug(t, m, nil)
	if !res.Verified {
		t.Fatalf("not verified: %s", res.StopReason)
	}
	// The baseline; the fresh run where TestMean fails and its re-run in
	// another fresh sandbox (a test that passed at baseline gets one);
	// the second iteration's fresh run.
	if res.FullRuns != 4 || res.TargetedRuns != 2 || len(res.Iterations) != 2 {
		t.Errorf("full runs %d, targeted runs %d, iterations %d; want 4, 2, 2", res.FullRuns, res.TargetedRuns, len(res.Iterations))
	}
	m.mu.Lock()
	calls := slices.Clone(m.calls)
	m.mu.Unlock()
	if len(calls) < 2 {
		t.Fatalf("%d prompts", len(calls))
	}
	if second := calls[1]; !strings.Contains(second, "whole suite does not") || !strings.Contains(second, "TestMean") || strings.Contains(second, "left behind") {
		t.Errorf("second prompt does not report the regression as such:\n%s", second)
	}
}

// namedBackend is a backend under another name: the host backend standing
// for a sandboxing one in tests of what "none" turns off.
type namedBackend struct {
	sandbox.Backend
	name string
}

func (b namedBackend) Name() string { return b.name }

// TestBaselineReusedWhenNothingChanged: a second fix run on the same
// workspace reuses the first run's baseline and says so; a changed file
// runs it again; with sandbox "none" nothing is cached.
func TestBaselineReusedWhenNothingChanged(t *testing.T) {
	skipShort(t)
	root := copyTree(t, goBugDir)
	cfg := testConfig(t)
	run := func(b sandbox.Backend) (*Result, []string) {
		t.Helper()
		e := New(cfg, &Options{Model: goBugModel(demo.GoBugFix), Backend: b})
		defer e.Close()
		var mu sync.Mutex
		var msgs []string
		res, err := e.Run(context.Background(), Request{Mode: ModeFix, Root: root}, func(ev Event) {
			mu.Lock()
			msgs = append(msgs, ev.Message)
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Verified {
			t.Fatalf("not verified: %s", res.StopReason)
		}
		return res, msgs
	}
	sandboxed := namedBackend{testBackend(t), "bwrap"}
	first, _ := run(sandboxed)
	if first.FullRuns != 2 || !first.BaselineReused.IsZero() {
		t.Fatalf("first run: %d full runs, reused %v", first.FullRuns, first.BaselineReused)
	}
	second, msgs := run(sandboxed)
	if second.FullRuns != 1 || second.BaselineReused.IsZero() {
		t.Fatalf("second run: %d full runs, reused %v; want the baseline reused", second.FullRuns, second.BaselineReused)
	}
	if !slices.ContainsFunc(msgs, func(s string) bool { return strings.Contains(s, "baseline reused from") }) {
		t.Errorf("no event says the baseline was reused: %q", msgs)
	}
	// The trace of the failing tests comes back with the baseline, not
	// run again (agent/trace.go).
	if first.TracedFiles == 0 || first.TraceTime == 0 || second.TracedFiles != first.TracedFiles || second.TraceTime != 0 {
		t.Errorf("trace: first run %d files in %s, second %d files in %s; want the first's trace reused, not run",
			first.TracedFiles, first.TraceTime, second.TracedFiles, second.TraceTime)
	}
	if second.Baseline.Failed != first.Baseline.Failed || second.Baseline.Passed != first.Baseline.Passed {
		t.Errorf("reused baseline %d/%d, first %d/%d", second.Baseline.Passed, second.Baseline.Failed, first.Baseline.Passed, first.Baseline.Failed)
	}
	if err := os.WriteFile(filepath.Join(root, "NOTES.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if third, _ := run(sandboxed); third.FullRuns != 2 || !third.BaselineReused.IsZero() {
		t.Errorf("after a file changed: %d full runs, reused %v; want the baseline run", third.FullRuns, third.BaselineReused)
	}
	// The host backend runs the code under test as the user, who owns the
	// cache: there it is neither read nor written.
	if New(cfg, &Options{Backend: testBackend(t)}).baselineCacheable() || !New(cfg, &Options{Backend: sandboxed}).baselineCacheable() {
		t.Error("the cache must be off with sandbox none only")
	}
}

// TestTargetedRunsOnBwrap: on the real bwrap sandbox, a Go and a pytest fix
// each run the failing test alone in the iteration (go test -run with its
// package; pytest with its node id) and the whole suite twice.
func TestTargetedRunsOnBwrap(t *testing.T) {
	skipShort(t)
	cases := []struct {
		name, dir, image string
		prep             map[string]string
		reply            string
		narrowed         []string // in the narrowed command, in order
	}{
		{"go", goBugDir, "fixpoint-sandbox-go", nil, demo.GoBugFix, []string{"-run", "^(TestMedian)$", "example.com/gobug/stats"}},
		{"pytest", "testdata/py-bug", "fixpoint-sandbox-python", pytestProject, pyFix, []string{"no:cacheprovider", "tests/test_chunks.py::ChunkTest::test_remainder"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			be := attackBackends(t)["bwrap"](t, c.image)
			root := copyTree(t, c.dir)
			for p, text := range c.prep {
				if err := os.WriteFile(filepath.Join(root, p), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			e := New(testConfig(t), &Options{Model: &scripted{rules: []rule{{contains: markCode, replies: []string{c.reply}}}}, Backend: be})
			defer e.Close()
			res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Verified || len(res.Iterations) != 1 || !res.Iterations[0].Targeted {
				t.Fatalf("verified %v (%s), iterations %+v", res.Verified, res.StopReason, res.Iterations)
			}
			if res.FullRuns != 2 || res.TargetedRuns != 1 {
				t.Errorf("full runs %d, targeted runs %d; want 2 and 1", res.FullRuns, res.TargetedRuns)
			}
			it := res.Iterations[0]
			if it.Passed == 0 || it.Failed != 0 || it.Passed >= res.Final.Passed {
				t.Errorf("the iteration counted %d passed, %d failed; the whole suite %d: want the failing tests only, passing", it.Passed, it.Failed, res.Final.Passed)
			}
			cmds := testCommands(t, res)
			if len(cmds) != 3 {
				t.Fatalf("test commands %q, want 3", cmds)
			}
			sel := strings.Join(cmds[1], "\x00")
			if !strings.Contains(sel, strings.Join(c.narrowed, "\x00")) || slices.Equal(cmds[1], cmds[0]) || !slices.Equal(cmds[0], cmds[2]) {
				t.Errorf("commands %q: want the whole suite, then %q, then the whole suite", cmds, c.narrowed)
			}
		})
	}
}

// TestTargetVerdictAndProgress: a run of the failing tests lets the whole
// suite run only when every target passes by name; it counts as covering
// a package entry by any test of that package; progress against a whole
// run compares only the tests it ran.
func TestTargetVerdictAndProgress(t *testing.T) {
	res := func(id, pkg string, st testrun.Status) testrun.Result {
		return testrun.Result{ID: id, Name: id, Package: pkg, Status: st}
	}
	report := func(exit int, tests ...testrun.Result) *testrun.Report {
		r := &testrun.Report{ExitCode: exit, Tests: tests}
		r.Count()
		return r
	}
	targets := []testrun.Result{res("p.TestA", "p", testrun.StatusFail), {ID: "q", Name: "build failed", Package: "q", Status: testrun.StatusError}}
	pass := report(0, res("p.TestA", "p", testrun.StatusPass), res("q.TestQ", "q", testrun.StatusPass))
	if why := targetVerdict(targets, pass); len(why) != 0 || !covers(pass, targets) {
		t.Errorf("passing targets: %q, covers %v", why, covers(pass, targets))
	}
	skipped := report(0, res("p.TestA", "p", testrun.StatusSkip), res("q.TestQ", "q", testrun.StatusPass))
	if why := targetVerdict(targets, skipped); len(why) != 1 || !strings.Contains(why[0], "p.TestA") {
		t.Errorf("a skipped target: %q", why)
	}
	missing := report(0, res("q.TestQ", "q", testrun.StatusPass))
	if covers(missing, targets) || len(targetVerdict(targets, missing)) == 0 {
		t.Error("a run without a target covers it")
	}
	if noPkg := report(0, res("p.TestA", "p", testrun.StatusPass)); covers(noPkg, targets) {
		t.Error("a package entry is covered without any test of its package")
	}
	failing := report(1, res("p.TestA", "p", testrun.StatusPass), res("q.TestQ", "q", testrun.StatusFail))
	if why := targetVerdict(targets, failing); len(why) == 0 {
		t.Error("a run with a failure lets the whole suite run")
	}
	// Progress: the baseline ran 10 passing tests and TestA failing; the
	// narrowed run fails TestA alone: stable, not a loss of 10 passes.
	var whole []testrun.Result
	for i := range 10 {
		whole = append(whole, res("p.TestOK"+string(rune('a'+i)), "p", testrun.StatusPass))
	}
	baseline := report(1, append(whole, res("p.TestA", "p", testrun.StatusFail))...)
	narrowed := report(1, res("p.TestA", "p", testrun.StatusFail))
	if got := progressOf(comparable(baseline, false, narrowed, true)); got != "stable" {
		t.Errorf("narrowed against whole: %s, want stable", got)
	}
	if got := progressOf(baseline, narrowed); got != "regressing" {
		t.Errorf("without comparable: %s (the case it exists for)", got)
	}
	fixed := report(0, res("p.TestA", "p", testrun.StatusPass))
	if got := progressOf(comparable(baseline, false, fixed, true)); got != "improving" {
		t.Errorf("fixed narrowed run: %s, want improving", got)
	}
}

// TestFixWithoutASelectionRunsTheSuiteFreshOnly: with a custom test_cmd
// no language narrows (go test behind sh -c: no language's runner, its
// output read per test by sniffing; a bare `go test` is Go's runner and is
// narrowed, lang/golang ConfiguredRunner), an iteration runs nothing in
// the working session:
// the whole suite runs in the fresh sandbox, as the iteration's run and
// the verdict; a wrong first attempt is reported as a plain failure.
func TestFixWithoutASelectionRunsTheSuiteFreshOnly(t *testing.T) {
	fix := "stats/stats.go\n<<<<<<< SEARCH\n\treturn s[mid-1], nil\n=======\n\tif len(s)%2 == 0 {\n\t\treturn (s[mid-1] + s[mid]) / 2, nil\n\t}\n\treturn s[mid], nil\n>>>>>>> REPLACE\n"
	m := goBugModel(wrongMedian("s[mid]", "s[mid-1]"), fix)
	res, _ := runGoBug(t, m, func(e *Engine) { e.cfg.TestCmd = "sh -c 'go test -json ./...'" })
	if !res.Verified || len(res.Iterations) != 2 {
		t.Fatalf("verified %v (%s), iterations %+v", res.Verified, res.StopReason, res.Iterations)
	}
	// The baseline, iteration 1's fresh run, its re-run in another fresh
	// sandbox (TestMedian/odd passed at baseline and fails), iteration 2's.
	if res.FullRuns != 4 || res.TargetedRuns != 0 {
		t.Errorf("full runs %d, targeted runs %d; want 4 and 0", res.FullRuns, res.TargetedRuns)
	}
	if it := res.Iterations[0]; it.Targeted || it.Failed == 0 || it.ConfirmTime == 0 {
		t.Errorf("iteration 1 %+v: want the fresh run's failures", it)
	}
	m.mu.Lock()
	second := m.calls[1]
	m.mu.Unlock()
	if strings.Contains(second, "left behind") || !strings.Contains(second, "TestMedian") {
		t.Errorf("second prompt: want the plain failure of TestMedian:\n%s", second)
	}
}
