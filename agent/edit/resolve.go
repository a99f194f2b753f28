package edit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/fixpoint-dev/fixpoint/agent/redact"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Why an edit's path is refused. Every refusal is also an ErrOutside,
// ErrGitDir, ErrProtected or ErrSecret for errors.Is, so callers and
// FormatFeedback can tell the model what to do instead.
var (
	// ErrSymlink: a component of the path is a symlink on the host (any
	// symlink, wherever it points: a link to .git or to ".." resolves
	// inside the workspace yet writes somewhere a name check cannot see).
	ErrSymlink = errors.New("path goes through a symlink")
	// ErrGitDir: the path is inside a git directory, however reached:
	// .git in any case, a gitdir or commondir target, a directory that
	// looks like one (HEAD with objects and refs, or with commondir).
	// A file written there (hooks, config with core.fsmonitor) runs
	// commands on the host at the user's next git command.
	ErrGitDir = errors.New("path inside a git directory")
	// ErrProtected: the file configures fixpoint, the sandbox, CI, git or
	// an editor (see Protected); [policy] allow_protected may allow it.
	ErrProtected = errors.New("protected file")
	// ErrSecret: the file holds secrets (redact.IsSecretPath, or
	// ApplyOptions.Secrets).
	ErrSecret = errors.New("secret file")
	// ErrNotRegular: the path exists on the host as something other than
	// a regular file with one link (a directory, a hard link, a device).
	ErrNotRegular = errors.New("not a regular file")
)

// isGitName reports whether a path component names a git directory on
// some file system: ".git" in any case, with the trailing dots and spaces
// Windows drops, with the ignorable code points HFS+ drops, or the NTFS
// short name "git~1" (the names git itself refuses in a checkout).
func isGitName(part string) bool {
	var b strings.Builder
	for _, r := range part {
		switch r {
		case 0x200C, 0x200D, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
			0x206A, 0x206B, 0x206C, 0x206D, 0x206E, 0x206F, 0xFEFF:
			continue // HFS+ ignores these in names
		}
		b.WriteRune(r)
	}
	s := strings.ToLower(strings.TrimRight(b.String(), ". "))
	return s == ".git" || s == "git~1"
}

// hasGitName reports whether any component of rel is a git name.
func hasGitName(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if isGitName(part) {
			return true
		}
	}
	return false
}

// looksLikeGitDir reports whether dir is a git directory by git's own
// test (HEAD plus objects and refs, or HEAD plus commondir for a linked
// worktree's directory), has telling whether a workspace path exists.
func looksLikeGitDir(dir string, has func(rel string) bool) bool {
	j := func(name string) string {
		if dir == "." || dir == "" {
			return name
		}
		return dir + "/" + name
	}
	if !has(j("HEAD")) {
		return false
	}
	return has(j("commondir")) || has(j("gitdir")) || (has(j("objects")) && has(j("refs")))
}

// gitDirTargets lists the workspace directories that gitdir files (a .git
// file: "gitdir: path") and commondir files in snap point to: git
// directories reached without a .git component.
func gitDirTargets(snap *sandbox.Snapshot) []string {
	var out []string
	add := func(from, target string) {
		target = strings.TrimSpace(target)
		if target == "" {
			return
		}
		if path.IsAbs(target) {
			root := strings.TrimSuffix(snap.Root, "/")
			if root == "" || !strings.HasPrefix(target, root+"/") {
				return // outside the workspace: not writable by edits anyway
			}
			target = strings.TrimPrefix(target, root+"/")
		} else {
			target = path.Join(path.Dir(from), target)
		}
		if c, err := sandbox.CleanRel(target); err == nil {
			out = append(out, c)
		}
	}
	for p, f := range snap.Files {
		switch base := path.Base(p); {
		case isGitName(base):
			if line, ok := strings.CutPrefix(firstLine(f), "gitdir:"); ok {
				add(p, line)
			}
		case base == "commondir":
			add(p, firstLine(f))
			add(p, ".") // the directory holding commondir is a git dir
		}
	}
	// SnapshotDir leaves every .git entry out; the .git files it saw
	// (submodules, linked worktrees) are read from disk, without following
	// symlinks (SnapshotDir lists regular files only).
	for _, p := range snap.Skipped.GitFiles {
		if snap.Root == "" {
			break
		}
		if line, ok := strings.CutPrefix(firstLineOfFile(filepath.Join(snap.Root, filepath.FromSlash(p))), "gitdir:"); ok {
			add(p, line)
		}
	}
	return out
}

// firstLine is the first line of a snapshot file ("" when unreadable).
func firstLine(f sandbox.File) string {
	b, err := f.Bytes()
	if err != nil {
		return ""
	}
	return firstLineOf(b)
}

// firstLineOfFile reads at most 4 KiB of a regular file on disk.
func firstLineOfFile(name string) string {
	fh, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(fh, 4096))
	return firstLineOf(b)
}

func firstLineOf(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(s)
}

// under reports whether rel is dir or inside it.
func under(rel, dir string) bool {
	return dir == "." || rel == dir || strings.HasPrefix(rel, dir+"/")
}

