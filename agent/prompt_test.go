package agent

import (
	"flag"
	"fmt"
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

	in := &promptInput{Mode: ModeFix, Iteration: 1, MaxIterations: 6, Failure: renderFailure(goBugFailure, 4000)}
	fitContext(in, snap, ranked, include, 24000*charsPerToken, 2000, hintsFor(snap, goBugFailure, ""))
	first := codePrompt(in)
	golden(t, "code_fix_go_iter1", first)
	if strings.Contains(first, "sk-proj") || strings.Contains(first, "build/out.go") {
		t.Error("first code prompt shows a secret or an ignored file")
	}
	// Independent of the golden: the first code prompt asks for the plan
	// (there is no plan call), shows the file to edit whole, and stays small.
	for _, want := range []string{`Start with a short plan headed "Plan:"`, "## File: stats/stats.go\n", "func Median(xs []float64)"} {
		if !strings.Contains(first, want) {
			t.Errorf("first code prompt lacks %q", want)
		}
	}
	if len(first) > 6000 {
		t.Errorf("first code prompt is %d bytes for a two-file package, want <= 6000", len(first))
	}

	in = &promptInput{
		Mode: ModeFix, Plan: demo.GoBugPlan, Iteration: 3, MaxIterations: 6, Progress: "stable",
		Failure:  renderFailure(goBugFailure, 4000),
		History:  []string{"iteration 1: 4 passed, 2 failed (stable); changed stats/stats.go; failure: …", "iteration 2: 4 passed, 2 failed (stable); changed stats/stats.go; failure: …"},
		Memories: []string{"(similarity 0.82) Median([N N N N]) = N, want N in stats.TestMedian/even — lesson: average the two middle values"},
		Feedback: "None of your reply's edits was applied, because block 1 does not match.",
	}
	fitContext(in, snap, ranked, include, 24000*charsPerToken, 3000, hintsFor(snap, goBugFailure, ""))
	iter3 := codePrompt(in)
	golden(t, "code_fix_go_iter3", iter3)
	if strings.Contains(iter3, "Plan:\" (at most") || !strings.Contains(iter3, "## Plan\n1. TestMedian/even fails") {
		t.Error("iteration 3 asks for a plan again or does not show the first reply's plan")
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
	ranked := contextFiles(snap, &Request{Mode: ModeFix, Focus: []string{"stats/big.go"}}, goBugFailure, include)
	budget := 2000 * charsPerToken
	in := &promptInput{Mode: ModeFix, Iteration: 1, MaxIterations: 6, Failure: renderFailure(goBugFailure, budget/4)}
	fixed := len(systemPrompt(ModeFix, "go")) + len(codePrompt(in))
	fitContext(in, snap, ranked, include, budget, fixed, hintsFor(snap, goBugFailure, ""))
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
	if demo.MarkCode != markCode || demo.MarkReflect != markReflect {
		t.Errorf("demo markers %q/%q differ from the agent's %q/%q", demo.MarkCode, demo.MarkReflect, markCode, markReflect)
	}
}

// TestContextForALargePackage: in a package too large to show whole, the
// context is the failing test (as an excerpt around the failing line, since
// it is large) and the file defining the symbol the failure names; the other
// files are left to the repository map.
func TestContextForALargePackage(t *testing.T) {
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"go.mod": {Data: []byte("module example.com/big\n")},
	}}
	filler := strings.Repeat("// filler to make the package large\n", 40)
	for _, n := range []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"} {
		snap.Files["pkg/"+n+".go"] = sandbox.File{Data: []byte("package pkg\n\nfunc " + strings.ToUpper(n[:1]) + n[1:] + "() int { return 1 }\n" + filler)}
	}
	snap.Files["pkg/window.go"] = sandbox.File{Data: []byte("package pkg\n\n// Window returns the last n items.\nfunc Window(xs []int, n int) []int {\n\treturn xs[:n]\n}\n")}
	var test strings.Builder
	test.WriteString("package pkg\n\nimport \"testing\"\n\n")
	for i := range 400 {
		fmt.Fprintf(&test, "func TestFiller%d(t *testing.T) {}\n", i)
	}
	line := strings.Count(test.String(), "\n") + 3
	test.WriteString("func TestWindow(t *testing.T) {\n\tgot := Window([]int{1, 2, 3}, 2)\n\tif got[0] != 2 {\n\t\tt.Errorf(\"Window = %v, want [2 3]\", got)\n\t}\n}\n")
	snap.Files["pkg/window_test.go"] = sandbox.File{Data: []byte(test.String())}
	rep := &testrun.Report{Runner: "go", ExitCode: 1, Failed: 1, Tests: []testrun.Result{{
		ID: "example.com/big/pkg.TestWindow", Status: testrun.StatusFail, File: "pkg/window_test.go", Line: line,
		Message: "Window = [1 2], want [2 3]",
	}}}
	include := func(p string) bool { return !isSecretPath(p) }
	ranked := contextFiles(snap, &Request{Mode: ModeFix}, rep, include)
	if got := strings.Join(ranked, ","); got != "pkg/window_test.go,pkg/window.go" {
		t.Fatalf("contextFiles = %s, want the failing test and the file defining Window only", got)
	}
	in := &promptInput{Mode: ModeFix, Iteration: 1, MaxIterations: 6, Failure: renderFailure(rep, 4000)}
	fitContext(in, snap, ranked, include, 24000*charsPerToken, 2000, hintsFor(snap, rep, ""))
	p := codePrompt(in)
	for _, want := range []string{
		"## File: pkg/window.go\n",             // whole: the edit lands here
		"## File: pkg/window_test.go (excerpt", // large test file: an excerpt
		"\tgot := Window([]int{1, 2, 3}, 2)\n", // … around the failing line
		"pkg/alpha.go: func Alpha() int",       // the rest: in the map
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(p, "func TestFiller10(") || strings.Contains(p, "filler to make") {
		t.Error("prompt shows code the failure does not reach")
	}
	if len(p) > 8000 {
		t.Errorf("prompt is %d bytes, want <= 8000", len(p))
	}
}

