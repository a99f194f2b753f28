package agent

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "prompts", name+".golden")
	if *update {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (run go test -update to accept):\n%s", name, p, got)
	}
}

func goBugSnapshot(t *testing.T) *sandbox.Snapshot {
	snap, err := sandbox.SnapshotDir(goBugDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap.Files[".env"] = sandbox.File{Data: []byte("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789\n")}
	snap.Files["build/out.go"] = sandbox.File{Data: []byte("package build\n")}
	snap.Files[".gitignore"] = sandbox.File{Data: []byte("build/\n")}
	return snap
}

var goBugFailure = &testrun.Report{
	Runner: "go", Command: []string{"go", "test", "-json", "./..."}, ExitCode: 1, Passed: 4, Failed: 2,
	Tests: []testrun.Result{
		{ID: "example.com/gobug/stats.TestMedian", Status: testrun.StatusFail},
		{ID: "example.com/gobug/stats.TestMedian/even", Status: testrun.StatusFail, File: "stats/stats_test.go", Line: 35,
			Message: "Median([4 1 3 2]) = 3, want 2.5", Excerpt: "    stats_test.go:35: Median([4 1 3 2]) = 3, want 2.5\n"},
		{ID: "example.com/gobug/stats.TestMean", Status: testrun.StatusPass},
	},
}

// TestPrompts pins the prompts down: system prompts per mode, the plan
// prompt and a code prompt in iteration 3 with history, memory, feedback.
func TestPrompts(t *testing.T) {
	snap := goBugSnapshot(t)
	ig := newIgnorer(snap)
	include := func(p string) bool { return !isSecretPath(p) && !ig.Ignored(p) }
	req := &Request{Mode: ModeFix, Root: "/ws"}
	ranked := contextFiles(snap, req, goBugFailure, include)
	if strings.Join(ranked, ",") != "stats/stats_test.go,stats/stats.go" {
		t.Errorf("contextFiles = %v, want the failing test file, then the code under test", ranked)
	}

	sysFix, sysSolve := systemPrompt(ModeFix, "go"), systemPrompt(ModeSolve, "python")
	golden(t, "system_fix_go", sysFix)
	golden(t, "system_solve_python", sysSolve)
	// Independent of the golden files, which -update rewrites: what each
	// prompt must say whatever its wording.
	mustContain(t, "system prompt (fix)", sysFix, "Mode: fix", "never the tests", "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE")
	mustContain(t, "system prompt (solve)", sysSolve, "Mode: solve", "add new tests", "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE")

	in := &promptInput{Mode: ModeFix, Iteration: 0, MaxIterations: 6, Failure: renderFailure(goBugFailure, 4000)}
	fitContext(in, snap, ranked, include, 24000*charsPerToken, 2000)
	plan := planPrompt(in)
	golden(t, "plan_fix_go", plan)
	mustContain(t, "plan prompt", plan, "## Goal", "## Repository map", "## File: stats/stats_test.go", "## File: stats/stats.go",
		"func Median(xs []float64) (float64, error)", "Median([4 1 3 2]) = 3, want 2.5")
	if strings.Contains(plan, "sk-proj") || strings.Contains(plan, "build/out.go") {
		t.Error("plan prompt shows a secret or an ignored file")
	}

	in = &promptInput{
		Mode: ModeFix, Plan: demo.GoBugPlan, Iteration: 3, MaxIterations: 6, Progress: "stable",
		Failure:  renderFailure(goBugFailure, 4000),
		History:  []string{"iteration 1: 4 passed, 2 failed (stable); changed stats/stats.go; failure: …", "iteration 2: 4 passed, 2 failed (stable); changed stats/stats.go; failure: …"},
		Memories: []string{"(similarity 0.82) Median([N N N N]) = N, want N in stats.TestMedian/even — lesson: average the two middle values"},
		Feedback: "None of your reply's edits was applied, because block 1 does not match.",
	}
	fitContext(in, snap, ranked, include, 24000*charsPerToken, 3000)
	code := codePrompt(in)
	golden(t, "code_fix_go_iter3", code)
	mustContain(t, "code prompt", code, "## Plan", "## File: stats/stats.go", in.Memories[0], in.History[0], in.History[1], in.Feedback,
		"Iteration 3 of 6", "Median([4 1 3 2]) = 3, want 2.5")
	if strings.Contains(code, "sk-proj") || strings.Contains(code, "build/out.go") {
		t.Error("code prompt shows a secret or an ignored file")
	}
}

// mustContain fails for each want missing from a prompt.
func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

// TestPromptBudget: the prompt stays within the context budget, dropping
// files that do not fit and saying so; it does not grow with iterations.
func TestPromptBudget(t *testing.T) {
	snap := goBugSnapshot(t)
	big := strings.Repeat("// filler line to make this file large\n", 400)
	snap.Files["stats/big.go"] = sandbox.File{Data: []byte("package stats\n" + big)}
	include := func(p string) bool { return !isSecretPath(p) }
	ranked := contextFiles(snap, &Request{Mode: ModeFix}, goBugFailure, include)
	budget := 2000 * charsPerToken
	in := &promptInput{Mode: ModeFix, Iteration: 1, MaxIterations: 6, Failure: renderFailure(goBugFailure, budget/4)}
	fixed := len(systemPrompt(ModeFix, "go")) + len(codePrompt(in))
	fitContext(in, snap, ranked, include, budget, fixed)
	p := codePrompt(in)
	if len(p)+len(systemPrompt(ModeFix, "go")) > budget {
		t.Errorf("prompt is %d chars, budget %d", len(p), budget)
	}
	if !strings.Contains(p, "Not shown, to stay within the context budget: stats/big.go") {
		t.Errorf("big file not reported as omitted:\n%s", p)
	}
	if strings.Contains(p, "filler line") {
		t.Error("big file included despite the budget")
	}
}

func TestDemoMarkersMatch(t *testing.T) {
	if demo.MarkPlan != markPlan || demo.MarkCode != markCode || demo.MarkReflect != markReflect {
		t.Errorf("demo markers %q/%q/%q differ from the agent's %q/%q/%q", demo.MarkPlan, demo.MarkCode, demo.MarkReflect, markPlan, markCode, markReflect)
	}
}
