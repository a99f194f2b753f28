package agent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Tests written against the survivors of a mutation audit (issue 20,
// Deliver 9): each fails when the bug it is named after is introduced;
// internal/mutation/mutants.txtar keeps checking that.

// TestVerdictSolveNeedsANewPassingTest: in solve mode the new test that
// pins the goal down must pass; a new test that is skipped, xfail-marked or
// erroring does not count.
func TestVerdictSolveNeedsANewPassingTest(t *testing.T) {
	r := func(exit int, tests ...testrun.Result) *testrun.Report {
		rep := &testrun.Report{ExitCode: exit, Tests: tests}
		rep.Count()
		return rep
	}
	res := func(id string, st testrun.Status) testrun.Result { return testrun.Result{ID: id, Status: st} }
	base := r(0, res("a", testrun.StatusPass))
	tests := []struct {
		name  string
		final *testrun.Report
		want  string // substring of the reasons; "" = verified
	}{
		{name: "new test passes", final: r(0, res("a", testrun.StatusPass), res("n", testrun.StatusPass))},
		{name: "new test skipped", final: r(0, res("a", testrun.StatusPass), res("n", testrun.StatusSkip)), want: "needs new tests"},
		{name: "two new tests, both skipped", final: r(0, res("a", testrun.StatusPass), res("n", testrun.StatusSkip), res("m", testrun.StatusSkip)), want: "needs new tests"},
		{name: "new test errors", final: r(1, res("a", testrun.StatusPass), res("n", testrun.StatusError)), want: "needs new tests"},
		{name: "old test still passes, nothing new", final: r(0, res("a", testrun.StatusPass)), want: "needs new tests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(verdict(ModeSolve, base, tt.final), "; ")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("verdict(solve) = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCheckEditsNestedTestData: a file under a testdata/ directory at any
// depth is test infrastructure (golden files the tests compare against).
func TestCheckEditsNestedTestData(t *testing.T) {
	for _, p := range []string{
		"testdata/x.golden",
		"a/testdata/x.golden",
		"a/b/testdata/x.golden",
		"a/b/c/testdata/sub/x.golden",
	} {
		before := map[string][]byte{p: []byte("want\n")}
		after := map[string][]byte{p: []byte("got\n")}
		if got := strings.Join(checkEdits(ModeFix, false, before, after), "; "); !strings.Contains(got, "test data") {
			t.Errorf("checkEdits(fix, edit %s) = %q, want it refused as test data", p, got)
		}
		if got := strings.Join(checkEdits(ModeFix, false, map[string][]byte{p: nil}, after), "; "); !strings.Contains(got, "test data") {
			t.Errorf("checkEdits(fix, new %s) = %q, want it refused as test data", p, got)
		}
	}
}

// usageModel answers every prompt with the same reply and reports the
// given token usage: prompts that are expensive and replies that are cheap.
type usageModel struct {
	mu    sync.Mutex
	reply string
	usage llm.Usage
	calls int
}

func (m *usageModel) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	return &llm.Response{Content: m.reply, Usage: m.usage}, nil
}

// TestRunTokenBudgetCountsInputTokens: agent.token_budget counts the
// prompt tokens as well as the reply's. One reply of 1 token whose prompt
// cost 5000 exhausts a budget of 4000, and the run stops there instead of
// running to max iterations.
func TestRunTokenBudgetCountsInputTokens(t *testing.T) {
	skipShort(t)
	root := copyTree(t, goBugDir)
	cfg := testConfig(t)
	cfg.Agent.TokenBudget = 4000
	cfg.Agent.MaxIterations = 3
	m := &usageModel{reply: wrongMedian("s[mid]", "s[0]"), usage: llm.Usage{In: 5000, Out: 1}}
	e := New(cfg, &Options{Model: m, Backend: testBackend(t)})
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Verified || res.StopReason != StopTokenBudget {
		t.Errorf("Verified = %v, StopReason = %q; want %q", res.Verified, res.StopReason, StopTokenBudget)
	}
	if res.TokensIn != 5000 || res.TokensOut != 1 {
		t.Errorf("tokens in %d, out %d; want 5000 and 1", res.TokensIn, res.TokensOut)
	}
	if m.calls != 1 || len(res.Iterations) != 1 {
		t.Errorf("%d model calls, %d iterations after the budget ran out; want 1 and 1", m.calls, len(res.Iterations))
	}
}

// TestRunTokenBudgetCountsOutputTokens: the other half, the reply's tokens
// count too.
func TestRunTokenBudgetCountsOutputTokens(t *testing.T) {
	skipShort(t)
	root := copyTree(t, goBugDir)
	cfg := testConfig(t)
	cfg.Agent.TokenBudget = 4000
	cfg.Agent.MaxIterations = 3
	m := &usageModel{reply: wrongMedian("s[mid]", "s[0]"), usage: llm.Usage{In: 1, Out: 5000}}
	e := New(cfg, &Options{Model: m, Backend: testBackend(t)})
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.StopReason != StopTokenBudget || m.calls != 1 {
		t.Errorf("StopReason = %q after %d model calls; want %q after 1", res.StopReason, m.calls, StopTokenBudget)
	}
}

// blockingModel answers only when the run's context ends (or, as a safety
// net for a broken budget, after 30 s, with a wrong fix that ends the
// iteration).
type blockingModel struct{ calls int }

func (m *blockingModel) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	m.calls++
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(30 * time.Second):
		return &llm.Response{Content: wrongMedian("s[mid]", "s[0]")}, nil
	}
}

// TestRunWallBudget: agent.wall_budget bounds the run: a model call still
// running when it is spent is abandoned, and the run stops with the wall
// budget as its reason (not "cancelled", not max iterations).
func TestRunWallBudget(t *testing.T) {
	skipShort(t)
	root := copyTree(t, goBugDir)
	cfg := testConfig(t)
	cfg.Agent.WallBudget = config.Duration(10 * time.Second) // far above the setup here: the given baseline runs nothing
	cfg.Agent.MaxIterations = 1
	m := &blockingModel{}
	e := New(cfg, &Options{Model: m, Backend: testBackend(t)})
	defer e.Close()
	base := &testrun.Report{ExitCode: 1, Tests: []testrun.Result{{ID: "stats.TestMedian", Status: testrun.StatusFail}}}
	base.Count()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root, Baseline: base}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Verified || res.StopReason != StopWallBudget || m.calls != 1 {
		t.Errorf("Verified = %v, StopReason = %q after %d model calls; want %q after 1", res.Verified, res.StopReason, m.calls, StopWallBudget)
	}
}

