package sandbox

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// writeTree writes files (slash paths) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is needed as the oracle of this test")
		}
		t.Skip("no git")
	}
}

// git runs our own git on a repository this test made, with no user or
// system configuration.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "core.excludesFile=" + filepath.Join(dir, ".no-global")}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

var gitCorpus = map[string]string{
	".gitignore":              "*.log\n/build/\ndist\n!dist/keep.txt\nnode_modules/\n**/gen/*.go\n!**/gen/keep.go\ncache/*\n!cache/seed.json\n",
	"main.go":                 "package main\n",
	"app.log":                 "log\n",
	"build/out.bin":           "bin\n",
	"src/build/x.go":          "package build\n",
	"dist/keep.txt":           "re-included? no: dist is ignored as a whole\n",
	"node_modules/m/index.js": "module.exports = 1\n",
	"pkg/gen/a.go":            "package gen\n",
	"pkg/gen/keep.go":         "package gen\n",
	"cache/seed.json":         "{}\n",
	"cache/tmp.json":          "{}\n",
	"sub/.gitignore":          "*.tmp\n!important.tmp\n/local/\n",
	"sub/x.tmp":               "tmp\n",
	"sub/important.tmp":       "keep\n",
	"sub/local/a.txt":         "a\n",
	"sub/deep/local/b.txt":    "b\n",
	"sub/deep/c.tmp":          "c\n",
	"excluded-by-info.txt":    "x\n",
	"tracked-but-ignored.log": "forced in\n",
	"docs/a b.md":             "space\n",
	"docs/ünï.md":             "unicode\n",
	"weird/[x].txt":           "bracket\n",
}

// TestSnapshotMatchesGit compares SnapshotDir with git's own answer to
// "what is the project": tracked files plus untracked files no rule
// ignores (git ls-files --cached --others --exclude-standard), for every
// index format and for a workspace below the repository's top.
func TestSnapshotMatchesGit(t *testing.T) {
	requireGit(t)
	for _, tc := range []struct {
		name    string
		version string
		sub     string // workspace below the repository top
	}{
		{name: "index v2", version: "2"},
		{name: "index v3", version: "3"},
		{name: "index v4", version: "4"},
		{name: "workspace in a subdirectory", version: "4", sub: "sub"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, gitCorpus)
			git(t, dir, "init", "-q")
			writeTree(t, dir, map[string]string{".git/info/exclude": "excluded-by-info.txt\n"})
			git(t, dir, "add", "-A")
			git(t, dir, "add", "-f", "tracked-but-ignored.log")
			git(t, dir, "update-index", "--index-version", tc.version)
			if tc.version == "3" { // an extended-flag entry makes a real v3 index
				git(t, dir, "add", "-f", "-N", "app.log")
			}
			writeTree(t, dir, map[string]string{"untracked.txt": "new\n", "sub/untracked.tmp": "ignored\n"})
			ws := filepath.Join(dir, filepath.FromSlash(tc.sub))
			out := git(t, ws, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--full-name")
			var want []string
			for _, p := range strings.Split(strings.TrimRight(out, "\x00"), "\x00") {
				if tc.sub != "" {
					p = strings.TrimPrefix(p, tc.sub+"/")
				}
				if !slices.Contains(want, p) {
					want = append(want, p)
				}
			}
			sort.Strings(want)
			snap, err := SnapshotDir(ws, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := snap.Paths(); !slices.Equal(got, want) {
				t.Errorf("SnapshotDir paths =\n%q\nwant (git ls-files)\n%q", got, want)
			}
		})
	}
}

func TestSnapshotOutsideGitUsesGitignore(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{".gitignore": "dist/\n*.pyc\n", "a.py": "", "a.pyc": "", "dist/big.js": "", "lib/.gitignore": "!keep.pyc\n", "lib/keep.pyc": ""})
	snap, err := SnapshotDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".gitignore", "a.py", "lib/.gitignore", "lib/keep.pyc"}
	if got := snap.Paths(); !slices.Equal(got, want) {
		t.Errorf("paths = %q, want %q", got, want)
	}
	if snap.Skipped.IgnoredFiles != 1 || !slices.Equal(snap.Skipped.IgnoredDirs, []string{"dist"}) {
		t.Errorf("Skipped = %+v, want 1 ignored file and dist/", snap.Skipped)
	}
}