func TestFailureNamesAndSymbols(t *testing.T) {
	rep := &testrun.Report{Tests: []testrun.Result{
		{ID: "tests.test_lfu.LFUCacheTest.test_popitem_order", Status: testrun.StatusFail, Message: "AssertionError: 1 != 2"},
		{ID: "example.com/m/cmp.TestDiff/EmbeddedStruct", Status: testrun.StatusFail},
	}}
	names := failureNames(rep, "")
	for _, want := range []string{"LFUCache", "popitem", "order", "Diff", "EmbeddedStruct", "TestDiff", "test_popitem_order"} {
		if !names[want] {
			t.Errorf("failureNames lacks %q: %v", want, names)
		}
	}
	if names["test"] || names["Test"] || names["com"] || names["AssertionError"] {
		t.Errorf("failureNames keeps a common word: %v", names)
	}
	for sym, want := range map[string]string{
		"func (pa Path) Index(i int) PathStep":       "Index",
		"func Median(xs []float64) (float64, error)": "Median",
		"def LFUCache.popitem":                       "popitem",
		"struct Path":                                "Path",
		"const name":                                 "name",
	} {
		if got := symbolName(sym); got != want {
			t.Errorf("symbolName(%q) = %q, want %q", sym, got, want)
		}
	}
}

// TestPlanOf: the plan is the reply's text before the first block, without
// that block's path line.
func TestPlanOf(t *testing.T) {
	for _, tt := range []struct{ name, reply, want string }{
		{"plan then block", "Plan:\n1. Fix Median.\n\nstats/stats.go\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", "Plan:\n1. Fix Median."},
		{"block only", "stats/stats.go\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", ""},
		{"no block", "Plan:\n1. Think.", "Plan:\n1. Think."},
		{"demo reply", demo.GoBugFix, "Plan:\n" + demo.GoBugPlan + "\n\nReflection: for an even number of values Median returned s[mid], the upper of the two middle values.\nLesson: the median of an even-length sample is the mean of the two middle values."},
	} {
		if got := planOf(tt.reply); got != tt.want {
			t.Errorf("%s: planOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}
