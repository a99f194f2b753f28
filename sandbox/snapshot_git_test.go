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

// TestGitWrapScript: an install step's script runs after the minimal
// repository is made; the remote is data, never shell code.
func TestGitWrapScript(t *testing.T) {
	for _, remote := range []string{"https://github.com/o/r.git", "host:o/$(touch pwned)'r`id`.git", ""} {
		dir := t.TempDir()
		g := &GitInfo{Remote: remote}
		cmd := exec.Command("sh", "-c", g.WrapScript(`echo "args:$#"; git remote get-url origin 2>/dev/null || echo none`))
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		want := "args:0\n" + remote + "\n"
		if remote == "" {
			want = "args:0\nnone\n"
		}
		if err != nil || string(out) != want {
			t.Errorf("remote %q: %v, output %q, want %q", remote, err, out, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
			t.Errorf("remote %q ran as shell code", remote)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "HEAD")); err != nil {
			t.Errorf("remote %q: no repository: %v", remote, err)
		}
	}
}