// TestSnapshotNeverOpensIgnored: an ignored directory is not entered and
// ignored files are not read. Inside the ignored tree sit things that
// would show if touched: a symlink loop (would be listed), a secret (would
// be listed), a file too large for the total limit (would fail), and, for
// a non-root run, a directory nobody may read (would fail).
func TestSnapshotNeverOpensIgnored(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".gitignore":           "dist/\n*.bin\n",
		"main.go":              "package main\n",
		"dist/.env":            "TOKEN=x\n",
		"dist/locked/file.txt": "x\n",
	})
	if err := os.Symlink("loop", filepath.Join(dir, "dist", "loop")); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 1<<20)
	for _, name := range []string{"dist/big.js", "huge.bin"} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), big, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "dist", "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "dist", "locked"), 0o755) })
	snap, err := SnapshotDir(dir, &SnapshotOptions{MaxTotalSize: 1 << 10, IsSecret: func(p string) bool { return strings.HasSuffix(p, ".env") }})
	if err != nil {
		t.Fatalf("SnapshotDir: %v (it looked inside an ignored directory or file)", err)
	}
	if got := snap.Paths(); !slices.Equal(got, []string{".gitignore", "main.go"}) {
		t.Errorf("paths = %q", got)
	}
	sk := snap.Skipped
	if len(sk.Links) != 0 || len(sk.Secrets) != 0 || sk.IgnoredFiles != 1 || !slices.Equal(sk.IgnoredDirs, []string{"dist"}) {
		t.Errorf("Skipped = %+v, want only dist/ and huge.bin, nothing from inside dist/", sk)
	}
}

func TestSnapshotSymlinks(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	writeTree(t, dir, map[string]string{"fixtures/data.json": "{}\n", "src/lib/a.js": "1\n", ".git/HEAD": "ref: refs/heads/main\n",
		".gitignore": "dist/\n", "dist/out.js": "1\n", ".env": "TOKEN=abcdefgh12345678\n"})
	writeTree(t, outside, map[string]string{"secret.txt": "x\n"})
	links := map[string]string{
		"gitlink":        ".git",                                      // inside, but .git never enters: it would dangle
		"distlink":       "dist",                                      // inside, but ignored
		"envlink":        ".env",                                      // inside, but a secret
		"test/data.json": "../fixtures/data.json",                     // file inside: kept as is
		"libdir":         "src/lib",                                   // directory inside: kept
		"abs-inside":     filepath.Join(dir, "fixtures", "data.json"), // absolute inside: rewritten relative
		"out":            filepath.Join(outside, "secret.txt"),        // leaves the workspace
		"up":             "..",                                        // exactly the parent
		"self":           "self",                                      // a loop
		"a":              "b",                                         // a loop of two
		"b":              "a",
		"gone":           "missing.txt",                                               // dangling
		"via-up":         "libdir/../../../" + filepath.Base(outside) + "/secret.txt", // through a link, then out
	}
	for name, target := range links {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := SnapshotDir(dir, &SnapshotOptions{IsSecret: func(rel string) bool { return rel == ".env" }})
	if err != nil {
		t.Fatal(err)
	}
	wantLinks := map[string]string{"test/data.json": "../fixtures/data.json", "libdir": "src/lib", "abs-inside": "fixtures/data.json"}
	for name, target := range wantLinks {
		if f, ok := snap.Files[name]; !ok || f.Link != target {
			t.Errorf("Files[%q] = %+v, want a link to %q", name, f, target)
		}
	}
	reasons := map[string]string{}
	for _, l := range snap.Skipped.Links {
		reasons[l.Path] = l.Reason
	}
	wantSkipped := map[string]string{"out": "leaves the workspace", "up": "leaves the workspace", "self": "a symlink loop",
		"a": "a symlink loop", "b": "a symlink loop", "gone": "dangling", "via-up": "leaves the workspace",
		"gitlink": "its target .git is not in the sandbox", "distlink": "its target dist is not in the sandbox",
		"envlink": "its target .env is not in the sandbox"}
	for name, reason := range wantSkipped {
		if reasons[name] != reason {
			t.Errorf("link %s: skipped as %q, want %q", name, reasons[name], reason)
		}
		if _, ok := snap.Files[name]; ok {
			t.Errorf("link %s is in the snapshot", name)
		}
	}
	if s := snap.Skipped.Summary(); !strings.Contains(s, "10 symlinks") {
		t.Errorf("Summary() = %q, want the 10 symlinks named", s)
	}
}

func TestSnapshotSecretsAndSizes(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".env":                       "TOKEN=1\n",
		"test/fixtures/.env.example": "TOKEN=fixture\n",
		"keys/id_rsa":                "k\n",
		"app.py":                     "print(1)\n",
		"data/big.csv":               strings.Repeat("x", 2048),
	})
	isSecret := func(p string) bool { return strings.Contains(p, ".env") || strings.HasSuffix(p, "id_rsa") }
	snap, err := SnapshotDir(dir, &SnapshotOptions{IsSecret: isSecret, IncludeSecrets: []string{"test/fixtures/"}, MaxFileSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"app.py", "test/fixtures/.env.example"}
	if got := snap.Paths(); !slices.Equal(got, want) {
		t.Errorf("paths = %q, want %q", got, want)
	}
	if !slices.Equal(snap.Skipped.Secrets, []string{".env", "keys/id_rsa"}) {
		t.Errorf("Secrets = %q", snap.Skipped.Secrets)
	}
	if len(snap.Skipped.TooLarge) != 1 || snap.Skipped.TooLarge[0] != (SizedPath{"data/big.csv", 2048}) {
		t.Errorf("TooLarge = %+v", snap.Skipped.TooLarge)
	}
	sum := snap.Skipped.Summary()
	for _, s := range []string{"2 secret files (.env, keys/id_rsa", "include_secrets", "data/big.csv 2.0 kB", "max_file_size"} {
		if !strings.Contains(sum, s) {
			t.Errorf("Summary() = %q, want %q in it", sum, s)
		}
	}
}

