package swe

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// A small real-shaped instance: a Go module whose Max is wrong, a test
// patch that adds the test catching it, the fix as the gold patch.
func writeInstance(t *testing.T) string {
	t.Helper()
	tree := t.TempDir()
	files := map[string]string{
		"go.mod":            "module example.com/calc\n\ngo 1.22\n",
		"calc/calc.go":      calcBefore,
		"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"Add\")\n\t}\n}\n",
	}
	for p, c := range files {
		full := filepath.Join(tree, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if out, err := exec.Command("tar", "-czf", filepath.Join(dir, "calc.tar.gz"), "-C", tree, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v: %s", err, out)
	}
	testPatch := "--- a/calc/calc_test.go\n+++ b/calc/calc_test.go\n@@ -7,3 +7,9 @@ func TestAdd(t *testing.T) {\n \t\tt.Fatal(\"Add\")\n \t}\n }\n+\n+func TestMaxOverflow(t *testing.T) {\n+\tif Max(2, 1) != 2 {\n+\t\tt.Fatal(\"Max(2, 1) != 2\")\n+\t}\n+}\n"
	gold, _, _ := strings.Cut(goldDiff, "diff --git a/calc/new.go")
	in := Instance{ID: "example__calc-0001", Repo: "example/calc", Language: "go", BaseCommit: strings.Repeat("a", 40),
		Archive: "calc.tar.gz", TestPatch: testPatch, GoldPatch: gold, FailToPass: []string{"TestMaxOverflow"},
		PassToPass: []string{"TestAdd"}, NativeSeconds: 0.5, Split: "heldout"}
	line, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "instances.jsonl")
	if err := os.WriteFile(p, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadRejectsBadInstances(t *testing.T) {
	dir := t.TempDir()
	for name, line := range map[string]string{
		"unknown field": `{"id":"x","archive":"a","gold_patch":"--- a/x\n+++ b/x\n","fail_to_pass":["T"],"bogus":1}`,
		"no tests":      `{"id":"x","archive":"a","gold_patch":"--- a/x\n+++ b/x\n"}`,
		"bad split":     `{"id":"x","archive":"a","gold_patch":"--- a/x\n+++ b/x\n","fail_to_pass":["T"],"split":"train"}`,
	} {
		p := filepath.Join(dir, "i.jsonl")
		os.WriteFile(p, []byte(line+"\n"), 0o644)
		if _, err := Load(p); err == nil {
			t.Errorf("%s: Load accepted %s", name, line)
		}
	}
}

// The oracle run on each sandbox backend: the failure is reproduced, the
// gold patch is verified, the code it edits is in the first prompt, and
// the report says so for the split.
func TestOracleRun(t *testing.T) {
	for _, backend := range []string{config.BackendBwrap, config.BackendDocker} {
		t.Run(backend, func(t *testing.T) {
			if backend == config.BackendDocker {
				cli := sandboxtest.RequireDocker(t)
				sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-go")
			} else {
				sandboxtest.RequireCommand(t, "bwrap")
			}
			instances, err := Load(writeInstance(t))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(config.LoadOptions{Getenv: func(string) string { return "" }, UserFile: "-"})
			if err != nil {
				t.Fatal(err)
			}
			cfg.DataDir = t.TempDir()
			cfg.Sandbox.Backend = backend
			cfg.Sandbox.Timeout = config.Duration(10 * time.Minute)
			// The failing test runs alone first however fast the tiny
			// suite is (agent.narrow_min): the runs counted below must
			// not depend on the machine's speed.
			cfg.Agent.NarrowMin = 0
			be, err := backends.Open(t.Context(), cfg, &backends.Options{Warn: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { be.(io.Closer).Close() })
			res, err := Run(t.Context(), cfg, be, instances, &Options{Oracle: true, Reference: true})
			if err != nil {
				t.Fatal(err)
			}
			r := res[0]
			if r.Error != "" || !r.Reproduced || !r.Verified || !r.TargetInPrompt || r.Requests != 1 || r.PromptBytes == 0 || r.Native != 1 {
				t.Fatalf("result %+v: want reproduced, verified in one request, target in prompt", r)
			}
			// The baseline and the fresh verification run the whole suite;
			// the iteration runs the failing test alone.
			if r.FullRuns != 2 || r.TargetedRuns != 1 {
				t.Errorf("full runs %d, targeted runs %d; want 2 and 1", r.FullRuns, r.TargetedRuns)
			}
			// The timeline says where the wall time went, in order.
			var verifying bool
			for i, st := range r.Timeline {
				if i > 0 && st.At < r.Timeline[i-1].At {
					t.Errorf("timeline goes back in time at %d: %+v", i, r.Timeline)
				}
				verifying = verifying || strings.Contains(st.Message, "verifying in a fresh sandbox")
			}
			if !verifying {
				t.Errorf("timeline lacks the verifying run: %+v", r.Timeline)
			}
			// The reference: the suite timed once more in the same
			// backend, after the fix.
			if r.Sandboxed <= 0 {
				t.Errorf("no sandboxed reference time: %+v", r)
			}
			// ... of the tree the fix leaves: its run passes (before, the
			// reference timed the unfixed tree twice).
			if r.SandboxedFailed != 0 {
				t.Errorf("the reference's run of the fixed tree failed %d tests: it did not time the fix", r.SandboxedFailed)
			}
			md := Markdown(backend, true, res)
			if !strings.Contains(md, "| heldout | 1 | 1 | 1 | 1 | 1 |") {
				t.Errorf("Markdown lacks the held-out summary row:\n%s", md)
			}
		})
	}
}

// The prompt-only run stops at the first prompt: the failure is still
// reproduced and the first prompt judged (the code Max's fix edits is in
// it), but no model is asked, so nothing is verified, and the report says
// which mode produced it.
func TestPromptOnlyRun(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	instances, err := Load(writeInstance(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Getenv: func(string) string { return "" }, UserFile: "-"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.Sandbox.Backend = config.BackendBwrap
	cfg.Sandbox.Timeout = config.Duration(10 * time.Minute)
	be, err := backends.Open(t.Context(), cfg, &backends.Options{Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.(io.Closer).Close() })
	var progress strings.Builder
	prompts := t.TempDir()
	res, err := Run(t.Context(), cfg, be, instances, &Options{PromptOnly: true, Progress: &progress, PromptDir: prompts})
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if r.Error != "" || !r.Reproduced || r.Verified || !r.TargetInPrompt || r.Requests != 1 || r.PromptBytes == 0 || r.StopReason != stopPromptOnly {
		t.Fatalf("result %+v: want reproduced, one request recorded, target in prompt, not verified, stopped at the prompt", r)
	}
	kept, err := os.ReadFile(filepath.Join(prompts, "example__calc-0001.prompt.txt"))
	if err != nil || len(kept) != r.PromptBytes || !strings.Contains(string(kept), "## File: calc/calc.go") {
		t.Errorf("kept prompt (%v): %d bytes, want the %d-byte first prompt showing calc/calc.go", err, len(kept), r.PromptBytes)
	}
	if !strings.Contains(progress.String(), "example__calc-0001: prompt only") {
		t.Errorf("progress does not say the mode: %q", progress.String())
	}
	if md := Markdown(config.BackendBwrap, false, res); !strings.Contains(md, "prompt only") || !strings.Contains(md, "| heldout | 1 | 1 | 1 | 0 | 1 |") {
		t.Errorf("Markdown does not report a prompt-only run:\n%s", md)
	}
}

// The target judgment: a hunk counts as shown only when the lines it
// removes appear in a "## File:" section of its own file, not merely the
// file's name or the same lines under another file.
func TestMissingTargetsOwnFile(t *testing.T) {
	gold, err := ParsePatch("--- a/calc/calc.go\n+++ b/calc/calc.go\n@@ -3,3 +3,3 @@\n func Max(a, b int) int {\n-\treturn b\n+\treturn max(a, b)\n }\n")
	if err != nil {
		t.Fatal(err)
	}
	shown := "## File: calc/calc.go\n```\nfunc Max(a, b int) int {\n\treturn b\n}\n```\n"
	for _, c := range []struct {
		name, prompt string
		missing      bool
	}{
		{"shown", shown, false},
		{"excerpt title", strings.Replace(shown, "calc/calc.go", "calc/calc.go (excerpt; the file has 9 lines)", 1), false},
		{"bare name in the map", "## Repository map\ncalc/calc.go: func Max(a, b int) int\n", true},
		{"lines under another file", strings.Replace(shown, "calc/calc.go", "calc/other.go", 1), true},
		// The removed line elsewhere in the file, not at the place to edit.
		{"line out of place", "## File: calc/calc.go\n```\nfunc Min(a, b int) int {\n\treturn b\n}\n```\n", true},
	} {
		if got := missingTargets(c.prompt, gold); (len(got) > 0) != c.missing {
			t.Errorf("%s: missing = %v, want missing %v", c.name, got, c.missing)
		}
	}
}
