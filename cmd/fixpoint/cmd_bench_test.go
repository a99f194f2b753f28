package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/internal/bench/humaneval"
	"github.com/fixpoint-dev/fixpoint/internal/bench/humaneval/hetest"
	"github.com/fixpoint-dev/fixpoint/internal/bench/swe"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

func heData(t *testing.T) string { return hetest.Data(t, 2) }

func TestBenchHumanEvalUsageErrors(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no data", []string{"bench", "humaneval", "--oracle"}, "--data is required"},
		{"baseline with a model", []string{"bench", "humaneval", "--data", "x.jsonl", "--baseline"}, "--baseline needs --oracle"},
		{"oracle and model", []string{"bench", "humaneval", "--data", "x.jsonl", "--oracle", "--model", "m"}, "exclude each other"},
		{"write without baseline", []string{"bench", "humaneval", "--data", "x.jsonl", "--oracle", "--write", "b.md"}, "--write needs --oracle --baseline"},
		{"zero attempts", []string{"bench", "humaneval", "--data", "x.jsonl", "--oracle", "--attempts", "0"}, "--attempts"},
		{"no model", []string{"bench", "humaneval", "--data", "x.jsonl"}, "no model configured"},
		{"missing data file", []string{"bench", "humaneval", "--data", "/nonexistent/he.jsonl", "--oracle"}, "--data /nonexistent/he.jsonl"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, nil, append(tc.args, "--dir", t.TempDir())...)
			if code != exitUsage {
				t.Errorf("fixpoint %q exit = %d, want %d; stderr: %s", tc.args, code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("fixpoint %q stderr = %q, want it to mention %q", tc.args, stderr, tc.wantErr)
			}
		})
	}
}

// The CLI end to end: the oracle through the agent loop on the docker
// sandbox, with the baselines, writes every output the issue lists.
func TestBenchHumanEvalOracleCLI(t *testing.T) {
	data := heData(t)
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-python")
	out := t.TempDir()
	md := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := os.WriteFile(md, []byte("# Benchmarks\n\nkept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, map[string]string{"FIXPOINT_SANDBOX": "docker"},
		"bench", "humaneval", "--data", data, "--oracle", "--baseline", "--limit", "6", "--timeout", "15s", "--out", out, "--dir", t.TempDir(), "--write", md)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "6/6 passed after repair, pass@1 100.0%") {
		t.Errorf("stdout lacks the oracle's score:\n%s", stdout)
	}
	for _, name := range []string{"results.jsonl", "summary.json", "summary.md", "pass_rate.svg"} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", name, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s humaneval.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Problems != 6 || s.Passed != 6 || s.PassAt1 != 1 || s.Model != "oracle (canonical solutions)" || s.Date == "" || s.Version == "" {
		t.Errorf("summary.json = %s", b)
	}
	if len(s.Baselines) != 3 {
		t.Errorf("baselines = %v, want warm sessions, container per check and host", s.Baselines)
	}
	if s.UserLoop == nil || s.UserLoop.Passed != 6 || s.UserLoop.Seconds <= 0 {
		t.Errorf("user_loop = %+v, want the loop without the shortcuts, 6 passed", s.UserLoop)
	}
	if _, _, ok := s.Ratios(); !ok || s.LoopSeconds <= 0 || s.WallSeconds < s.LoopSeconds {
		t.Errorf("summary.json = %s: want the loop's time and both ratios", b)
	}
	if !strings.Contains(stdout, "the bare checks; a container per check takes") {
		t.Errorf("stdout lacks the ratios:\n%s", stdout)
	}
	table := readFile(t, md)
	for _, want := range []string{"kept\n", "<!-- bench:humaneval begin -->", "| fixpoint: agent loop on warm sandbox sessions (docker) | 6/6 |", "Targets (issue 14): the loop at most 2x the bare checks", "<!-- bench:humaneval end -->"} {
		if !strings.Contains(table, want) {
			t.Errorf("--write %s lacks %q:\n%s", md, want, table)
		}
	}
	for name, bl := range s.Baselines {
		if bl.Passed != 6 || bl.Seconds <= 0 {
			t.Errorf("baseline %s = %+v, want 6 passed in a measured time", name, bl)
		}
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(out, "results.jsonl"))), "\n")
	if len(lines) != 6 {
		t.Fatalf("results.jsonl has %d lines, want 6", len(lines))
	}
	var r humaneval.ProblemResult
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil {
		t.Fatal(err)
	}
	if r.TaskID != "HumanEval/0" || !r.Passed || r.RunLog == "" || !strings.Contains(r.Completion, "return") {
		t.Errorf("results.jsonl line 1 = %s", lines[0])
	}
	if _, err := os.Stat(r.RunLog); err != nil || !strings.HasPrefix(r.RunLog, out) {
		t.Errorf("run log %s: %v (want it under --out)", r.RunLog, err)
	}
	if entries, _ := os.ReadDir(filepath.Join(out, "work")); len(entries) != 0 {
		t.Errorf("problem workspaces left behind: %d", len(entries))
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// --model goes through the configured OpenAI-compatible endpoint: here the
// scripted server, answering each problem with its canonical edit on the
// second attempt.
func TestBenchHumanEvalModelCLI(t *testing.T) {
	data := heData(t)
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-python")
	problems, err := humaneval.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	problems = problems[:3]
	script := &llmtest.Script{Rules: []llmtest.Rule{{Contains: demo.MarkPlan, Reply: &llmtest.Reply{Content: "1. Complete it."}}}}
	for _, p := range problems {
		script.Rules = append(script.Rules, llmtest.Rule{Contains: "(" + p.TaskID + ")", Replies: []llmtest.Reply{
			{Content: humaneval.EditReply(p, p.Prompt, p.Prompt+"    return None\n")},
			{Content: humaneval.EditReply(p, "    return None\n", p.CanonicalSolution)},
		}})
	}
	srv := llmtest.NewServer(script)
	t.Cleanup(srv.Close)
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, map[string]string{"FIXPOINT_SANDBOX": "docker", "FIXPOINT_BASE_URL": srv.URL()},
		"bench", "humaneval", "--data", data, "--model", "scripted-coder", "--limit", "3", "--timeout", "15s", "--out", out, "--dir", t.TempDir())
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var s humaneval.Summary
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, "summary.json"))), &s); err != nil {
		t.Fatal(err)
	}
	if s.Model != "scripted-coder" || s.Passed != 3 || s.PassAt1 != 0 || s.AttemptsMean != 2 || s.TokensIn == 0 || s.TokensOut == 0 {
		t.Errorf("summary = %+v; want scripted-coder, 3 passed, pass@1 0, 2 attempts each, tokens counted", s)
	}
	for _, r := range srv.Requests() {
		if r.Model != "scripted-coder" {
			t.Errorf("a request used model %q, want the --model flag's", r.Model)
		}
	}
}

