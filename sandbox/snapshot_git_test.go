package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSnapshotGitInfo: a workspace in a git repository records its remote
// without credentials for the sandbox's minimal repository; one outside a
// repository records none.
func TestSnapshotGitInfo(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("x"), 0o644)
	snap, err := SnapshotDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Git != nil {
		t.Errorf("Git = %+v outside a repository", snap.Git)
	}
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "https://me:SECRET@example.com/o/r.git"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	snap, err = SnapshotDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Git == nil || snap.Git.Remote != "https://example.com/o/r.git" {
		t.Fatalf("Git = %+v, want the remote without credentials", snap.Git)
	}
	if next := snap.With(map[string][]byte{"b.txt": []byte("y")}); next.Git != snap.Git {
		t.Errorf("With dropped Git")
	}
}
