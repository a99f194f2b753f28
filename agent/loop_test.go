package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/config"
)

const goBugDir = "../examples/go-bug"

// wrongMedian returns a reply that edits Median's return from one wrong
// expression to another.
func wrongMedian(from, to string) string {
	return "stats/stats.go\n<<<<<<< SEARCH\n\treturn " + from + ", nil\n=======\n\treturn " + to + ", nil\n>>>>>>> REPLACE\n"
}

func goBugModel(code ...string) *scripted {
	return &scripted{rules: []rule{
		{contains: markCode, replies: code},
	}}
}

func runGoBug(t *testing.T, m *scripted, mutate func(*Engine)) (*Result, string) {
	t.Helper()
	skipShort(t)
	root := copyTree(t, goBugDir)
	cfg := testConfig(t)
	e := New(cfg, &Options{Model: m, Backend: testBackend(t)})
	if mutate != nil {
		mutate(e)
	}
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res, root
}

func assertUntouched(t *testing.T, root string) {
	t.Helper()
	for _, p := range []string{"stats/stats.go", "stats/stats_test.go"} {
		want, _ := os.ReadFile(filepath.Join(goBugDir, p))
		got, _ := os.ReadFile(filepath.Join(root, p))
		if string(got) != string(want) {
			t.Errorf("%s was changed on disk", p)
		}
	}
}

func TestRunFixGoBug(t *testing.T) {
	m := goBugModel(demo.GoBugFix)
	res, root := runGoBug(t, m, nil)
	if !res.Verified || res.StopReason != StopVerified {
		t.Fatalf("Verified = %v, StopReason = %q; want verified", res.Verified, res.StopReason)
	}
	if res.Baseline.Failed == 0 || res.Final.Failed != 0 {
		t.Errorf("baseline failed %d, final failed %d; want >0 then 0", res.Baseline.Failed, res.Final.Failed)
	}
	if !strings.Contains(res.Diff, "+\t\treturn (s[mid-1] + s[mid]) / 2, nil") || !strings.Contains(res.Diff, "--- a/stats/stats.go") {
		t.Errorf("Diff lacks the fix:\n%s", res.Diff)
	}
	if len(res.Changes) != 1 || res.Changes[0].Path != "stats/stats.go" {
		t.Errorf("Changes = %+v, want stats/stats.go only", res.Changes)
	}
	if len(res.Iterations) != 1 || res.Iterations[0].Passed == 0 {
		t.Errorf("Iterations = %+v, want one passing iteration", res.Iterations)
	}
	assertUntouched(t, root) // the engine never writes; the CLI does
	id, entries, err := runlog.Read(filepath.Dir(res.LogPath), res.RunID)
	if err != nil || id != res.RunID {
		t.Fatalf("runlog.Read = %q, %v", id, err)
	}
	kinds := map[string]int{}
	for _, e := range entries {
		kinds[e.Kind]++
	}
	for _, k := range []string{runlog.KindStart, runlog.KindPrompt, runlog.KindReply, runlog.KindEdit, runlog.KindTest, runlog.KindIteration, runlog.KindResult} {
		if kinds[k] == 0 {
			t.Errorf("run log has no %q entry (kinds %v)", k, kinds)
		}
	}
	if s := runlog.Summarize(id, res.LogPath, entries); !s.Verified || s.Iterations != 1 || s.Mode != "fix" {
		t.Errorf("Summarize = %+v", s)
	}
}

func TestRunCircuitBreakerSameFailure(t *testing.T) {
	m := goBugModel(wrongMedian("s[mid]", "s[mid]+0"), wrongMedian("s[mid]+0", "s[mid]*1"), wrongMedian("s[mid]*1", "s[mid]-0"), demo.GoBugFix)
	res, root := runGoBug(t, m, nil)
	if res.Verified {
		t.Fatal("Verified = true, want false")
	}
	if !strings.HasPrefix(res.StopReason, "circuit breaker: the same failure repeated 3 times") {
		t.Errorf("StopReason = %q, want the same-failure circuit breaker", res.StopReason)
	}
	if len(res.Iterations) != 3 {
		t.Errorf("ran %d iterations, want 3", len(res.Iterations))
	}
	assertUntouched(t, root)
	// Older attempts are summarised one line each, not resent.
	last := m.calls[len(m.calls)-1]
	if !strings.Contains(last, "## Earlier attempts\n- iteration 1:") || strings.Count(last, "<<<<<<< SEARCH") > 1 {
		t.Errorf("last prompt does not summarise earlier attempts:\n%s", last)
	}
}

