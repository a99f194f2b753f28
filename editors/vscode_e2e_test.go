//go:build vscode_e2e

package editors

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestVSCodeEndToEnd installs the packaged extension in a real VS Code
// (code-server) and drives it from headless Chromium with playwright-core
// (e2e/run.mjs), against the recording fake server. It is optional: set
// CODE_SERVER to the code-server binary and PLAYWRIGHT_CORE to the
// playwright-core package directory (editors/README.md says how to install
// them); it is compiled only with -tags vscode_e2e (make vscode-e2e), so the
// default suite never reports it as skipped.
func TestVSCodeEndToEnd(t *testing.T) {
	codeServer, playwright := os.Getenv("CODE_SERVER"), os.Getenv("PLAYWRIGHT_CORE")
	if codeServer == "" || playwright == "" {
		t.Skip("set CODE_SERVER and PLAYWRIGHT_CORE to run the VS Code end-to-end test")
	}
	node := sandboxtest.RequireCommand(t, "node")
	npm := sandboxtest.RequireCommand(t, "npm")
	sandboxtest.RequireCommand(t, "chromium")
	sandboxtest.RequireCommand(t, "python3")
	dir := abs(t, "vscode")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
		run(t, 10*time.Minute, dir, nil, npm, "ci", "--no-audit", "--no-fund")
	}
	vsix := filepath.Join(t.TempDir(), "fixpoint-e2e.vsix")
	run(t, 5*time.Minute, dir, nil, npm, "run", "package", "--", "--out", vsix)
	out := run(t, 10*time.Minute, dir, []string{"CODE_SERVER=" + codeServer, "PLAYWRIGHT_CORE=" + playwright, "TMPDIR=" + t.TempDir()},
		node, "e2e/run.mjs", vsix)
	t.Log(out)
	if !strings.Contains(out, "all end-to-end checks passed") || strings.Contains(out, "FAIL ") {
		t.Fatalf("end-to-end:\n%s", out)
	}
}
