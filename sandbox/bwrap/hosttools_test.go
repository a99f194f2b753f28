package bwrap_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestHostTools: a host toolchain directory (rustup's ~/.cargo/bin) is
// offered read-only at its own path, on PATH, with its environment, also
// below a 0700 home (root's: every session has its own uid then, which
// cannot traverse it, so a mirror of hard links is bound).
func TestHostTools(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	home := filepath.Join(t.TempDir(), "home")
	bin := filepath.Join(home, ".cargo", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "mytool"), []byte("#!/bin/sh\necho tool $TOOL_HOME\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := bwrap.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := sandbox.Spec{HostTools: []sandbox.HostTool{{Dir: bin, OnPath: true, Env: []string{"TOOL_HOME=" + home}}}}
	sess, err := b.Start(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", "mytool; touch " + bin + "/x 2>/dev/null && echo writable; true"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.Stdout)); got != "tool "+home {
		t.Errorf("mytool from the host tool directory: stdout %q, stderr %q; want %q (and not writable)", res.Stdout, res.Stderr, "tool "+home)
	}
	if _, err := os.Stat(filepath.Join(bin, "x")); err == nil {
		t.Errorf("the sandbox wrote into the host tool directory")
	}
}
