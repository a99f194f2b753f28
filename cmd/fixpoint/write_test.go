package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

const (
	calcPy     = "def add(a, b):\n    return a + b\n"
	calcTestPy = "import unittest\n\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)

// TestUnverifiedRunsWriteNothing: runs whose tests pass in the end but
// which are not verified (solve without a new test; fix whose failing test
// now skips) exit 1 and write nothing, through the real engine (bwrap).
func TestUnverifiedRunsWriteNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real engine in bwrap")
	}
	sandboxtest.RequireCommand(t, "bwrap")
	tests := []struct {
		name  string
		args  []string
		calc  string
		reply string
	}{
		{name: "solve without a new test", args: []string{"solve", "add a mul function"}, calc: calcPy,
			reply: "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n=======\ndef mul(a, b):\n    return a * b\n\n\ndef add(a, b):\n>>>>>>> REPLACE\n"},
		{name: "fix whose failing test now skips", args: []string{"fix"}, calc: strings.Replace(calcPy, "a + b", "a - b", 1),
			reply: "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    import unittest\n    raise unittest.SkipTest(\"later\")\n>>>>>>> REPLACE\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := llmtest.NewServer(&llmtest.Script{Rules: []llmtest.Rule{
				{Contains: "## Task: write a plan", Reply: &llmtest.Reply{Content: "1. Edit calc.py."}},
				{Contains: "## Task: write the edits", Reply: &llmtest.Reply{Content: tt.reply}},
			}})
			defer model.Close()
			root := t.TempDir()
			os.WriteFile(filepath.Join(root, "calc.py"), []byte(tt.calc), 0o644)
			os.WriteFile(filepath.Join(root, "test_calc.py"), []byte(calcTestPy), 0o644)
			before := sandboxtest.ReadTree(t, root)
			c := newLoopCLI(t)
			c.env["FIXPOINT_SANDBOX"] = "bwrap"
			c.env["FIXPOINT_BASE_URL"] = model.URL()
			c.env["FIXPOINT_MODEL"] = "llmtest"
			args := append([]string{tt.args[0], "--dir", root, "--max-iterations", "1"}, tt.args[1:]...)
			code, out, stderr := c.run(t.Context(), args...)
			if code != exitNotReached || !strings.Contains(out, "NOT VERIFIED") || strings.Contains(out, "Wrote") {
				t.Fatalf("fixpoint %v = %d, want 1 and NOT VERIFIED\nstdout:\n%s\nstderr:\n%s", args, code, out, stderr)
			}
			if !strings.Contains(out, "0 failed") {
				t.Errorf("the last run should pass (that is the point of the case):\n%s", out)
			}
			after := sandboxtest.ReadTree(t, root)
			for p, b := range before {
				if after[p] != b {
					t.Errorf("%s was written", p)
				}
			}
			if len(after) != len(before) {
				t.Errorf("files appeared: %d → %d", len(before), len(after))
			}
		})
	}
}

// TestCommitRefusesSymlinkedPaths: --commit checks the paths once more and
// commits nothing that now goes through a symlink.
func TestCommitRefusesSymlinkedPaths(t *testing.T) {
	sandboxtest.RequireCommand(t, "git")
	root := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	os.MkdirAll(filepath.Join(root, "real"), 0o755)
	os.WriteFile(filepath.Join(root, "real", "a.txt"), []byte("a\n"), 0o644)
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "init")
	if err := os.Symlink("real", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "real", "a.txt"), []byte("b\n"), 0o644)
	res := &agent.Result{Mode: agent.ModeFix, Verified: true, Changes: []agent.FileChange{{Path: "link/a.txt", Before: []byte("a\n"), After: []byte("b\n")}}}
	err := commitChanges(t.Context(), root, res)
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("commitChanges through a symlink = %v, want a refusal naming the symlink", err)
	}
	if log := git("log", "--oneline"); strings.Count(log, "\n") != 1 {
		t.Errorf("a commit was made:\n%s", log)
	}
}