func TestSnapshotTooLargeNamesOffenders(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"assets/a.bin": strings.Repeat("a", 3000), "assets/b.bin": strings.Repeat("b", 2000), "small.go": "x", "top.dat": strings.Repeat("t", 1500)})
	_, err := SnapshotDir(dir, &SnapshotOptions{MaxTotalSize: 4000})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	for _, s := range []string{"assets/ (4.9 kB)", "assets/a.bin (2.9 kB)", "top.dat", "max_workspace_size", "[sandbox] exclude"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %q", err, s)
		}
	}
}

func TestSnapshotIncludeExclude(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{".gitignore": "dist/\n*.gen\n", "dist/schema.json": "{}", "dist/bundle.js": "", "a.gen": "", "testdata/huge/x": "", "main.go": ""})
	snap, err := SnapshotDir(dir, &SnapshotOptions{Include: []string{"dist/schema.json", "*.gen"}, Exclude: []string{"testdata/huge/", "a.gen"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".gitignore", "dist/schema.json", "main.go"}
	if got := snap.Paths(); !slices.Equal(got, want) {
		t.Errorf("paths = %q, want %q", got, want)
	}
	if !slices.Equal(snap.Skipped.Excluded, []string{"a.gen", "testdata/huge"}) {
		t.Errorf("Excluded = %q", snap.Skipped.Excluded)
	}
}

// TestSnapshotLazyContents: contents stay on disk, are checked on read,
// and overlays keep theirs in memory.
func TestSnapshotLazyContents(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "hello\n", "b.txt": "world\n"})
	snap, err := SnapshotDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := snap.Files["a.txt"]; f.Data != nil || f.Size() != 6 {
		t.Fatalf("Files[a.txt] holds %d bytes in memory, size %d; want 0 and 6", len(f.Data), f.Size())
	}
	if got, err := snap.Read("a.txt"); err != nil || string(got) != "hello\n" {
		t.Fatalf("Read(a.txt) = %q, %v", got, err)
	}
	over := snap.With(map[string][]byte{"a.txt": []byte("edited\n")})
	writeTree(t, dir, map[string]string{"a.txt": "changed on disk\n", "b.txt": "WORLD\n"})
	if got, _ := over.Read("a.txt"); string(got) != "edited\n" {
		t.Errorf("overlay Read = %q, want the overlay", got)
	}
	if _, err := snap.Read("b.txt"); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "b.txt") {
		t.Errorf("Read of a file changed on disk: %v, want ErrChanged naming b.txt", err)
	}
	r, err := snap.Files["b.txt"].Open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, r); !errors.Is(err, ErrChanged) {
		t.Errorf("Open+Copy of a changed file: %v, want ErrChanged", err)
	}
	r.Close()
	changed, _ := snap.Diff(over)
	if !slices.Equal(changed, []string{"a.txt"}) {
		t.Errorf("Diff changed = %q, want [a.txt]", changed)
	}
}

