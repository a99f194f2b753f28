package agent

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// runCountingBackend counts the commands its sessions run.
type runCountingBackend struct {
	sandbox.Backend
	runs *atomic.Int64
}

func (b runCountingBackend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	s, err := b.Backend.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return runCountingSession{s, b.runs}, nil
}

type runCountingSession struct {
	sandbox.Session
	runs *atomic.Int64
}

func (s runCountingSession) Run(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
	s.runs.Add(1)
	return s.Session.Run(ctx, c)
}

// A request that gives the baseline's report runs no baseline: the only
// test run is the iteration's, and the report given is the run's
// baseline, shown to the model.
func TestRequestBaselineSkipsTheBaselineRun(t *testing.T) {
	skipShort(t)
	// The run without a given baseline counts the commands of a run that
	// tests twice; the one with it must run one command fewer.
	var ran, ranTargeted, ranTrace int64
	tests := []struct {
		name     string
		baseline *testrun.Report
	}{
		{name: "run"},
		{name: "given", baseline: &testrun.Report{Runner: testrun.RunnerExitCode, ExitCode: 1, Failed: 1, Output: "known to fail: Median of an even count",
			Tests: []testrun.Result{{ID: "(exit)", Name: "exit status 1", Status: testrun.StatusError, Message: "known to fail: Median of an even count"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int64
			m := &scripted{rules: []rule{{contains: "", replies: []string{demo.GoBugFix}}}}
			e := New(testConfig(t), &Options{Model: m, Backend: runCountingBackend{testBackend(t), &runs}})
			defer e.Close()
			res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: copyTree(t, goBugDir), Baseline: tt.baseline}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Verified {
				t.Fatalf("run ended %q, want verified", res.StopReason)
			}
			if tt.baseline == nil {
				ran, ranTargeted = runs.Load(), int64(res.TargetedRuns)
				if res.TraceTime > 0 {
					ranTrace = 1 // the failing tests, traced (agent/trace.go)
				}
				return
			}
			// Two commands fewer for the baseline (it runs in a session of
			// its own, of the user's build cache: its run and that
			// session's runtime check), and two fewer again for each
			// targeted run the given report leaves out: a whole-run exit
			// status names no test to narrow an iteration to, so the fresh
			// run of the whole suite is the iteration's only run, and no
			// working session starts (nor runs its runtime check). A
			// given baseline is not traced: one fewer for the trace.
			if res.TraceTime != 0 {
				t.Errorf("a given baseline was traced (%s)", res.TraceTime)
			}
			want := ran - 2 - ranTrace - 2*(ranTargeted-int64(res.TargetedRuns))
			if got := runs.Load(); got != want || res.FullRuns != 1 {
				t.Errorf("sandbox commands = %d, full runs %d; want %d commands (the run's %d, less its baseline session's two and two per targeted run left out: %d) and 1 full run",
					got, res.FullRuns, want, ran, ranTargeted-int64(res.TargetedRuns))
			}
			{
				if res.Baseline != tt.baseline {
					t.Errorf("Result.Baseline = %+v, want the report given", res.Baseline)
				}
				if len(m.calls) == 0 || !strings.Contains(m.calls[0], "known to fail: Median of an even count") {
					t.Errorf("the first prompt does not show the given baseline")
				}
			}
		})
	}
}

// cacheRecordingBackend records the build cache of every session started.
type cacheRecordingBackend struct {
	sandbox.Backend
	mu    *sync.Mutex
	kinds *[]sandbox.BuildCache
}

func (b cacheRecordingBackend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	b.mu.Lock()
	*b.kinds = append(*b.kinds, spec.BuildCache)
	b.mu.Unlock()
	return b.Backend.Start(ctx, spec)
}

// The baseline runs the user's own code only, in a session of the user's
// build cache, which the later sessions start as a copy of; every session
// that runs the model's code has a fresh cache of its own, so nothing the
// model's code writes to a build cache outlives its session.
func TestBaselineRunsInTheUserCache(t *testing.T) {
	skipShort(t)
	var mu sync.Mutex
	var kinds []sandbox.BuildCache
	m := &scripted{rules: []rule{{contains: "", replies: []string{demo.GoBugFix}}}}
	e := New(testConfig(t), &Options{Model: m, Backend: cacheRecordingBackend{testBackend(t), &mu, &kinds}})
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: copyTree(t, goBugDir)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified {
		t.Fatalf("run ended %q, want verified", res.StopReason)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(kinds) < 3 || kinds[0] != sandbox.BuildCacheUser {
		t.Fatalf("sessions' build caches = %v; want the baseline's (user, %d) first, then the working and verifying sessions'", kinds, sandbox.BuildCacheUser)
	}
	for i, k := range kinds[1:] {
		if k != sandbox.BuildCacheFresh {
			t.Errorf("session %d after the baseline has build cache %d, want fresh (%d): it runs the model's code", i+2, k, sandbox.BuildCacheFresh)
		}
	}
}
