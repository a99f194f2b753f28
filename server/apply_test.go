package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestUnverifiedRunsAreNotApplied runs the real engine (bwrap sandbox,
// scripted model) on runs whose tests pass in the end but which are not
// verified. The server must ask the user instead of sending
// workspace/applyEdit, and with the question dismissed nothing is applied.
func TestUnverifiedRunsAreNotApplied(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real engine in bwrap")
	}
	sandboxtest.RequireCommand(t, "bwrap")
	const mulOnly = "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n=======\ndef mul(a, b):\n    return a * b\n\n\ndef add(a, b):\n>>>>>>> REPLACE\n"
	// The failing test now skips: the run exits 0 without fixing it.
	const skipAdd = "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    import unittest\n    raise unittest.SkipTest(\"later\")\n>>>>>>> REPLACE\n"
	tests := []struct {
		name, command string
		fixed         bool // calc.py's add is right to begin with
		args          map[string]any
		reply         string
		final         string // the last test run's counts: the tests pass
	}{
		{name: "solve without a new test", command: cmdSolveGoal, fixed: true, args: map[string]any{"goal": "add a mul function"}, reply: mulOnly, final: "Iteration 1/1 · 1 passed, 0 failed"},
		{name: "fix whose failing test now skips", command: cmdFixTests, reply: skipAdd, final: "Iteration 1/1 · 0 passed, 0 failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := llmtest.NewServer(&llmtest.Script{Rules: []llmtest.Rule{
				{Contains: "## Task: write a plan", Reply: &llmtest.Reply{Content: calcPlan}},
				{Contains: "## Task: write the edits", Reply: &llmtest.Reply{Content: tt.reply}},
			}})
			defer model.Close()
			root := calcProject(t, tt.fixed, "")
			before, _ := os.ReadFile(filepath.Join(root, "calc.py"))
			data := t.TempDir()
			env := map[string]string{"FIXPOINT_BASE_URL": model.URL(), "FIXPOINT_MODEL": "llmtest", "FIXPOINT_SANDBOX": "bwrap", "FIXPOINT_DATA_DIR": data, "HOME": data}
			e := newFakeEditor(t, editorOptions{root: root, timeout: 3 * time.Minute, server: &Options{
				Getenv: func(k string) string { return env[k] },
				NewEngine: func(ctx context.Context, cfg *config.Config, root string, h Hooks) (Engine, error) {
					return agent.Open(ctx, cfg, root, &agent.OpenOptions{Warn: h.Warn, Approve: h.Approve})
				},
			}})
			e.settings = []byte(`{"maxIterations": 1}`)
			e.initialize(vscodeCaps)
			e.wait("workspace/configuration", "")
			arg := map[string]any{"uri": e.uri("test_calc.py")}
			for k, v := range tt.args {
				arg[k] = v
			}
			res := e.mustCall("workspace/executeCommand", map[string]any{"command": tt.command, "arguments": []any{arg}})
			if !strings.Contains(string(res), `"started":true`) {
				t.Fatalf("%s = %s", tt.command, res)
			}
			end := e.wait("$/progress", `"kind":"end"`)
			if !strings.Contains(string(end), "Not verified") {
				t.Fatalf("progress end = %s, want Not verified", end)
			}
			e.timeout = 20 * time.Second // the question follows at once
			e.wait("window/showMessageRequest", "not verified")
			e.mu.Lock()
			applied := len(e.applied)
			e.mu.Unlock()
			if applied != 0 {
				t.Errorf("workspace/applyEdit sent %d time(s) for an unverified run", applied)
			}
			e.transcriptHas(t, tt.final)
			if b, _ := os.ReadFile(filepath.Join(root, "calc.py")); string(b) != string(before) {
				t.Errorf("calc.py changed on disk: %q", b)
			}
		})
	}
}

// TestApplyRefusesSymlinkedPaths: a verified result whose file became a
// symlink (or sits under one) by the time it is applied is not sent.
func TestApplyRefusesSymlinkedPaths(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "a.go"), []byte("package w\n"), 0o644)
	eng := &fakeEngine{Result: agent.Result{Verified: true, StopReason: "verified"},
		Changes: []fakeChange{{Path: "link/a.go", After: "package w // changed\n"}}}
	e := newFakeEditor(t, editorOptions{engine: eng, files: map[string]string{"go.mod": "module w\n"}})
	if err := os.Symlink(outside, filepath.Join(e.root, "link")); err != nil {
		t.Fatal(err)
	}
	e.initialize(vscodeCaps)
	e.wait("workspace/configuration", "")
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdSolveGoal, "arguments": []any{map[string]any{"goal": "change a"}}})
	msg := e.wait("window/showMessage", "not applied")
	if !strings.Contains(string(msg), "symlink") {
		t.Errorf("message = %s, want it to name the symlink", msg)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.applied) != 0 {
		t.Errorf("workspace/applyEdit sent through a symlink: %s", e.applied)
	}
}
