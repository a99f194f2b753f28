package humaneval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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

func TestCompletion(t *testing.T) {
	p := synthetic[0]
	tests := []struct {
		name, reply string
		wantPass    bool
	}{
		{name: "body", reply: "    return a + b\n", wantPass: true},
		{name: "unindented body", reply: "return a + b", wantPass: true},
		{name: "fenced function", reply: "Here:\n```python\ndef add(a, b):\n    return a + b\n```\n", wantPass: true},
		{name: "fenced wrong", reply: "```python\ndef add(a, b):\n    return None\n```", wantPass: false},
		{name: "fenced with helper first", reply: "```python\nimport math\n```\n```python\ndef add(a, b):\n    return a + b\n```", wantPass: true},
	}
	h := &Host{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := h.Check(t.Context(), Program(p, Completion(p, tt.reply)), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if v.Passed != tt.wantPass {
				t.Errorf("Completion(%q) passed = %v, want %v; output:\n%s", tt.reply, v.Passed, tt.wantPass, v.Output)
			}
		})
	}
}

// fakeModel answers by attempt number: replies[attempt-1], the last one repeated.
type fakeModel struct {
	mu      sync.Mutex
	replies func(p string, attempt int) string
	calls   int
}

func (f *fakeModel) Complete(ctx context.Context, msgs []Message) (Reply, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	attempt := (len(msgs)-2)/2 + 1
	return Reply{Text: f.replies(msgs[1].Content, attempt), In: 10, Out: 5}, nil
}

func TestRunRepairAndMetrics(t *testing.T) {
	canon := map[string]string{}
	for _, p := range synthetic {
		canon[p.Prompt] = p.CanonicalSolution
	}
	tests := []struct {
		name        string
		reply       func(prompt string, attempt int) string
		wantPassed  int
		wantPassAt1 float64
		wantAttMean float64
	}{
		{name: "always None", reply: func(string, int) string { return "    return None\n" }, wantPassed: 0, wantPassAt1: 0, wantAttMean: 3},
		{name: "broken then canonical", reply: func(p string, a int) string {
			if a == 1 {
				return "    return None\n"
			}
			return canon[p]
		}, wantPassed: 3, wantPassAt1: 0, wantAttMean: 2},
		{name: "canonical", reply: func(p string, a int) string { return canon[p] }, wantPassed: 3, wantPassAt1: 1, wantAttMean: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{replies: tt.reply}
			res, err := Run(t.Context(), synthetic, &Host{}, Options{Model: m, Attempts: 3, Parallel: 2})
			if err != nil {
				t.Fatal(err)
			}
			s := Summarize(res, 3)
			if s.Passed != tt.wantPassed || s.PassAt1 != tt.wantPassAt1 || s.AttemptsMean != tt.wantAttMean {
				t.Errorf("Summary = passed %d pass@1 %v attempts %v, want %d %v %v", s.Passed, s.PassAt1, s.AttemptsMean, tt.wantPassed, tt.wantPassAt1, tt.wantAttMean)
			}
			if s.TokensIn != 10*m.calls || s.TokensOut != 5*m.calls {
				t.Errorf("tokens = %d/%d, want %d/%d", s.TokensIn, s.TokensOut, 10*m.calls, 5*m.calls)
			}
		})
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
func dataPath(t *testing.T) string {
	t.Helper()
	p, _ := filepath.Abs("../../../shared/data/humaneval/HumanEval.jsonl.gz")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and the HumanEval data is missing at %s", p)
		}
		t.Skipf("skipping outside CI: HumanEval data not found at %s", p)
	}
	return p
}