// TestSnapshotHostileFiles: named pipes where .gitignore, info/exclude or
// a source file would be cannot hang a snapshot, and a symlinked
// .gitignore is not followed (as in git).
func TestSnapshotHostileFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"main.go": "package main\n", "elsewhere/rules": "main.go\n", ".git/HEAD": "ref: refs/heads/main\n"})
	for _, p := range []string{".gitignore", ".git/info/exclude", "pipe.txt"} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := syscall.Mkfifo(full, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeTree(t, dir, map[string]string{"sub/main.go": "package sub\n"})
	if err := os.Symlink("../elsewhere/rules", filepath.Join(dir, "sub", ".gitignore")); err != nil {
		t.Fatal(err)
	}
	snap, err := SnapshotDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.Files["sub/main.go"]; !ok {
		t.Errorf("a symlinked .gitignore was followed: sub/main.go left out")
	}
	if !slices.Contains(snap.Skipped.Special, "pipe.txt") || !slices.Contains(snap.Skipped.Special, ".gitignore") {
		t.Errorf("Special = %q, want the pipes named", snap.Skipped.Special)
	}
}

func TestWithOverlays(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{".gitignore": "dist/\n", "main.go": "package main\n", "dist/x.js": ""})
	snap, err := SnapshotDir(dir, &SnapshotOptions{IsSecret: func(p string) bool { return strings.HasSuffix(p, ".env") }, Exclude: []string{"vendor/"}})
	if err != nil {
		t.Fatal(err)
	}
	over, dropped := snap.WithOverlays(map[string][]byte{
		"main.go": []byte("package main // edited\n"), "new.go": []byte("package main\n"),
		".env": []byte("TOKEN=1"), "dist/y.js": []byte(""), "vendor/v.go": []byte(""), ".git/config": []byte(""),
	})
	if want := []string{".env", ".git/config", "dist/y.js", "vendor/v.go"}; !slices.Equal(dropped, want) {
		t.Errorf("dropped = %q, want %q", dropped, want)
	}
	if got, _ := over.Read("main.go"); string(got) != "package main // edited\n" {
		t.Errorf("main.go = %q, want the buffer", got)
	}
	if _, ok := over.Files["new.go"]; !ok {
		t.Error("a buffer for a new file was dropped")
	}
}

// TestSnapshotSkipDirsFromCaller: the languages' cache directories are
// the caller's (SkipDirs: never entered, in the walk and for a buffer),
// generated directories are recorded for a build context but still
// taken in; sandbox names neither list itself.
func TestSnapshotSkipDirsFromCaller(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.py": "", "pkg/cache_dir/a.pyc": "", "cache_dir/b.pyc": "", "deps_dir/m.js": "", ".fixpoint/x": "",
	})
	opts := &SnapshotOptions{SkipDirs: []string{"cache_dir"}, GeneratedDirs: []string{"deps_dir"}}
	snap, err := SnapshotDir(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(maps.Keys(snap.Files)), []string{"a.py", "deps_dir/m.js"}; !slices.Equal(got, want) {
		t.Errorf("SnapshotDir(SkipDirs=cache_dir) files = %q, want %q", got, want)
	}
	over, dropped := snap.WithOverlays(map[string][]byte{"pkg/cache_dir/c.pyc": []byte("x"), "b.py": []byte("")})
	if !slices.Equal(dropped, []string{"pkg/cache_dir/c.pyc"}) || over.GeneratedDirs == nil {
		t.Errorf("WithOverlays dropped %q (want the buffer in a skipped dir), GeneratedDirs %q (want kept)", dropped, over.GeneratedDirs)
	}
	if !slices.Equal(snap.GeneratedDirs, []string{"deps_dir"}) {
		t.Errorf("Snapshot.GeneratedDirs = %q, want the caller's", snap.GeneratedDirs)
	}
	plain, err := SnapshotDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.Files["cache_dir/b.pyc"]; !ok {
		t.Error("SnapshotDir(nil) left out cache_dir/: a language's list is built into sandbox")
	}
}
