package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestFixRefusesSetupChangeWithoutTerminal: `fixpoint fix` without a
// terminal refuses a reply that fixes the bug and adds an editable path
// to requirements.txt, naming the file, the line and the flag, and writes
// nothing; with --allow-setup-changes the same reply is verified and
// written (the gate alone kept it out).
func TestFixRefusesSetupChangeWithoutTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real engine in bwrap")
	}
	sandboxtest.RequireCommand(t, "bwrap")
	const reqs = "# nothing to install\n"
	reply := "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n\n" +
		"requirements.txt\n<<<<<<< SEARCH\n# nothing to install\n=======\n# nothing to install\n-e ./helpers\n>>>>>>> REPLACE\n"
	tests := []struct {
		name  string
		flags []string
		code  int
		want  []string // in stderr
	}{
		{name: "refused", code: exitNotReached,
			want: []string{"refused the model's edit", "requirements.txt: adds the line \"-e ./helpers\"", "with network", "--allow-setup-changes"}},
		{name: "allowed by flag", flags: []string{"--allow-setup-changes"}, code: 0, want: []string{"approved by flag: requirements.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := llmtest.NewServer(&llmtest.Script{Rules: []llmtest.Rule{
				{Contains: "## Task: write a plan", Reply: &llmtest.Reply{Content: "1. Edit calc.py."}},
				{Contains: "## Task: write the edits", Reply: &llmtest.Reply{Content: reply}},
			}})
			defer model.Close()
			root := t.TempDir()
			for p, c := range map[string]string{"calc.py": strings.Replace(calcPy, "a + b", "a - b", 1), "test_calc.py": calcTestPy, "requirements.txt": reqs} {
				if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c := newLoopCLI(t)
			c.env["FIXPOINT_SANDBOX"] = "bwrap"
			c.env["FIXPOINT_BASE_URL"] = model.URL()
			c.env["FIXPOINT_MODEL"] = "llmtest"
			args := append([]string{"fix", "--dir", root, "--max-iterations", "1"}, tt.flags...)
			code, out, stderr := c.run(t.Context(), args...)
			if code != tt.code {
				t.Fatalf("fixpoint %v = %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, tt.code, out, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			got, _ := os.ReadFile(filepath.Join(root, "requirements.txt"))
			if written := strings.Contains(string(got), "-e ./helpers"); written != (tt.code == 0) {
				t.Errorf("requirements.txt written = %v, want %v:\n%s\nstdout:\n%s", written, tt.code == 0, got, out)
			}
		})
	}
}