func TestRunCircuitBreakerRepeatedEdits(t *testing.T) {
	m := goBugModel(wrongMedian("s[mid]", "s[0]"), wrongMedian("s[0]", "s[mid]"), wrongMedian("s[mid]", "s[0]"))
	res, _ := runGoBug(t, m, nil)
	if res.Verified || !strings.Contains(res.StopReason, "repeats the edits of iteration") {
		t.Errorf("Verified = %v, StopReason = %q; want the repeated-edits breaker", res.Verified, res.StopReason)
	}
}

func TestRunRefusesDeletingTheFailingTest(t *testing.T) {
	del := "stats/stats_test.go\n<<<<<<< SEARCH\n\t\t{name: \"even\", in: []float64{4, 1, 3, 2}, want: 2.5},\n=======\n>>>>>>> REPLACE\n"
	m := goBugModel(del, demo.GoBugFix)
	res, _ := runGoBug(t, m, nil)
	if !res.Verified {
		t.Fatalf("Verified = false (%s), want recovered after the refusal", res.StopReason)
	}
	if res.Iterations[0].Malformed != 1 {
		t.Errorf("Malformed = %d, want 1", res.Iterations[0].Malformed)
	}
	if !strings.Contains(m.calls[1], "The reply was refused: stats/stats_test.go is a test file") {
		t.Errorf("refusal not fed back; second prompt:\n%s", m.calls[1])
	}
	for _, c := range res.Changes {
		if IsTestFile(c.Path) {
			t.Errorf("test file %s changed", c.Path)
		}
	}

	// With test edits allowed, weakening is still refused...
	weaken := "stats/stats_test.go\n<<<<<<< SEARCH\n\t\t\t\tt.Errorf(\"Median(%v) = %v, want %v\", tt.in, got, tt.want)\n=======\n\t\t\t\t_ = got\n>>>>>>> REPLACE\n"
	m = goBugModel(weaken)
	allow := func(e *Engine) { e.cfg.Agent.AllowTestEdits = true }
	res, root := runGoBug(t, m, allow)
	if res.Verified || !strings.Contains(res.StopReason, "too many replies") {
		t.Errorf("Verified = %v, StopReason = %q; want refused until the malformed budget ends", res.Verified, res.StopReason)
	}
	if !strings.Contains(m.calls[len(m.calls)-1], "removes 1 assertion(s)") {
		t.Errorf("weakening not explained:\n%s", m.calls[len(m.calls)-1])
	}
	assertUntouched(t, root)

	// ...and a failing test that vanishes never counts as fixed.
	m = goBugModel(del)
	res, _ = runGoBug(t, m, allow)
	if res.Verified {
		t.Fatal("Verified = true after deleting the failing case")
	}
	if !strings.Contains(m.calls[1], "TestMedian/even failed before the run and has vanished") {
		t.Errorf("vanished failing test not fed back:\n%s", m.calls[1])
	}
}

func TestRunMalformedThenRecovered(t *testing.T) {
	bad := "stats/stats.go\n<<<<<<< SEARCH\n\treturn s[middle], nil\n=======\n\treturn 0, nil\n>>>>>>> REPLACE\n"
	m := goBugModel(bad, demo.GoBugFix)
	res, _ := runGoBug(t, m, nil)
	if !res.Verified {
		t.Fatalf("Verified = false (%s)", res.StopReason)
	}
	if len(res.Iterations) != 1 || res.Iterations[0].Malformed != 1 {
		t.Errorf("Iterations = %+v, want one with Malformed 1", res.Iterations)
	}
	if len(m.calls) != 2 {
		t.Fatalf("model called %d times, want 2 (one per reply, no plan call)", len(m.calls))
	}
	if !strings.Contains(m.calls[1], "## Your last reply was not applied") || !strings.Contains(m.calls[1], "block 1") {
		t.Errorf("edit failure not fed back precisely:\n%s", m.calls[1])
	}
}

