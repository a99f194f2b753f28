package edit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Tests written against the survivors of a mutation audit (issue 20,
// Deliver 9): each fails when the bug it is named after is introduced;
// internal/mutation/mutants.txtar keeps checking that.

// TestWriteFilesRefusesSameSizeEdits: the unchanged-on-disk check compares
// content, not sizes: an edit the user made during the run that keeps the
// file's size (a digit changed, a word swapped for another) is not
// overwritten.
func TestWriteFilesRefusesSameSizeEdits(t *testing.T) {
	tests := []struct{ name, before, onDisk string }{
		{"one byte changed", "limit = 10\n", "limit = 20\n"},
		{"same bytes reordered", "ab\n", "ba\n"},
		{"emptied to the same length of spaces", "abc\n", "   \n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.before) != len(tt.onDisk) {
				t.Fatalf("the case needs two texts of one size: %q, %q", tt.before, tt.onDisk)
			}
			root := hostTree{files: map[string]string{"a.txt": tt.onDisk, "b.txt": "b\n"}}.build(t)
			err := WriteFiles(root, []Change{
				{Path: "b.txt", Before: []byte("b\n"), After: []byte("B\n")},
				{Path: "a.txt", Before: []byte(tt.before), After: []byte("written by the run\n")},
			})
			if !errors.Is(err, ErrChangedOnDisk) || !strings.Contains(err.Error(), "a.txt") {
				t.Fatalf("WriteFiles = %v, want ErrChangedOnDisk naming a.txt", err)
			}
			if got := readTree(t, root); got["a.txt"] != tt.onDisk || got["b.txt"] != "b\n" {
				t.Errorf("files after a refused write = %v; want the user's a.txt and b.txt untouched", got)
			}
		})
	}
}

// TestCheckPathsRefusesAFileInAGitDirectory: the last check before the
// editor is asked to write (CheckPaths) refuses a file whose own parent
// directory looks like a git directory (HEAD + objects + refs, HEAD +
// commondir, HEAD + gitdir), not only one deeper inside it; and the root
// itself when it looks like one.
func TestCheckPathsRefusesAFileInAGitDirectory(t *testing.T) {
	bare := hostTree{
		files: map[string]string{"vendor/mod/HEAD": "ref: refs/heads/main\n", "vendor/mod/description": "x\n", "main.go": "package main\n"},
		dirs:  []string{"vendor/mod/objects", "vendor/mod/refs/heads"},
	}
	worktree := hostTree{files: map[string]string{"wt/HEAD": "ref: refs/heads/x\n", "wt/commondir": "../.git\n"}}
	gitdir := hostTree{files: map[string]string{"m/HEAD": "ref: refs/heads/x\n", "m/gitdir": "/elsewhere/.git\n"}}
	rootIsGit := hostTree{files: map[string]string{"HEAD": "ref: refs/heads/main\n"}, dirs: []string{"objects", "refs"}}
	tests := []struct {
		name string
		tree hostTree
		path string
	}{
		{"new file next to HEAD, objects and refs", bare, "vendor/mod/config"},
		{"existing file next to HEAD, objects and refs", bare, "vendor/mod/description"},
		{"the HEAD itself", bare, "vendor/mod/HEAD"},
		{"deeper inside", bare, "vendor/mod/hooks/pre-commit"},
		{"linked worktree (HEAD + commondir)", worktree, "wt/config.worktree"},
		{"HEAD + gitdir", gitdir, "m/config"},
		{"the workspace root looks like a git directory", rootIsGit, "config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tt.tree.build(t)
			err := CheckPaths(root, []string{"main.go", tt.path})
			if !errors.Is(err, ErrGitDir) {
				t.Errorf("CheckPaths(%s) = %v, want ErrGitDir", tt.path, err)
			}
		})
	}
	// Not every directory with a HEAD file is one.
	root := hostTree{files: map[string]string{"docs/HEAD": "a heading\n", "docs/objects.md": "x\n"}}.build(t)
	if err := CheckPaths(root, []string{"docs/index.md", "docs/HEAD"}); err != nil {
		t.Errorf("CheckPaths(docs/…) = %v, want nil", err)
	}
}

// TestProtectedNested: protected directories protect every file inside
// them, at any depth, wherever the directory is (a nested project's
// .vscode/ is read by VS Code in a multi-root workspace), in any case
// (case-insensitive file systems).
func TestProtectedNested(t *testing.T) {
	tests := []struct{ path, want string }{
		{".vscode/settings.json", "editor"},
		{".vscode/sub/tasks.json", "editor"},
		{"app/.vscode/settings.json", "editor"},
		{"a/b/.vscode/c/d/launch.json", "editor"},
		{".idea/runConfigurations/x.xml", "editor"},
		{".VSCode/settings.json", "editor"},
		{".github/workflows/ci.yml", "CI"},
		{".github/workflows/sub/ci.yml", "CI"},
		{"pkg/.github/workflows/ci.yml", "CI"},
		{"a/b/.github/actions/setup/action.yml", "CI"},
		{".GitHub/Workflows/ci.yml", "CI"},
		{".gitea/workflows/ci.yaml", "CI"},
		{"sub/.forgejo/workflows/release.yml", "CI"},
		{".forgejo/actions/setup/action.yml", "CI"},
		{".devcontainer/sub/Dockerfile", "dev container"},
		{"svc/.devcontainer/devcontainer.json", "dev container"},
		{".circleci/nested/config.yml", "CI"},
		{"tools/.husky/_/pre-commit", "hook"},
		{"crates/x/.cargo/config.toml", "package manager"},
		{"a/.fixpoint/anything", "fixpoint's data"},
		// Not protected: the same names as files, or in other words.
		{"src/vscode/settings.json", ""},
		{"docs/.github/CODEOWNERS", ""},
		{"workflows/ci.yml", ""},
		{".github/workflows", ""}, // a file named like the directory
		{".gitea/issue_template.md", ""},
	}
	for _, tt := range tests {
		got := Protected(tt.path)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("Protected(%q) = %q, want %q", tt.path, got, tt.want)
		}
		if tt.want == "" {
			continue
		}
		if err := checkName(tt.path, &ApplyOptions{}); !errors.Is(err, ErrProtected) {
			t.Errorf("checkName(%q) = %v, want ErrProtected", tt.path, err)
		}
	}
}

// TestApplyRefusesNestedProtectedFiles: the same through Apply, for a file
// that exists and one the reply creates.
func TestApplyRefusesNestedProtectedFiles(t *testing.T) {
	root := hostTree{files: map[string]string{"app/.vscode/settings.json": "{}\n", "main.go": "package main\n"}}.build(t)
	snap := snapshotOf(t, root)
	for _, b := range []Block{
		{Index: 1, Path: "app/.vscode/settings.json", Search: "{}\n", Replace: "{\"terminal.integrated.shell.linux\": \"/tmp/x\"}\n"},
		{Index: 1, Path: "pkg/.github/workflows/release.yml", Replace: "on: push\n"},
		{Index: 1, Path: ".vscode/nested/tasks.json", Replace: "{}\n"},
	} {
		if _, err := Apply(snap, []Block{b}, &ApplyOptions{Root: root}); !errors.Is(err, ErrProtected) {
			t.Errorf("Apply(%s) = %v, want ErrProtected", b.Path, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "app/.vscode/settings.json")); string(b) != "{}\n" {
		t.Errorf("the protected file changed on disk: %q", b)
	}
}