// bench swe --prompt-only asks no model, so it excludes the flags that
// choose one, and needs no model configured.
func TestBenchSWEPromptOnlyUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "swe", "--instances", "x.jsonl", "--prompt-only", "--oracle"},
		{"bench", "swe", "--instances", "x.jsonl", "--prompt-only", "--model", "m"},
	} {
		code, _, stderr := runCLI(t, nil, args...)
		if code != exitUsage || !strings.Contains(stderr, "--prompt-only asks no model") {
			t.Errorf("fixpoint %q: exit %d, stderr %q; want a usage error naming --prompt-only", args, code, stderr)
		}
	}
	// Alone it gets past the model check to the instances file.
	code, _, stderr := runCLI(t, nil, "bench", "swe", "--instances", "/nonexistent/i.jsonl", "--prompt-only")
	if code != exitUsage || !strings.Contains(stderr, "--instances") || strings.Contains(stderr, "no model") {
		t.Errorf("prompt-only without a model: exit %d, stderr %q; want the missing instances file named", code, stderr)
	}
}

// --round keeps the instances a corpus round added (their "round" field),
// together with --split, and 0 keeps all; a negative round is a usage error.
func TestBenchSWERoundFilter(t *testing.T) {
	in := []swe.Instance{
		{ID: "a", Split: "tuning"},
		{ID: "b", Split: "heldout", Round: 5},
		{ID: "c", Split: "tuning", Round: 5},
		{ID: "d", Split: "heldout", Round: 4},
	}
	ids := func(out []swe.Instance) string {
		var s []string
		for _, i := range out {
			s = append(s, i.ID)
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		split string
		round int
		want  string
	}{
		{"", 0, "a,b,c,d"},
		{"", 5, "b,c"},
		{"heldout", 5, "b"},
		{"tuning", 4, ""},
	} {
		if got := ids(filterInstances(in, c.split, c.round, "", 0)); got != c.want {
			t.Errorf("split %q round %d: got %q, want %q", c.split, c.round, got, c.want)
		}
	}
	code, _, stderr := runCLI(t, nil, "bench", "swe", "--instances", "x.jsonl", "--oracle", "--round", "-1")
	if code != exitUsage || !strings.Contains(stderr, "--round -1") {
		t.Errorf("--round -1: exit %d, stderr %q; want a usage error naming --round", code, stderr)
	}
}
