package server

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestVSCodeProtocol runs tests/lsp-vscode (node --test): the server
// driven by vscode-languageserver-protocol with VS Code's initialize
// capabilities, numeric ids, cancellation, progress and applyEdit.
func TestVSCodeProtocol(t *testing.T) {
	node := sandboxtest.RequireCommand(t, "node")
	requireE2E(t)
	dir, _ := filepath.Abs("../tests/lsp-vscode")
	if _, err := exec.LookPath("npm"); err == nil {
		ci := exec.CommandContext(t.Context(), "npm", "ci", "--no-audit", "--no-fund")
		ci.Dir = dir
		if out, err := ci.CombinedOutput(); err != nil {
			t.Fatalf("npm ci: %v\n%s", err, out)
		}
	}
	bin := fixpointBinary(t)
	model := llmtest.NewServer(calcModel())
	defer model.Close()
	root := calcProject(t, false, "")
	ctx, cancel := contextWithTimeout(t, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "server.test.js")
	cmd.Dir = dir
	cmd.Env = append(serveEnv(t, model.URL()), "FIXPOINT_BIN="+bin, "E2E_ROOT="+root, "FIXPOINT_LOG=info")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("node --test: %v", err)
	}
}