func TestRunSolveGo(t *testing.T) {
	skipShort(t)
	root := copyTree(t, goBugDir)
	fixed := strings.Replace(mustRead(t, filepath.Join(root, "stats/stats.go")), "\treturn s[mid], nil\n}", "\tif len(s)%2 == 0 {\n\t\treturn (s[mid-1] + s[mid]) / 2, nil\n\t}\n\treturn s[mid], nil\n}", 1)
	os.WriteFile(filepath.Join(root, "stats/stats.go"), []byte(fixed), 0o644)
	// The host backend here cannot always see testing/quick: the same
	// reply with quick runs in the Docker e2e ("go solve").
	reply := strings.Replace(strings.Replace(goSolveReply, "\t\"testing/quick\"\n", "", 1), "if err := quick.Check(f, nil); err != nil {\n\t\tt.Error(err)\n\t}", "for n := 1; n < 40; n++ {\n\t\txs := make([]float64, n)\n\t\tfor i := range xs {\n\t\t\txs[i] = float64((i * 7) % 5)\n\t\t}\n\t\tif !f(xs) {\n\t\t\tt.Fatalf(\"Mode(%v) is not an element\", xs)\n\t\t}\n\t}", 1)
	m := &scripted{rules: []rule{{contains: markCode, replies: []string{reply}}}}
	e := New(testConfig(t), &Options{Model: m, Backend: testBackend(t)})
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeSolve, Root: root, Goal: "Add Mode(xs) returning the most frequent value (ties: smallest)."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified {
		t.Fatalf("Verified = false: %s\n%s", res.StopReason, res.Final.Output)
	}
	if nt := newTests(res.Baseline, res.Final); len(nt) < 2 {
		t.Errorf("new tests = %v, want TestMode and TestModeIsAnElement", nt)
	}
	if !strings.Contains(m.calls[0], "testing/quick") && !strings.Contains(systemPrompt(ModeSolve, "go"), "testing/quick") {
		t.Error("solve prompt does not ask for property-based tests")
	}
}

