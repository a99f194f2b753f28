package server

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
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
		out, err := runGroup(t, 5*time.Minute, dir, nil, "npm", "ci", "--no-audit", "--no-fund")
		if err != nil {
			t.Fatalf("npm ci: %v\n%s", err, out)
		}
	}
	bin := fixpointBinary(t)
	model := llmtest.NewServer(calcModel())
	defer model.Close()
	root := calcProject(t, false, "")
	// The whole flow takes seconds; 3 minutes means it hangs.
	env := append(serveEnv(t, model.URL()), "FIXPOINT_BIN="+bin, "E2E_ROOT="+root, "FIXPOINT_LOG=info")
	out, err := runGroup(t, 3*time.Minute, dir, env, node, "--test", "--test-reporter=spec", "--test-timeout=150000", "server.test.js")
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("node --test: %v", err)
	}
}

// runGroup runs a command in a process group of its own under a deadline.
// On the deadline, or when it exits, the whole group is killed (node's
// children, fixpoint serve among them, included), and the test fails if
// any process of the group is still there after that.
func runGroup(t *testing.T, deadline time.Duration, dir string, env []string, name string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second // children holding the output pipe
	out, err := cmd.CombinedOutput()
	if cmd.Process == nil {
		return out, err
	}
	pgid := cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGKILL)
	for i := 0; syscall.Kill(-pgid, 0) == nil; i++ {
		if i == 50 {
			t.Errorf("%s: processes of its group %d are left after SIGKILL", name, pgid)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if ctx.Err() != nil {
		return out, fmt.Errorf("%s did not finish within %v (its process group was killed): %w", name, deadline, ctx.Err())
	}
	return out, err
}
