package humaneval

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/internal/bench/humaneval/hetest"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/host"
)

// Synthetic problems written for these tests (trusted code: the host
// checker runs them). The real dataset runs only in the sandbox.
var synthetic = []Problem{
	{TaskID: "T/0", EntryPoint: "add", Prompt: "def add(a, b):\n    \"\"\"Return a + b.\"\"\"\n",
		CanonicalSolution: "    return a + b\n", Test: "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n"},
	{TaskID: "T/1", EntryPoint: "rev", Prompt: "def rev(s: str) -> str:\n    \"\"\"Reverse s.\"\"\"\n",
		CanonicalSolution: "    return s[::-1]\n", Test: "def check(candidate):\n    assert candidate('ab') == 'ba'\n"},
	{TaskID: "T/2", EntryPoint: "spin", Prompt: "def spin():\n    \"\"\"Return 1.\"\"\"\n",
		CanonicalSolution: "    return 1\n", Test: "def check(candidate):\n    assert candidate() == 1\n"},
}

func TestProgramIsTheOfficialAssembly(t *testing.T) {
	p := synthetic[0]
	got := Program(p, p.CanonicalSolution)
	want := p.Prompt + p.CanonicalSolution + "\n" + p.Test + "\n" + "check(add)"
	if got != want {
		t.Errorf("Program() = %q, want %q", got, want)
	}
}