// TestCheckEditsSnapshots: in fix mode a test snapshot (jest, vitest,
// syrupy, insta) is the specification like any golden file: rewriting it
// to the buggy output, or adding one, is refused; in solve mode new tests
// may record theirs.
func TestCheckEditsSnapshots(t *testing.T) {
	for _, p := range []string{"src/__snapshots__/render.test.js.snap", "tests/__snapshots__/test_api.ambr", "src/snapshots/crate__render.snap"} {
		before := map[string][]byte{p: []byte("exports[`render 1`] = `\"<b>ok</b>\"`;\n")}
		after := map[string][]byte{p: []byte("exports[`render 1`] = `\"<b>bug</b>\"`;\n")}
		if got := strings.Join(checkEdits(ModeFix, false, before, after), "; "); !strings.Contains(got, "test snapshot") {
			t.Errorf("checkEdits(fix, edit %s) = %q, want it refused as a test snapshot", p, got)
		}
		if got := strings.Join(checkEdits(ModeFix, false, map[string][]byte{}, after), "; "); !strings.Contains(got, "test snapshot") {
			t.Errorf("checkEdits(fix, new %s) = %q, want it refused as a test snapshot", p, got)
		}
		if got := checkEdits(ModeSolve, false, map[string][]byte{}, after); len(got) != 0 {
			t.Errorf("checkEdits(solve, new %s) = %q, want it allowed", p, got)
		}
	}
}
