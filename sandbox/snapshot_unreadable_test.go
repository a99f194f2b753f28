package sandbox

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSnapshotUnreadable: a file the user cannot read stops the snapshot
// with its name and the fix, and touches nothing. Root reads everything,
// so as root the check runs in a child process as nobody.
func TestSnapshotUnreadable(t *testing.T) {
	if dir := os.Getenv("FIXPOINT_UNREADABLE_DIR"); dir != "" {
		checkUnreadable(t, dir)
		return
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"ok.go": "package ok\n", "private/data.bin": "secret"})
	if err := os.Chmod(filepath.Join(dir, "private", "data.bin"), 0); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		checkUnreadable(t, dir)
		return
	}
	// As root: copy the test binary where nobody can run it, open the
	// directories on the way, and run this test again as nobody.
	bin := filepath.Join(t.TempDir(), "snapshot.test")
	copyExecutable(t, os.Args[0], bin)
	for _, d := range []string{filepath.Dir(bin), filepath.Dir(filepath.Dir(bin)), dir, filepath.Dir(dir), filepath.Join(dir, "private")} {
		os.Chmod(d, 0o755)
	}
	os.Chmod(filepath.Join(dir, "ok.go"), 0o644)
	cmd := exec.Command(bin, "-test.run=^TestSnapshotUnreadable$", "-test.v")
	cmd.Env = append(os.Environ(), "FIXPOINT_UNREADABLE_DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

func checkUnreadable(t *testing.T, dir string) {
	_, err := SnapshotDir(dir, nil)
	if err == nil {
		t.Fatal("SnapshotDir of a workspace with an unreadable file succeeded")
	}
	for _, s := range []string{"private/data.bin", "permission denied", `exclude = ["private/data.bin"]`} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "ok.go")); err != nil || string(data) != "package ok\n" {
		t.Errorf("ok.go changed: %q, %v", data, err)
	}
}

func copyExecutable(t *testing.T, src, dst string) {
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
