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

// TestEglotE2E drives `fixpoint serve` from Emacs 28 with eglot 1.9
// (Debian elpa-eglot) in batch mode with testdata/eglot/e2e.el: runTests
// → diagnostics (eglot--diagnostics, what flymake shows); the quickfix code action; eglot's own applyEdit
// handler changes the buffer; the diagnostics clear.
func TestEglotE2E(t *testing.T) {
	emacs := sandboxtest.RequireCommand(t, "emacs")
	requireE2E(t)
	bin := fixpointBinary(t)
	model := llmtest.NewServer(calcModel())
	defer model.Close()
	root := calcProject(t, false, "")
	outFile := filepath.Join(t.TempDir(), "out.tsv")
	script, _ := filepath.Abs("testdata/eglot/e2e.el")
	ctx, cancel := contextWithTimeout(t, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, emacs, "--batch", "-Q", "-L", "/usr/share/emacs/site-lisp/elpa/eglot-1.9",
		"-L", "/usr/share/emacs/site-lisp/elpa/project-0.8.1", "-L", "/usr/share/emacs/site-lisp/elpa/xref-1.6.0",
		"-L", "/usr/share/emacs/site-lisp/elpa/seq-2.23", "-l", script)
	cmd.Dir = root
	cmd.Env = append(serveEnv(t, model.URL()), "FIXPOINT_BIN="+bin, "E2E_ROOT="+root, "E2E_OUT="+outFile, "FIXPOINT_LOG=warn")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	out, _ := os.ReadFile(outFile)
	t.Logf("emacs results:\n%s", out)
	if err != nil {
		t.Fatalf("emacs: %v\n%s", err, stderr.String())
	}
	got := map[string]json.RawMessage{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "\t")
		got[k] = json.RawMessage(v)
	}
	if e, ok := got["error"]; ok {
		t.Fatalf("eglot script failed: %s\n%s", e, stderr.String())
	}
	var diag struct {
		Line int    `json:"line"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(got["diagnostic"], &diag)
	if diag.Line != 7 || !strings.Contains(diag.Text, "test_add") {
		t.Errorf("diagnostic = %+v, want line 7 naming test_add", diag)
	}
	var titles []string
	_ = json.Unmarshal(got["titles"], &titles)
	if len(titles) == 0 || titles[0] != "Fix until tests pass" {
		t.Errorf("code action titles = %q", titles)
	}
	var fixed string
	_ = json.Unmarshal(got["fixed"], &fixed)
	if fixed != "def add(a, b):\n    return a + b\n" {
		t.Errorf("calc.py buffer after the fix = %q", fixed)
	}
	if string(got["cleared"]) != "t" && string(got["cleared"]) != "true" {
		t.Errorf("diagnostics were not cleared (cleared = %s)", got["cleared"])
	}
}
