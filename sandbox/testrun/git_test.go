package testrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// TestGitInit: a test script that asks git about its repository (`git
// remote -v`, a HEAD for go build's VCS stamp) gets a minimal one: the
// remote without credentials, one empty commit, no hooks, no identity
// configured; an existing .git is left alone, and the report names the
// runner's own command.
func TestGitInit(t *testing.T) {
	sess := newLocalSession(t)
	script := `git remote -v | head -1
git rev-parse --verify -q HEAD >/dev/null && echo head
test -e .git/hooks || echo no hooks
git config user.name || echo no identity
git ls-files | wc -l`
	if _, err := sess.Sync(t.Context(), &sandbox.Snapshot{Files: map[string]sandbox.File{"a.txt": {Data: []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	r := Runner{Name: RunnerCustom, Formats: testFormats(), Args: []string{"sh", "-c", script}, Git: &sandbox.GitInfo{Remote: "https://github.com/o/r.git"}}
	rep, err := Run(t.Context(), sess, r, sandbox.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "origin\thttps://github.com/o/r.git (fetch)\nhead\nno hooks\nno identity\n0"
	if rep.ExitCode != 0 || strings.TrimSpace(rep.Output) != want {
		t.Errorf("exit %d, output %q; want %q", rep.ExitCode, rep.Output, want)
	}
	if strings.Join(rep.Command, " ") != "sh -c "+script {
		t.Errorf("Command = %q, want the runner's own", rep.Command)
	}
	// A second run finds the repository and changes nothing.
	head, _ := os.ReadFile(filepath.Join(sess.dir, ".git", "HEAD"))
	os.WriteFile(filepath.Join(sess.dir, ".git", "description"), []byte("kept"), 0o644)
	if _, err := Run(t.Context(), sess, r, sandbox.Limits{}, nil); err != nil {
		t.Fatal(err)
	}
	if d, _ := os.ReadFile(filepath.Join(sess.dir, ".git", "description")); string(d) != "kept" || len(head) == 0 {
		t.Errorf("an existing .git was replaced (description %q, HEAD %q)", d, head)
	}
	// No remote: no origin, the repository all the same.
	sess = newLocalSession(t)
	r.Git = &sandbox.GitInfo{}
	rep, _ = Run(t.Context(), sess, r, sandbox.Limits{}, nil)
	if got := strings.TrimSpace(rep.Output); !strings.HasPrefix(got, "head\n") {
		t.Errorf("without a remote: output %q, want a repository with a HEAD and no origin", got)
	}
}
