package memory

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestProjectID(t *testing.T) {
	base := t.TempDir()
	plain := filepath.Join(base, "plain")
	repo := filepath.Join(base, "repo")
	worktree := filepath.Join(base, "wt")
	for _, d := range []string{plain, filepath.Join(repo, ".git", "worktrees", "wt"), worktree} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitConfig := "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://example.com/up.git\n[remote \"origin\"]\n\turl = https://user:secret@github.com/acme/app.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(repo, ".git", "config"), gitConfig)
	write(filepath.Join(worktree, ".git"), "gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n")
	write(filepath.Join(repo, ".git", "worktrees", "wt", "commondir"), "../..\n")
	link := filepath.Join(base, "link")
	if err := os.Symlink(plain, link); err != nil {
		t.Fatal(err)
	}

	if got := GitRemote(repo); got != "https://github.com/acme/app.git" {
		t.Errorf("GitRemote(repo) = %q, want origin without credentials", got)
	}
	if got := GitRemote(worktree); got != "https://github.com/acme/app.git" {
		t.Errorf("GitRemote(worktree) = %q, want the common dir's origin", got)
	}
	if got := GitRemote(plain); got != "" {
		t.Errorf("GitRemote(plain) = %q, want empty", got)
	}
	if ProjectID(link) != ProjectID(plain) || ProjectID(plain+"/.") != ProjectID(plain) {
		t.Error("ProjectID differs through a symlink or an unclean path")
	}
	if len(ProjectID(plain)) != 16 {
		t.Errorf("ProjectID = %q, want 16 hex digits", ProjectID(plain))
	}
	before := ProjectID(repo)
	write(filepath.Join(repo, ".git", "config"), "[remote \"origin\"]\n\turl = git@github.com:acme/other.git\n")
	if ProjectID(repo) == before {
		t.Error("ProjectID did not change with the remote URL")
	}
}

// A named pipe planted at .git/config (or a symlink to one) would block a
// plain open forever: Open must read past it, as if there were no remote.
// If the reader regressed, this test hangs until go test's timeout.
func TestOpenNamedPipeGitConfig(t *testing.T) {
	for _, link := range []bool{false, true} {
		root := t.TempDir()
		git := filepath.Join(root, ".git")
		if err := os.Mkdir(git, 0o755); err != nil {
			t.Fatal(err)
		}
		fifo := filepath.Join(git, "config")
		if link {
			fifo = filepath.Join(t.TempDir(), "fifo")
			if err := os.Symlink(fifo, filepath.Join(git, "config")); err != nil {
				t.Fatal(err)
			}
		}
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatalf("mkfifo: %v", err)
		}
		st, err := Open(t.Context(), t.TempDir(), &Options{Root: root})
		if err != nil {
			t.Fatalf("Open(root with a FIFO .git/config, symlink=%v) = %v, want a store", link, err)
		}
		st.Close()
		if got := GitRemote(root); got != "" {
			t.Errorf("GitRemote(FIFO config) = %q, want empty", got)
		}
	}
}
