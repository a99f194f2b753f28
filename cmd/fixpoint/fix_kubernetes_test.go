package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestFixDemoOnKubernetes: `fixpoint fix` on examples/go-bug, with the
// demo model and sandbox.backend = "kubernetes" on the test cluster (the
// kubeconfig set in the trusted project file, a user-only key), ends
// VERIFIED with the fix, and --dry-run writes nothing.
func TestFixDemoOnKubernetes(t *testing.T) {
	kubeconfig := sandboxtest.RequireKubeconfig(t)
	c := newLoopCLI(t)
	c.env["FIXPOINT_SANDBOX"] = "kubernetes"
	root := goBugCopy(t)
	toml := "[sandbox]\ntimeout = \"10m\"\n[sandbox.kubernetes]\nkubeconfig = " + strconv.Quote(kubeconfig) + "\nimage_pull_policy = \"Never\"\n"
	if err := os.WriteFile(filepath.Join(root, ".fixpoint.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	c.trust(root)
	orig, _ := os.ReadFile(filepath.Join(root, "stats/stats.go"))
	code, out, stderr := c.run(t.Context(), "fix", "--dir", root, "--dry-run")
	if code != exitOK {
		t.Fatalf("fix --dry-run on kubernetes = %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "VERIFIED") || strings.Contains(out, "NOT VERIFIED") || !strings.Contains(out, "+\t\treturn (s[mid-1] + s[mid]) / 2, nil") {
		t.Errorf("summary lacks the verdict or the diff:\n%s\nstderr:\n%s", out, stderr)
	}
	if now, _ := os.ReadFile(filepath.Join(root, "stats/stats.go")); !bytes.Equal(now, orig) {
		t.Error("--dry-run wrote the workspace")
	}
}
