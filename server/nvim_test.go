package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestNeovimE2E drives `fixpoint serve` from headless Neovim (0.7.2,
// Debian) with testdata/nvim/e2e.lua: runTests → diagnostics at the
// failing assertion; code actions there (titles checked); "Fix until
// tests pass" → Neovim's own applyEdit handler changes the buffer; the
// diagnostics clear; then a goal comment typed into the unsaved buffer is
// solved end to end and its line removed.
func TestNeovimE2E(t *testing.T) {
	nvim := sandboxtest.RequireCommand(t, "nvim")
	requireE2E(t)
	bin := fixpointBinary(t)
	model := llmtest.NewServer(calcModel())
	defer model.Close()
	root := calcProject(t, false, "")
	outFile := filepath.Join(t.TempDir(), "out.tsv")
	script, _ := filepath.Abs("testdata/nvim/e2e.lua")
	ctx, cancel := contextWithTimeout(t, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+script)
	cmd.Dir = root
	cmd.Env = append(serveEnv(t, model.URL()), "FIXPOINT_BIN="+bin, "E2E_ROOT="+root, "E2E_OUT="+outFile)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	out, _ := os.ReadFile(outFile)
	t.Logf("nvim results:\n%s", out)
	if err != nil {
		t.Fatalf("nvim: %v\n%s", err, stderr.String())
	}
	got := map[string]json.RawMessage{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "\t")
		got[k] = json.RawMessage(v)
	}
	if e, ok := got["error"]; ok {
		logPath := filepath.Join(os.Getenv("HOME"), ".cache", "nvim", "lsp.log")
		t.Fatalf("nvim script failed: %s (see %s)", e, logPath)
	}
	var diag struct {
		Lnum    int    `json:"lnum"`
		Source  string `json:"source"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(got["diagnostic"], &diag)
	if diag.Lnum != 7 || diag.Source != "fixpoint" || !strings.Contains(diag.Message, "test_add") {
		t.Errorf("diagnostic = %+v, want line 7 (0-based), source fixpoint, naming test_add", diag)
	}
	var titles []string
	_ = json.Unmarshal(got["titles"], &titles)
	want := []string{"Fix until tests pass [quickfix]", "Fix until tests pass [source.fixpoint.fixTests]", "Run tests [source.fixpoint.runTests]"}
	if strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Errorf("code action titles = %q, want %q", titles, want)
	}
	var fixed, solved string
	_ = json.Unmarshal(got["fixed"], &fixed)
	_ = json.Unmarshal(got["solved"], &solved)
	if fixed != "def add(a, b):\n    return a + b" {
		t.Errorf("calc.py buffer after the fix = %q", fixed)
	}
	if string(got["cleared"]) != "true" {
		t.Errorf("diagnostics were not cleared")
	}
	if !strings.Contains(solved, "def mul(a, b):\n    return a * b") || strings.Contains(solved, "fixpoint:") {
		t.Errorf("calc.py buffer after solving the goal = %q, want mul added and the goal comment removed", solved)
	}
	if disk, _ := os.ReadFile(filepath.Join(root, "calc.py")); strings.Contains(string(disk), "a + b") {
		t.Errorf("calc.py on disk changed; only the editor's buffer may change (the user saves)")
	}
}