func TestRunSolveWithoutNewTestsIsNotVerified(t *testing.T) {
	skipShort(t)
	root := copyTree(t, goBugDir)
	m := &scripted{rules: []rule{{contains: markCode, replies: []string{demo.GoBugFix}}}}
	cfg := testConfig(t)
	cfg.Agent.MaxIterations = 2
	e := New(cfg, &Options{Model: m, Backend: testBackend(t)})
	res, err := e.Run(t.Context(), Request{Mode: ModeSolve, Root: root, Goal: "Fix the median."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verified {
		t.Fatal("Verified = true without new tests in solve mode")
	}
	if len(m.calls) < 2 || !strings.Contains(m.calls[1], "needs new tests") {
		t.Errorf("%d model calls; missing-tests verdict not fed back to the second:\n%s", len(m.calls), m.calls[len(m.calls)-1])
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// skipShort skips the tests that run real test commands under -short.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs real test commands in a sandbox")
	}
}

// goSolveReply adds stats.Mode with tests, one of them property-based
// (testing/quick).
const goSolveReply = "stats/mode.go\n<<<<<<< SEARCH\n=======\npackage stats\n\n// Mode returns the most frequent value; ties go to the smallest.\nfunc Mode(xs []float64) (float64, error) {\n\tif len(xs) == 0 {\n\t\treturn 0, ErrEmpty\n\t}\n\tcount := map[float64]int{}\n\tbest := xs[0]\n\tfor _, x := range xs {\n\t\tcount[x]++\n\t\tif count[x] > count[best] || (count[x] == count[best] && x < best) {\n\t\t\tbest = x\n\t\t}\n\t}\n\treturn best, nil\n}\n>>>>>>> REPLACE\n\n" + "stats/mode_test.go\n<<<<<<< SEARCH\n=======\npackage stats\n\nimport (\n\t\"errors\"\n\t\"testing\"\n\t\"testing/quick\"\n)\n\nfunc TestMode(t *testing.T) {\n\tif got, _ := Mode([]float64{1, 2, 2, 3}); got != 2 {\n\t\tt.Errorf(\"Mode = %v, want 2\", got)\n\t}\n\tif got, _ := Mode([]float64{3, 1}); got != 1 {\n\t\tt.Errorf(\"tie: Mode = %v, want 1\", got)\n\t}\n\tif _, err := Mode(nil); !errors.Is(err, ErrEmpty) {\n\t\tt.Errorf(\"Mode(nil) error = %v\", err)\n\t}\n}\n\nfunc TestModeIsAnElement(t *testing.T) {\n\tf := func(xs []float64) bool {\n\t\tif len(xs) == 0 {\n\t\t\treturn true\n\t\t}\n\t\tm, _ := Mode(xs)\n\t\tfor _, x := range xs {\n\t\t\tif x == m {\n\t\t\t\treturn true\n\t\t\t}\n\t\t}\n\t\treturn false\n\t}\n\tif err := quick.Check(f, nil); err != nil {\n\t\tt.Error(err)\n\t}\n}\n>>>>>>> REPLACE\n"

// A misspelt policy rule stops the run before anything runs, naming the
// rule: the policy is never silently off.
func TestRunRefusesAnUnknownPolicyRule(t *testing.T) {
	root := copyTree(t, goBugDir)
	cfg := testConfig(t)
	cfg.Policy.Rules = map[string]string{"python.subproces": "block"}
	m := goBugModel(demo.GoBugFix)
	e := New(cfg, &Options{Model: m, Backend: testBackend(t)})
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
	if err == nil || !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "policy.rules.python.subproces: unknown rule") {
		t.Fatalf("Run = %+v, %v; want a configuration error naming the rule", res, err)
	}
	if n := len(m.calls); n != 0 {
		t.Errorf("the model was asked %d times before the configuration error", n)
	}
}

// With model.reflector set, REFLECT is its own call to that model: it sees
// what the failed attempt changed and the failure, and its analysis (not
// the coder's own) goes into the next code prompt.
func TestRunReflectorModel(t *testing.T) {
	skipShort(t)
	root := copyTree(t, goBugDir)
	cfg := testConfig(t)
	cfg.Model.Reflector = "reflector-model"
	// The fix, written against the file as the wrong attempt left it.
	fixAfterWrong := strings.Replace(demo.GoBugFix, "\treturn s[mid], nil\n=======", "\treturn s[0], nil\n=======", 1)
	analysis := "Reflection: s[0] is the smallest value, not the median.\nLesson: the median of an even-length sample is the mean of the two middle values."
	m := &roleScripted{scripted: scripted{rules: []rule{
		{contains: markReflect, replies: []string{analysis}},
		{contains: markCode, replies: []string{wrongMedian("s[mid]", "s[0]"), fixAfterWrong}},
	}}}
	e := New(cfg, &Options{Model: m, Backend: testBackend(t)})
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || len(res.Iterations) != 2 {
		t.Fatalf("Verified = %v after %d iterations (%s); want verified at the second", res.Verified, len(res.Iterations), res.StopReason)
	}
	var reflects, codes []string
	for i, p := range m.calls {
		switch {
		case strings.Contains(p, markReflect):
			reflects = append(reflects, m.models[i])
			if !strings.Contains(p, "-\treturn s[mid], nil") || !strings.Contains(p, "+\treturn s[0], nil") {
				t.Errorf("the reflect prompt does not show what the attempt changed:\n%s", p)
			}
		case strings.Contains(p, markCode):
			codes = append(codes, m.models[i])
		}
	}
	if len(reflects) != 1 || reflects[0] != "reflector-model" {
		t.Errorf("reflect calls went to %q, want one to reflector-model", reflects)
	}
	if len(codes) != 2 || codes[0] == "reflector-model" {
		t.Errorf("code calls went to %q, want two to the coder", codes)
	}
	last := m.calls[len(m.calls)-1]
	if !strings.Contains(last, "## Reflection on the last attempt\n"+analysis) || strings.Contains(last, `Start with two or three lines headed "Reflection:"`) {
		t.Errorf("the second code prompt should carry the reflector's analysis and not ask the coder to reflect:\n%s", last)
	}
}

// roleScripted records which model each call asked for.
type roleScripted struct {
	scripted
	models []string
}

func (m *roleScripted) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	m.mu.Lock()
	m.models = append(m.models, req.Model)
	m.mu.Unlock()
	return m.scripted.Chat(ctx, req, onDelta)
}

// TestRunDetectsOnce: one run — baseline, the model's edit, the
// verifying run in a fresh session — detects the workspace's language
// once and derives its session spec and setup plan once
// (Engine.newProject: backends.SpecFor and setup.NewPlan); every session
// start, the setup key, the warm key and the test command get them
// passed down.
func TestRunDetectsOnce(t *testing.T) {
	var e *Engine
	res, _ := runGoBug(t, goBugModel(demo.GoBugFix), func(x *Engine) { e = x })
	if !res.Verified || len(res.Iterations) != 1 {
		t.Fatalf("Verified = %v after %d iterations; want a verified run with one edit", res.Verified, len(res.Iterations))
	}
	if d, p := e.detected.Load(), e.derived.Load(); d != 1 || p != 1 {
		t.Errorf("one run detected the language %d times and derived its spec and plan %d times; want 1 and 1", d, p)
	}
}