// The workspace and CheckCmd feed python exactly the program the official
// evaluator assembles.
func TestCheckCmdIsTheOfficialAssembly(t *testing.T) {
	p := synthetic[0]
	a := &Agent{Dir: t.TempDir()}
	ws, err := a.workspace(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(ws, SolutionFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(p.CanonicalSolution)
	f.Close()
	cat, _, _ := strings.Cut(CheckCmd, " | ")
	cmd := exec.Command("sh", "-c", cat)
	cmd.Dir = ws
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := Program(p, p.CanonicalSolution) + "\n"; string(out) != want {
		t.Errorf("the check command assembles\n%q\nwant\n%q", out, want)
	}
	if !strings.HasSuffix(CheckCmd, " | python3 -") {
		t.Errorf("CheckCmd = %q: python should read the assembled program from stdin", CheckCmd)
	}
}

// scripted serves replies(p, attempt) for each problem's code prompts, and
// a fixed plan, over real HTTP (agent/llmtest) through the real client.
func scripted(t *testing.T, problems []Problem, attempts int, reply func(p Problem, attempt int) string) *llm.Client {
	t.Helper()
	script := &llmtest.Script{Rules: []llmtest.Rule{{Contains: demo.MarkPlan, Reply: &llmtest.Reply{Content: "1. Complete the function."}}}}
	for _, p := range problems {
		r := llmtest.Rule{Contains: "(" + p.TaskID + ")"}
		for a := 1; a <= attempts; a++ {
			r.Replies = append(r.Replies, llmtest.Reply{Content: reply(p, a)})
		}
		script.Rules = append(script.Rules, r)
	}
	srv := llmtest.NewServer(script)
	t.Cleanup(srv.Close)
	tools := false
	return llm.New(config.Model{BaseURL: srv.URL(), Name: "scripted", MaxRetries: 1, Tools: &tools}, nil)
}

// hostPool is a pool on the host backend: the synthetic problems are
// trusted code, so these tests run anywhere.
func hostPool(t *testing.T, size int) *Pool {
	t.Helper()
	b, err := host.New(&host.Options{Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := NewPool(t.Context(), b, sandbox.Spec{}, size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	return pool
}

const brokenLine = "    raise SystemExit(3)\n"

// Broken is an attempt that fails; Repair fixes a Broken one.
func broken(p Problem) string { return EditReply(p, p.Prompt, p.Prompt+brokenLine) }
func repair(p Problem) string { return EditReply(p, brokenLine, p.CanonicalSolution) }

func TestRunRepairAndMetrics(t *testing.T) {
	tests := []struct {
		name        string
		reply       func(p Problem, attempt int) string
		wantPassed  int
		wantPassAt1 float64
		wantAttMean float64
	}{
		// The second identical edit trips the loop's circuit breaker
		// ("the reply repeats the edits of iteration 1"): 2 attempts, not 3.
		{name: "always None", reply: func(p Problem, _ int) string { return EditReply(p, p.Prompt, p.Prompt+"    return None\n") }, wantPassed: 0, wantPassAt1: 0, wantAttMean: 2},
		{name: "broken then canonical", reply: func(p Problem, a int) string {
			if a == 1 {
				return broken(p)
			}
			return repair(p)
		}, wantPassed: 3, wantPassAt1: 0, wantAttMean: 2},
		{name: "canonical", reply: func(p Problem, _ int) string { return OracleReply(p) }, wantPassed: 3, wantPassAt1: 1, wantAttMean: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := scripted(t, synthetic, 3, tt.reply)
			solver := &Agent{Model: model, Backend: hostPool(t, 2), Dir: t.TempDir(), Timeout: 10 * time.Second}
			res, err := Run(t.Context(), synthetic, solver, Options{Attempts: 3, Parallel: 2})
			if err != nil {
				t.Fatal(err)
			}
			s := Summarize(res, 3)
			if s.Passed != tt.wantPassed || s.PassAt1 != tt.wantPassAt1 || s.AttemptsMean != tt.wantAttMean {
				for _, r := range res {
					t.Logf("%s: passed %v after %d (%s): %s", r.TaskID, r.Passed, r.Attempts, r.StopReason, r.LastFailure)
				}
				t.Errorf("Summary = passed %d pass@1 %v attempts %v, want %d %v %v", s.Passed, s.PassAt1, s.AttemptsMean, tt.wantPassed, tt.wantPassAt1, tt.wantAttMean)
			}
			if s.TokensIn == 0 || s.TokensOut == 0 {
				t.Errorf("tokens = %d/%d, want both counted", s.TokensIn, s.TokensOut)
			}
			for _, r := range res {
				if r.RunLog == "" {
					t.Errorf("%s: no run log", r.TaskID)
				} else if _, err := os.Stat(r.RunLog); err != nil {
					t.Errorf("%s: run log: %v", r.TaskID, err)
				}
				if r.Passed && !strings.Contains(r.Completion, "return") {
					t.Errorf("%s: completion %q", r.TaskID, r.Completion)
				}
			}
		})
	}
}

// The model never sees the test: not in a prompt, not through its tools.
func TestTestIsHiddenFromTheModel(t *testing.T) {
	p := synthetic[0]
	srv := llmtest.NewServer(&llmtest.Script{Rules: []llmtest.Rule{
		{Contains: "(" + p.TaskID + ")", Reply: &llmtest.Reply{Content: OracleReply(p)}},
	}})
	t.Cleanup(srv.Close)
	model := llm.New(config.Model{BaseURL: srv.URL(), Name: "scripted", MaxRetries: 1}, nil)
	solver := &Agent{Model: model, Backend: hostPool(t, 1), Dir: t.TempDir(), Timeout: 10 * time.Second}
	res, err := Run(t.Context(), synthetic[:1], solver, Options{Attempts: 1, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Passed {
		t.Fatalf("not passed: %+v", res[0])
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want one code request (its reply carries the plan)", len(reqs))
	}
	for i, r := range reqs {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "assert candidate(") || strings.Contains(m.Content, "check(add)") {
				t.Errorf("request %d (%s) shows the test to the model:\n%s", i, m.Role, m.Content)
			}
		}
	}
}

func TestTimeoutIsAFailure(t *testing.T) {
	p := synthetic[2]
	v, err := (&Host{}).Check(t.Context(), Program(p, "    while True: pass\n"), 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if v.Passed || !v.TimedOut {
		t.Errorf("Check(spin forever) = %+v, want timed out and not passed", v)
	}
}

func TestWriteOutputs(t *testing.T) {
	res := []ProblemResult{{TaskID: "a", Passed: true, PassedAt: 2, Attempts: 2}, {TaskID: "b", Attempts: 3}}
	s := Summarize(res, 3)
	s.Model = "m"
	dir := t.TempDir()
	if err := Write(dir, res, s); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"results.jsonl", "summary.json", "summary.md", "pass_rate.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(b) == 0 {
			t.Errorf("%s missing or empty: %v", name, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	for _, key := range []string{`"problems": 2`, `"passed": 1`, `"pass_at_1": 0`, `"attempts_mean": 2.5`, `"tokens_in"`, `"tokens_out"`, `"wall_seconds"`, `"sandbox_seconds"`, `"model": "m"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("summary.json lacks %s:\n%s", key, b)
		}
	}
	if got := s.PassByAttempt; got[0] != 0 || got[1] != 0.5 || got[2] != 0.5 {
		t.Errorf("PassByAttempt = %v, want [0 0.5 0.5]", got)
	}
}

func TestLoadOfficialData(t *testing.T) {
	path := dataPath(t)
	ps, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 164 {
		t.Errorf("Load(%s) = %d problems, want 164", path, len(ps))
	}
}

// dataPath finds ../shared/data/humaneval from the repository root.
func dataPath(t *testing.T) string { return hetest.Data(t, 3) }