// Protected returns what kind of protected file rel is, or "" when it is
// not protected: fixpoint's configuration and data, the sandbox recipe,
// dev containers, CI configuration, git attributes and modules, commit
// hook managers, direnv and mise files, package manager configuration that
// can swap the toolchain (each language's: lang.ProtectedFiles, such as
// lang/node's .yarnrc.yml and lang/rust's .cargo/), and editor settings. Those run code on the
// user's machine or in CI, or change how fixpoint verifies, outside the
// sandbox; a model must not write them unless the user allows it.
func Protected(rel string) string {
	lower := strings.ToLower(rel)
	parts := strings.Split(lower, "/")
	base := parts[len(parts)-1]
	for i, dir := range parts[:len(parts)-1] {
		// GitHub, Gitea and Forgejo Actions: workflows and local actions,
		// wherever the .github directory is.
		if (dir == ".github" || dir == ".gitea" || dir == ".forgejo") && i+2 < len(parts) && (parts[i+1] == "workflows" || parts[i+1] == "actions") {
			return "CI configuration"
		}
		switch dir {
		case ".fixpoint":
			return "fixpoint's data"
		case ".devcontainer":
			return "a dev container definition"
		case ".circleci", ".ci", ".buildkite", ".woodpecker", ".gitlab", ".azure-pipelines", ".azuredevops", ".drone":
			return "CI configuration"
		case ".husky":
			return "a git hook manager's configuration"
		case ".vscode", ".idea", ".helix", ".zed", ".fleet", ".nvim", ".theia":
			return "editor settings"
		}
	}
	switch {
	case base == ".fixpoint.toml":
		return "fixpoint's configuration"
	case base == "sandbox.dockerfile":
		return "the sandbox recipe"
	case base == ".devcontainer.json":
		return "a dev container definition"
	case strings.HasSuffix(base, ".gitlab-ci.yml"), strings.HasPrefix(base, "jenkinsfile"),
		strings.HasPrefix(base, "azure-pipelines."), strings.HasPrefix(base, "bitbucket-pipelines."),
		strings.HasPrefix(base, "cloudbuild."):
		return "CI configuration"
	case strings.HasSuffix(base, ".code-workspace"), strings.HasSuffix(base, ".sublime-project"):
		return "editor settings"
	}
	switch base {
	case ".travis.yml", ".drone.yml", ".appveyor.yml", "appveyor.yml", ".cirrus.yml", ".woodpecker.yml", "codefresh.yml", ".gitlab-ci.yaml":
		return "CI configuration"
	case ".gitattributes", ".gitmodules", ".lfsconfig", ".gitconfig":
		return "git configuration"
	case ".pre-commit-config.yaml", ".pre-commit-hooks.yaml", "lefthook.yml", ".lefthook.yml", "lefthook-local.yml", "lefthook.yaml":
		return "a git hook manager's configuration"
	case ".envrc", ".mise.toml", "mise.toml", ".mise.local.toml":
		return "shell environment configuration (it runs when the user enters the directory)"
	case ".nvim.lua", ".nvimrc", ".exrc", ".vimrc", ".dir-locals.el", ".dir-locals-2.el":
		return "editor settings"
	}
	return registry.ProtectedFile(lower)
}

// alwaysProtected reports the files no setting can open to the model:
// the file holding the setting itself, and fixpoint's data.
func alwaysProtected(rel string) bool {
	k := Protected(rel)
	return k == "fixpoint's configuration" || k == "fixpoint's data"
}

// Allowed reports whether rel matches an allow_protected entry: the exact
// path, a directory given with a trailing "/", or a path.Match pattern.
func Allowed(rel string, allow []string) bool {
	for _, a := range allow {
		a = strings.TrimPrefix(strings.TrimSpace(a), "./")
		switch {
		case a == "":
		case a == rel:
			return true
		case strings.HasSuffix(a, "/") && strings.HasPrefix(rel, a):
			return true
		default:
			if ok, _ := path.Match(a, rel); ok {
				return true
			}
		}
	}
	return false
}

// checkName refuses rel by name alone: git names, secret files, protected
// files that opts does not allow.
func checkName(rel string, o *ApplyOptions) error {
	if hasGitName(rel) {
		return refuse(ErrGitDir, "%s is inside .git, which edits may not touch (a hook or config there would run commands on the host)", rel)
	}
	if redact.IsSecretPath(rel) || slices.Contains(o.Secrets, rel) {
		return refuse(ErrSecret, "%s holds secrets; fixpoint never lets the model read or change it", rel)
	}
	kind := Protected(rel)
	for _, x := range o.Protect {
		if x != "" && (rel == x || strings.HasPrefix(rel, strings.TrimSuffix(x, "/")+"/")) {
			kind = "the sandbox recipe"
		}
	}
	if kind != "" && (alwaysProtected(rel) || !Allowed(rel, o.AllowProtected)) {
		return refuse(ErrProtected, "%s is %s, which the model may not change", rel, kind)
	}
	return nil
}

// refusal is an error that matches its sentinel with errors.Is and reads
// as its message alone (the message names the file and the reason).
type refusal struct {
	kind error
	msg  string
}

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() error { return e.kind }

func refuse(kind error, format string, args ...any) error {
	return &refusal{kind, fmt.Sprintf(format, args...)}
}
