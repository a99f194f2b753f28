package edit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// hostTree builds a workspace on disk: files (content), then symlinks
// (name → target, as written), then hard links (name → existing file).
type hostTree struct {
	files, links, hard map[string]string
	dirs               []string
}

func (h hostTree) build(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range h.dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range h.files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, target := range h.links {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	for p, target := range h.hard {
		if err := os.Link(filepath.Join(root, target), filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// snapshotOf snapshots root as the agent does.
func snapshotOf(t *testing.T, root string) *sandbox.Snapshot {
	t.Helper()
	s, err := sandbox.SnapshotDir(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func create(p, content string) Block { return Block{Path: p, Replace: content} }

// gitRepo is a minimal .git directory as git init makes it.
var gitRepo = hostTree{
	files: map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", "main.go": "package main\n"},
	dirs:  []string{".git/objects", ".git/refs/heads"},
}

func (h hostTree) with(files, links map[string]string) hostTree {
	out := hostTree{files: map[string]string{}, links: map[string]string{}, hard: h.hard, dirs: h.dirs}
	for k, v := range h.files {
		out.files[k] = v
	}
	for k, v := range files {
		out.files[k] = v
	}
	for k, v := range h.links {
		out.links[k] = v
	}
	for k, v := range links {
		out.links[k] = v
	}
	return out
}

func TestApplyRefusesPathsThatDoNotResolve(t *testing.T) {
	outside := t.TempDir()
	tests := []struct {
		name   string
		tree   hostTree
		blocks []Block
		want   error  // sentinel
		reason string // substring of the refusal
		// byRef: the path is refused because a file elsewhere in the
		// snapshot points to it (gitdir, commondir): Apply's check alone.
		byRef bool
	}{
		{name: "gitlink to .git and commondir (the probe's attack)",
			tree:   gitRepo.with(nil, map[string]string{"gitlink": ".git"}),
			blocks: []Block{create("evilgit/config", "[core]\n\tfsmonitor = \"touch /tmp/pwned\"\n"), create("gitlink/commondir", "../evilgit\n")},
			want:   ErrSymlink, reason: "gitlink/commondir goes through gitlink, which is a symlink"},
		{name: "symlink resolving to exactly ..",
			tree:   gitRepo.with(nil, map[string]string{"up": ".."}),
			blocks: []Block{create("up/x.go", "package x\n")}, want: ErrSymlink, reason: "through up"},
		{name: "symlink to a directory outside",
			tree:   gitRepo.with(nil, map[string]string{"out": outside}),
			blocks: []Block{create("out/evil.sh", "x\n")}, want: ErrSymlink},
		{name: "symlink to a directory inside",
			tree:   gitRepo.with(map[string]string{"real/a.go": "package real\n"}, map[string]string{"inner": "real"}),
			blocks: []Block{create("inner/b.go", "package real\n")}, want: ErrSymlink},
		{name: "the file itself is a symlink",
			tree:   gitRepo.with(nil, map[string]string{"hook.sh": ".git/hooks/pre-commit"}),
			blocks: []Block{create("hook.sh", "#!/bin/sh\n")}, want: ErrSymlink, reason: "hook.sh is a symlink"},
		{name: "hard link to a file in .git",
			tree:   hostTree{files: gitRepo.files, dirs: gitRepo.dirs, hard: map[string]string{"notes.txt": ".git/config"}},
			blocks: []Block{{Path: "notes.txt", Search: "[core]\n", Replace: "[core]\n\tfsmonitor = x\n"}}, want: ErrNotRegular, reason: "hard link"},
		{name: ".git in another case", tree: gitRepo, blocks: []Block{create(".GIT/hooks/pre-commit", "x\n")}, want: ErrGitDir},
		{name: ".git with a trailing dot (Windows drops it)", tree: gitRepo, blocks: []Block{create(".git./config", "x\n")}, want: ErrGitDir},
		{name: "NTFS short name of .git", tree: gitRepo, blocks: []Block{create("GIT~1/config", "x\n")}, want: ErrGitDir},
		{name: ".git with an HFS+ ignorable code point", tree: gitRepo, blocks: []Block{create(".g\u200cit/config", "x\n")}, want: ErrGitDir},
		{name: "a .git file in a submodule", tree: gitRepo, blocks: []Block{create("sub/.git", "gitdir: ../evil\n")}, want: ErrGitDir},
		{name: "directory that looks like a git dir",
			tree:   hostTree{files: map[string]string{"vendor/mod/HEAD": "ref: refs/heads/main\n", "main.go": "package main\n"}, dirs: []string{"vendor/mod/objects", "vendor/mod/refs"}},
			blocks: []Block{create("vendor/mod/config", "[core]\n")}, want: ErrGitDir, reason: "vendor/mod"},
		{name: "linked worktree directory (HEAD + commondir)",
			tree:   hostTree{files: map[string]string{"wt/HEAD": "ref: refs/heads/x\n", "wt/commondir": "../.git\n"}},
			blocks: []Block{create("wt/config.worktree", "[core]\n")}, want: ErrGitDir},
		{name: "gitdir file target reached by another name",
			tree:   hostTree{files: map[string]string{"sub/.git": "gitdir: ../modules/sub\n", "sub/a.go": "package sub\n"}},
			blocks: []Block{create("modules/sub/config", "[core]\n")}, want: ErrGitDir, reason: "modules/sub", byRef: true},
		{name: "commondir target",
			tree:   hostTree{files: map[string]string{"wt/commondir": "../common\n", "a.go": "package a\n"}},
			blocks: []Block{create("common/config", "[core]\n")}, want: ErrGitDir, byRef: true},
		{name: "the reply builds a git directory",
			tree: hostTree{files: map[string]string{"a.go": "package a\n"}},
			blocks: []Block{create("evil/HEAD", "ref: refs/heads/main\n"), create("evil/objects/info/x", "x\n"),
				create("evil/refs/heads/main", "0000\n"), create("evil/config", "[core]\n\tfsmonitor = x\n")},
			want: ErrGitDir, reason: "look like a git directory"},
		{name: "the reply adds HEAD next to empty objects and refs on the host",
			tree:   hostTree{files: map[string]string{"a.go": "package a\n", "evil/config": "[core]\n"}, dirs: []string{"evil/objects", "evil/refs"}},
			blocks: []Block{create("evil/HEAD", "ref: refs/heads/main\n")}, want: ErrGitDir},
		{name: "a file where a directory is needed",
			tree:   hostTree{files: map[string]string{"a.go": "package a\n"}},
			blocks: []Block{create("a.go/b.go", "x\n")}, reason: "a.go is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tt.tree.build(t)
			before := readTree(t, root)
			snap := snapshotOf(t, root)
			for i := range tt.blocks {
				tt.blocks[i].Index = i + 1
			}
			got, err := Apply(snap, tt.blocks, nil)
			if err == nil {
				t.Fatalf("Apply = %v, nil; want a refusal", got)
			}
			if tt.want != nil && (!errors.Is(err, tt.want) || !errors.Is(err, ErrOutside)) {
				t.Errorf("Apply = %v; want errors.Is %v and ErrOutside", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("Apply = %v; want the reason %q", err, tt.reason)
			}
			fb := FormatFeedback(err)
			if !strings.Contains(fb, "None of your reply's edits was applied") {
				t.Errorf("feedback does not say nothing was applied:\n%s", fb)
			}
			// Writing what a refused path names must fail too.
			if tt.want != nil && !tt.byRef {
				var ch []Change
				for _, b := range tt.blocks {
					ch = append(ch, Change{Path: b.Path, After: []byte(b.Replace), Created: true})
				}
				if err := WriteFiles(root, ch); err == nil {
					t.Errorf("WriteFiles(%v) = nil, want a refusal", tt.blocks)
				}
			}
			if after := readTree(t, root); !equalTrees(before, after) {
				t.Errorf("the workspace changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestApplyRefusesSnapshotSymlinks: a snapshot that records a symlink
// (fs.ModeSymlink) refuses paths through it even with no host tree.
func TestApplyRefusesSnapshotSymlinks(t *testing.T) {
	snap := snapOf(map[string]string{"a.go": "package a\n"})
	snap.Files["gitlink"] = sandbox.File{Data: []byte(".git"), Mode: fs.ModeSymlink | 0o777}
	for _, p := range []string{"gitlink/commondir", "gitlink"} {
		_, err := Apply(snap, []Block{create(p, "x\n")}, nil)
		if !errors.Is(err, ErrSymlink) {
			t.Errorf("Apply(%s) = %v, want ErrSymlink", p, err)
		}
	}
}

func TestApplyAllowsPlainPaths(t *testing.T) {
	root := gitRepo.with(map[string]string{"pkg/a.go": "package pkg\n"}, map[string]string{"elsewhere": "pkg/a.go"}).build(t)
	got, err := Apply(snapshotOf(t, root), []Block{create("new/dir/b.go", "package dir\n"), {Path: "pkg/a.go", Search: "package pkg\n", Replace: "package pkg // ok\n"}}, nil)
	if err != nil || string(got["new/dir/b.go"]) != "package dir\n" || string(got["pkg/a.go"]) != "package pkg // ok\n" {
		t.Errorf("Apply = %v, %v; want both files", got, err)
	}
}

func TestProtected(t *testing.T) {
	tests := []struct {
		path  string
		want  string // substring of the kind; "" = not protected
		allow []string
	}{
		{path: ".fixpoint.toml", want: "fixpoint's configuration"},
		{path: "sub/.fixpoint.toml", want: "fixpoint's configuration"},
		{path: ".fixpoint.toml", want: "fixpoint's configuration", allow: []string{".fixpoint.toml", "*"}},
		{path: "sandbox.dockerfile", want: "sandbox recipe"},
		{path: ".devcontainer/devcontainer.json", want: "dev container"},
		{path: ".github/workflows/ci.yml", want: "CI"},
		{path: ".github/actions/setup/action.yml", want: "CI"},
		{path: ".github/CODEOWNERS"},
		{path: ".gitlab-ci.yml", want: "CI"},
		{path: ".circleci/config.yml", want: "CI"},
		{path: ".ci/run", want: "CI"},
		{path: "Jenkinsfile", want: "CI"},
		{path: "azure-pipelines.yml", want: "CI"},
		{path: ".travis.yml", want: "CI"},
		{path: ".gitattributes", want: "git"},
		{path: "sub/.gitmodules", want: "git"},
		{path: ".vscode/settings.json", want: "editor"},
		{path: ".vscode/launch.json", allow: []string{".vscode/launch.json"}},
		{path: ".vscode/tasks.json", want: "editor", allow: []string{".vscode/launch.json"}},
		{path: ".idea/workspace.xml", allow: []string{".idea/"}},
		{path: ".idea/workspace.xml", want: "editor"},
		{path: ".nvim.lua", want: "editor"},
		{path: ".dir-locals.el", want: "editor"},
		{path: ".helix/config.toml", want: "editor"},
		{path: "app.code-workspace", want: "editor"},
		{path: ".pre-commit-config.yaml", want: "hook"},
		{path: ".husky/pre-commit", want: "hook"},
		{path: ".envrc", want: "enters the directory"},
		{path: ".yarnrc.yml", want: "package manager"},
		{path: ".cargo/config.toml", want: "package manager"},
		{path: ".editorconfig"},
		{path: "ci/build.go"},
		{path: "src/vscode.ts"},
		{path: "docs/github.md"},
	}
	for _, tt := range tests {
		err := checkName(tt.path, &ApplyOptions{AllowProtected: tt.allow})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("checkName(%q, allow %v) = %v, want nil", tt.path, tt.allow, err)
		case tt.want != "" && (!errors.Is(err, ErrProtected) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("checkName(%q, allow %v) = %v, want ErrProtected naming %q", tt.path, tt.allow, err, tt.want)
		}
	}
	// A Dockerfile the configuration names is protected too.
	if err := checkName("build/sandbox.Dockerfile.dev", &ApplyOptions{Protect: []string{"build/sandbox.Dockerfile.dev"}}); !errors.Is(err, ErrProtected) {
		t.Errorf("checkName(configured Dockerfile) = %v, want ErrProtected", err)
	}
}

func TestApplyProtectedFeedback(t *testing.T) {
	snap := snapOf(map[string]string{".fixpoint.toml": "[agent]\nmax_iterations = 6\n"})
	_, err := Apply(snap, []Block{{Index: 1, Path: ".fixpoint.toml", Search: "[agent]\n", Replace: "test_cmd = \"true\"\n[agent]\nallow_test_edits = true\n"}}, nil)
	if !errors.Is(err, ErrProtected) {
		t.Fatalf("Apply(.fixpoint.toml) = %v, want ErrProtected", err)
	}
	fb := FormatFeedback(err)
	for _, want := range []string{".fixpoint.toml is fixpoint's configuration", "may not change"} {
		if !strings.Contains(fb, want) {
			t.Errorf("feedback lacks %q:\n%s", want, fb)
		}
	}
}

func TestApplySecretNeverQuoted(t *testing.T) {
	const canary = "envcanaryAPIKEY7f3a9Q"
	snap := snapOf(map[string]string{".env": "API_KEY=" + canary + "\nDEBUG=1\n", "config/id_rsa": "-----BEGIN " + canary + "\n"})
	for _, b := range []Block{
		{Index: 1, Path: ".env", Search: "API_KEY=x\n", Replace: "API_KEY=y\n"},   // fails: would quote the closest lines
		{Index: 1, Path: ".env", Search: "DEBUG=1\n", Replace: "DEBUG=0\n"},       // matches: still refused
		{Index: 1, Path: "config/id_rsa", Search: "-----BEGIN\n", Replace: "x\n"}, // a key
		{Index: 1, Path: ".env.local", Replace: "API_KEY=mine\n"},                 // a new secret file
	} {
		_, err := Apply(snap, []Block{b}, nil)
		if !errors.Is(err, ErrSecret) {
			t.Errorf("Apply(%s) = %v, want ErrSecret", b.Path, err)
		}
		if fb := FormatFeedback(err); strings.Contains(fb, canary) || strings.Contains(err.Error(), canary) {
			t.Errorf("feedback for %s quotes the secret:\n%s", b.Path, fb)
		}
	}
	// Defence in depth: an ApplyError on a secret path never shows Nearby.
	fb := FormatFeedback(&ApplyError{Block: 1, Path: ".env", Reason: "x", Nearby: "1| API_KEY=" + canary + "\n"})
	if strings.Contains(fb, canary) {
		t.Errorf("FormatFeedback quotes a secret file's lines:\n%s", fb)
	}
}

func TestWriteFiles(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "target"), []byte("outside\n"), 0o644)
	tests := []struct {
		name    string
		tree    hostTree
		changes []Change
		want    map[string]string // files after; nil = unchanged tree
		err     string
	}{
		{name: "modify, create in new dirs, delete",
			tree: hostTree{files: map[string]string{"a.txt": "old\n", "gone.txt": "bye\n"}},
			changes: []Change{{Path: "a.txt", Before: []byte("old\n"), After: []byte("new\n")},
				{Path: "d/e/f.txt", After: []byte("f\n"), Created: true},
				{Path: "gone.txt", Before: []byte("bye\n"), Deleted: true}},
			want: map[string]string{"a.txt": "new\n", "d/e/f.txt": "f\n"}},
		{name: "changed by the user",
			tree:    hostTree{files: map[string]string{"a.txt": "edited by the user\n"}},
			changes: []Change{{Path: "a.txt", Before: []byte("old\n"), After: []byte("new\n")}}, err: "changed on disk"},
		{name: "created meanwhile",
			tree:    hostTree{files: map[string]string{"a.txt": "mine\n"}},
			changes: []Change{{Path: "a.txt", After: []byte("new\n"), Created: true}}, err: "changed on disk"},
		{name: "symlink swapped in after the run",
			tree:    hostTree{links: map[string]string{"a.txt": filepath.Join(outside, "target")}},
			changes: []Change{{Path: "a.txt", After: []byte("pwned\n"), Created: true}}, err: "symlink"},
		{name: "directory symlink swapped in after the run",
			tree:    hostTree{links: map[string]string{"d": outside}},
			changes: []Change{{Path: "d/target", Before: []byte("outside\n"), After: []byte("pwned\n")}}, err: "symlink"},
		{name: "symlink to .. is not followed",
			tree:    hostTree{links: map[string]string{"up": ".."}},
			changes: []Change{{Path: "up/x", After: []byte("x\n"), Created: true}}, err: "symlink"},
		{name: "into .git", tree: gitRepo,
			changes: []Change{{Path: ".git/hooks/post-checkout", After: []byte("#!/bin/sh\n"), Created: true}}, err: ".git"},
		{name: "unclean path", tree: hostTree{},
			changes: []Change{{Path: "a/../../x", After: []byte("x\n"), Created: true}}, err: "not a clean"},
		{name: "a later bad path stops the earlier good one",
			tree: hostTree{files: map[string]string{"a.txt": "old\n"}, links: map[string]string{"l": outside}},
			changes: []Change{{Path: "a.txt", Before: []byte("old\n"), After: []byte("new\n")},
				{Path: "l/x", After: []byte("x\n"), Created: true}}, err: "symlink"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tt.tree.build(t)
			before := readTree(t, root)
			err := WriteFiles(root, tt.changes)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("WriteFiles = %v, want %q", err, tt.err)
				}
				if after := readTree(t, root); !equalTrees(before, after) {
					t.Errorf("the workspace changed:\nbefore %v\nafter  %v", before, after)
				}
			} else if err != nil {
				t.Fatalf("WriteFiles = %v", err)
			}
			if tt.want != nil {
				got := readTree(t, root)
				if !equalTrees(got, tt.want) {
					t.Errorf("files = %v, want %v", got, tt.want)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "target")); string(b) != "outside\n" {
				t.Errorf("a file outside the workspace changed: %q", b)
			}
		})
	}
}

func TestWriteFilesKeepsMode(t *testing.T) {
	root := hostTree{files: map[string]string{"run.sh": "#!/bin/sh\n"}}.build(t)
	os.Chmod(filepath.Join(root, "run.sh"), 0o755)
	if err := WriteFiles(root, []Change{{Path: "run.sh", Before: []byte("#!/bin/sh\n"), After: []byte("#!/bin/sh\necho\n")}}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(root, "run.sh"))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("mode after write = %v, %v; want 0755", st.Mode(), err)
	}
}

// readTree maps every file and symlink under root (relative path) to its
// content or "-> target".
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestApplyRefusesGitdirTargetOnDisk: SnapshotDir leaves every .git entry
// out, so a submodule's "gitdir:" pointer is known only from disk. A
// reply that writes into the directory it names is still refused.
func TestApplyRefusesGitdirTargetOnDisk(t *testing.T) {
	root := t.TempDir()
	for p, data := range map[string]string{
		"sub/.git":   "gitdir: ../modules/sub\n",
		"sub/a.go":   "package sub\n",
		"main.go":    "package main\n",
		"modules/.k": "",
	} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := sandbox.SnapshotDir(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.Files["sub/.git"]; ok {
		t.Fatalf("snapshot holds sub/.git; this test is about the .git files it leaves out")
	}
	_, err = Apply(snap, []Block{create("modules/sub/config", "[core]\n\tfsmonitor = \"touch /tmp/pwned\"\n")}, nil)
	if !errors.Is(err, ErrGitDir) {
		t.Errorf("Apply into the gitdir target of an on-disk sub/.git = %v, want ErrGitDir", err)
	}
	if _, err := Apply(snap, []Block{create("modules/other/x.go", "package other\n")}, nil); err != nil {
		t.Errorf("Apply beside the gitdir target = %v, want it applied", err)
	}
}
