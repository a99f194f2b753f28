package swe

import (
	"math"
	"strings"
	"testing"
)

// The timeline of a verified fix whose failing tests ran alone (a real
// run's, dependency-groups), split into its phases.
func TestPhasesOfTargetedRun(t *testing.T) {
	tl := []Step{
		{0.02, "starting the sandbox"},
		{1.84, "running the baseline tests"},
		{3.48, "baseline: 51 passed, 2 failed"},
		{3.48, "Iteration 1/6 · asking the model for edits"},
		{4.48, "Iteration 1/6 · running the tests that failed at baseline (and the whole suite beside them, in a fresh sandbox)"},
		{6.93, "Iteration 1/6 · failing tests: 2 passed, 0 failed"},
		{6.93, "Iteration 1/6 · verifying in a fresh sandbox"},
		{7.99, "Iteration 1/6 · fresh sandbox: 53 passed, 0 failed"},
		{7.99, "Iteration 1/6 · verified: 53 passed, 0 failed"},
	}
	p := phasesOf(tl, 8.5)
	want := Phases{Start: 1.84, Baseline: 1.64, Model: 1.0, Targeted: 2.45, Verify: 1.06, End: 0.51}
	if !near(p, want) {
		t.Fatalf("phases = %+v, want %+v", p, want)
	}
	if got := p.Start + p.Baseline + p.Model + p.Targeted + p.Verify + p.End; math.Abs(got-8.5) > 1e-9 {
		t.Errorf("phases sum to %v, want the wall 8.5", got)
	}
	if s := p.String(); s != "1.8 / 1.6 / 1.0 / 2.4 / 1.1 / 0.5" {
		t.Errorf("String() = %q", s)
	}
}

// A run whose failing tests are not run alone goes from the model's reply
// to the verifying run directly; a reused baseline has no baseline run;
// a second iteration adds to the same phases.
func TestPhasesOfDirectRunsAndIterations(t *testing.T) {
	tl := []Step{
		{0, "starting the sandbox"},
		{0.5, "baseline reused from 2026-11-27 10:00:00: the workspace, test command, sandbox and fixpoint are unchanged"},
		{0.5, "baseline (reused from 2026-11-27 10:00:00): 3 passed, 1 failed"},
		{0.5, "Iteration 1/6 · asking the model for edits"},
		{1.5, "Iteration 1/6 · the whole suite took 0.4s at baseline: running it in a fresh sandbox, not the failing tests first"},
		{1.5, "Iteration 1/6 · verifying in a fresh sandbox"},
		{3.0, "Iteration 1/6 · fresh sandbox: 3 passed, 1 failed"},
		{3.2, "Iteration 1/6 · reflecting on the failure"},
		{4.0, "Iteration 2/6 · asking the model for edits"},
		{5.0, "Iteration 2/6 · verifying in a fresh sandbox"},
		{6.0, "Iteration 2/6 · fresh sandbox: 4 passed, 0 failed"},
	}
	p := phasesOf(tl, 6.0)
	want := Phases{Start: 0.5, Model: 2.0, Verify: 2.5, End: 1.0}
	if !near(p, want) {
		t.Fatalf("phases = %+v, want %+v", p, want)
	}
	if !strings.Contains(p.String(), "– / 2.0 / – / 2.5") {
		t.Errorf("String() = %q: want a dash for the phases that did not happen", p.String())
	}
}

func near(a, b Phases) bool {
	d := func(x, y float64) bool { return math.Abs(x-y) < 1e-6 }
	return d(a.Start, b.Start) && d(a.Baseline, b.Baseline) && d(a.Model, b.Model) &&
		d(a.Targeted, b.Targeted) && d(a.Verify, b.Verify) && d(a.End, b.End)
}

// The sandboxed reference is reported beside the native time: per
// instance and as a median over the instances that measured it.
func TestSandboxedReferenceReported(t *testing.T) {
	res := []Result{
		{ID: "a", Split: "tuning", Verified: true, Wall: 6, Native: 2, Sandboxed: 4},
		{ID: "b", Split: "tuning", Verified: true, Wall: 10, Native: 1, Sandboxed: 2},
		{ID: "c", Split: "tuning", Verified: true, Wall: 3, Native: 1},
	}
	s := Summarize(res)[0]
	if s.MedianSandboxed != 5 || s.MedianRatio != 3 {
		t.Errorf("medians: sandboxed %v, native %v; want 5 (of 1.5 and 5) and 3", s.MedianSandboxed, s.MedianRatio)
	}
	md := Markdown("docker", true, res)
	for _, want := range []string{"| 3.00× | 5.00× |", "| 4.0s | 1.50× |", "| 2.0s | 5.00× |", "| 1.0s | 3.00× | – | – |"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

// The trace of the failing tests before the first prompt (agent.trace) is
// a phase of its own, between the baseline's result and the model, and
// the per-instance line names its time.
func TestPhasesOfTracedRun(t *testing.T) {
	tl := []Step{
		{0, "starting the sandbox"},
		{1, "running the baseline tests"},
		{3, "baseline: 51 passed, 2 failed"},
		{3.5, "tracing the 2 failing tests (the code they run ranks the context)"},
		{5.5, "traced in 2.0s: 7 files ran"},
		{5.5, "Iteration 1/6 · asking the model for edits"},
	}
	p := phasesOf(tl, 6)
	want := Phases{Start: 1, Baseline: 2, Trace: 2, Model: 1}
	if !near(p, want) || math.Abs(p.Trace-2) > 1e-9 {
		t.Fatalf("phases = %+v, want %+v", p, want)
	}
	line := progressLine(1, 1, Instance{ID: "x"}, Result{TraceSeconds: 2, TracedFiles: 7}, &Options{PromptOnly: true})
	if !strings.Contains(line, "traced 7 files in 2.0s") {
		t.Errorf("progress line %q does not name the trace", line)
	}
}
