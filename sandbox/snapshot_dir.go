package sandbox

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fixpoint-dev/fixpoint/gitrepo"
)

// SnapshotOptions say what SnapshotDir takes in. Zero values are defaults.
type SnapshotOptions struct {
	// MaxFileSize, when positive, leaves out larger files (named in
	// Skipped.TooLarge). Default: no limit.
	MaxFileSize int64
	// MaxTotalSize is the most a workspace may hold: over it SnapshotDir
	// fails with [ErrTooLarge], naming the biggest directories and files.
	// Default 4 GiB; negative means no limit.
	MaxTotalSize int64
	// Include and Exclude are gitignore-style patterns relative to the
	// workspace root ([sandbox] include/exclude). Include takes in paths the
	// ignore rules leave out; Exclude leaves out paths, tracked or not, and
	// wins over Include.
	Include, Exclude []string
	// IsSecret names the files that must not enter a sandbox (the agent
	// passes redact.IsSecretPath); nil means none. IncludeSecrets are
	// gitignore-style patterns of secret files let in all the same (a
	// fixture a test needs).
	IsSecret       func(rel string) bool
	IncludeSecrets []string
	// HoldsSecret, when set, is asked about each file IsSecret flags, with
	// its first 64 KiB: false lets the file in. It serves config files that
	// are secret only when they hold credentials (an .npmrc with
	// `engine-strict=true` changes how npm behaves; one with an
	// `_authToken` stays out).
	HoldsSecret func(rel string, head []byte) bool
	// ScanSecret, when set, returns a scanner for the contents of the file
	// at rel; SnapshotDir writes every regular file it takes in to one as
	// it hashes it (nothing is read twice). A file whose scanner names a
	// rule is left out like a secret file and listed, with the rule, in
	// Skipped.Credentials, unless IncludeSecrets lets it in. Editor
	// buffers are scanned by [Snapshot.WithOverlays] the same way.
	ScanSecret func(rel string) SecretScanner
	// SkipDirs are more directory names never entered, like version
	// control metadata: the languages' interpreter caches, only ever stale
	// in a sandbox (lang.CacheDirs through lang/registry: __pycache__).
	// The caller passes them; nil means none.
	SkipDirs []string
	// GeneratedDirs are the names of directories the languages' tools make
	// (node_modules, target, .venv: lang.ProjectDirs through
	// lang/registry). The walk still takes them in unless ignored; they
	// are kept on the Snapshot (Snapshot.GeneratedDirs) for what must
	// leave them out, a project Dockerfile's build context.
	GeneratedDirs []string
}

// SecretScanner looks for a credential in the contents written to it
// (agent/redact's rule table). Write never fails.
type SecretScanner interface {
	io.Writer
	// Rule names the rule of the first credential found, "" for none.
	Rule() string
}

// CredentialFile is a file whose contents hold a credential, and the rule
// that found it (never the value).
type CredentialFile struct {
	Path, Rule string
}

// ErrTooLarge is returned when a workspace exceeds SnapshotOptions.MaxTotalSize.
var ErrTooLarge = errors.New("workspace too large to snapshot")

// DefaultMaxTotalSize is SnapshotOptions.MaxTotalSize's default.
const DefaultMaxTotalSize = 4 << 30

// alwaysSkipped are directory names never entered: version control
// metadata (never part of a project, and a way to plant hooks) and
// fixpoint's own state. The languages' caches come from the caller
// (SnapshotOptions.SkipDirs).
var alwaysSkipped = map[string]bool{".git": true, ".hg": true, ".svn": true, ".jj": true, ".fixpoint": true}

// SkipReport lists what SnapshotDir left out. Ignored paths are counted,
// never opened: an ignored directory is not even entered.
type SkipReport struct {
	IgnoredFiles int      // files left out by gitignore rules
	IgnoredDirs  []string // directories not entered because ignored
	Excluded     []string // paths left out by [sandbox] exclude
	Secrets      []string // secret files (.env, keys, credentials) left out by name
	// Credentials are files left out because their contents hold a
	// credential (SnapshotOptions.ScanSecret), sorted by path.
	Credentials []CredentialFile
	TooLarge    []SizedPath
	Links       []SkippedLink // symlinks that leave the workspace, loop or dangle
	Special     []string      // sockets, devices, named pipes
	// GitFiles are .git files (a submodule's or worktree's "gitdir: …"
	// pointer) left out like every .git entry; the edit checks read them
	// from disk to learn which directories are git directories.
	GitFiles []string
}

// SizedPath is a path and its size in bytes.
type SizedPath struct {
	Path string
	Size int64
}

// SkippedLink is a symlink left out of a snapshot.
type SkippedLink struct {
	Path, Target, Reason string
}

// Empty reports whether nothing was left out.
func (r SkipReport) Empty() bool {
	return r.IgnoredFiles == 0 && len(r.IgnoredDirs) == 0 && len(r.Excluded) == 0 && len(r.Secrets) == 0 &&
		len(r.Credentials) == 0 && len(r.TooLarge) == 0 && len(r.Links) == 0 && len(r.Special) == 0
}

// Summary is one line for the user: what was left out, with the first few
// names of each kind.
func (r SkipReport) Summary() string {
	var parts []string
	if n := r.IgnoredFiles + len(r.IgnoredDirs); n > 0 {
		parts = append(parts, fmt.Sprintf("%d gitignored (%s, %s not entered)", n, plural(r.IgnoredFiles, "file"), plural(len(r.IgnoredDirs), "directory")))
	}
	if len(r.Excluded) > 0 {
		parts = append(parts, fmt.Sprintf("%d by [sandbox] exclude", len(r.Excluded)))
	}
	if len(r.Secrets) > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s; [sandbox] include_secrets lets one in)", plural(len(r.Secrets), "secret file"), firstFew(r.Secrets)))
	}
	if len(r.Credentials) > 0 {
		names := make([]string, len(r.Credentials))
		for i, c := range r.Credentials {
			names[i] = c.Path + ": " + c.Rule
		}
		parts = append(parts, fmt.Sprintf("%s holding a credential (%s; if it is a fake, [sandbox] include_secrets lets it in)",
			plural(len(r.Credentials), "file"), firstFew(names)))
	}
	if len(r.TooLarge) > 0 {
		names := make([]string, len(r.TooLarge))
		for i, f := range r.TooLarge {
			names[i] = fmt.Sprintf("%s %s", f.Path, FormatBytes(f.Size))
		}
		parts = append(parts, fmt.Sprintf("%d over [sandbox] max_file_size (%s)", len(r.TooLarge), firstFew(names)))
	}
	if len(r.Links) > 0 {
		names := make([]string, len(r.Links))
		for i, l := range r.Links {
			names[i] = fmt.Sprintf("%s -> %s: %s", l.Path, l.Target, l.Reason)
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", plural(len(r.Links), "symlink"), firstFew(names)))
	}
	if len(r.Special) > 0 {
		parts = append(parts, fmt.Sprintf("%d sockets/devices/pipes (%s)", len(r.Special), firstFew(r.Special)))
	}
	if len(parts) == 0 {
		return "nothing left out"
	}
	return "left out: " + strings.Join(parts, "; ")
}

// Lines lists every skipped path with its reason, for the run log and
// debug logging.
func (r SkipReport) Lines() []string {
	var out []string
	for _, d := range r.IgnoredDirs {
		out = append(out, "ignored directory (not entered): "+d+"/")
	}
	if r.IgnoredFiles > 0 {
		out = append(out, fmt.Sprintf("ignored files: %d", r.IgnoredFiles))
	}
	for _, p := range r.Excluded {
		out = append(out, "excluded by [sandbox] exclude: "+p)
	}
	for _, p := range r.Secrets {
		out = append(out, "secret file, not synced: "+p)
	}
	for _, c := range r.Credentials {
		out = append(out, "holds a credential ("+c.Rule+"), not synced: "+c.Path)
	}
	for _, f := range r.TooLarge {
		out = append(out, fmt.Sprintf("over [sandbox] max_file_size: %s (%s)", f.Path, FormatBytes(f.Size)))
	}
	for _, l := range r.Links {
		out = append(out, fmt.Sprintf("symlink left out: %s -> %s (%s)", l.Path, l.Target, l.Reason))
	}
	for _, p := range r.Special {
		out = append(out, "not a regular file: "+p)
	}
	return out
}

// plural is "1 file", "2 files", "3 directories".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	if strings.HasSuffix(one, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(one, "y"))
	}
	return fmt.Sprintf("%d %ss", n, one)
}

func firstFew(names []string) string {
	const n = 3
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(", and %d more", len(names)-n)
}

// FormatBytes renders a byte count for people: "312 B", "4.2 MB".
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// SnapshotDir takes a snapshot of the workspace at root: what git
// considers the project — tracked files, plus untracked files no
// .gitignore (at any level), .git/info/exclude or core.excludesFile
// ignores; outside git, .gitignore files still apply — adjusted by
// opts.Include/Exclude, without secret files. Ignored directories are not
// entered. Symlinks that resolve inside the workspace are kept as
// symlinks; others are left out and listed in Skipped. Every file taken in
// is read once to hash it; contents stay on disk ([File.Bytes]).
//
// The workspace's git is never run (see gitrepo.go).
func SnapshotDir(root string, opts *SnapshotOptions) (*Snapshot, error) {
	o := SnapshotOptions{}
	if opts != nil {
		o = *opts
	}
	if o.MaxTotalSize == 0 {
		o.MaxTotalSize = DefaultMaxTotalSize
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", root, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", root, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("snapshot %s: not a directory", root)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", root, err)
	}
	w := &walker{o: o, root: abs, real: real, snap: &Snapshot{Root: abs, Files: map[string]File{}, GeneratedDirs: slices.Clone(o.GeneratedDirs), dirs: map[string]time.Time{}}}
	w.setup()
	// the rules that do not come from the workspace's own .gitignore files
	w.snap.ignore = &Ignore{prefix: w.ig.prefix, rules: append([]ignoreRule(nil), w.ig.rules...)}
	if err := w.walk("", false); err != nil {
		return nil, err
	}
	if err := w.checkTotal(); err != nil {
		return nil, err
	}
	if err := w.hashAll(); err != nil {
		return nil, err
	}
	w.dropCredentials()
	w.dropLinksToMissing()
	sort.Strings(w.snap.Skipped.IgnoredDirs)
	w.snap.admit = w.admits
	w.snap.scan, w.snap.secretOK = w.o.ScanSecret, w.secretsOK.Ignored
	return w.snap, nil
}

type walker struct {
	o          SnapshotOptions
	root, real string
	snap       *Snapshot
	ig         *Ignore // gitignore rules, repository-relative (ig.prefix)
	include    *Ignore
	exclude    *Ignore
	secretsOK  *Ignore
	tracked    map[string]bool // repository-relative paths in the index
	trackedDir map[string]bool // directories holding tracked files
	total      int64
	linkTo     map[string]string // kept symlink -> workspace-relative path it resolves to
}

func patterns(list []string) *Ignore {
	ig := &Ignore{}
	for _, p := range list {
		ig.AddPatterns("", p)
	}
	return ig
}

// setup loads the ignore rules and the index of the repository holding
// the workspace, if any.
func (w *walker) setup() {
	w.ig = &Ignore{}
	w.include, w.exclude, w.secretsOK = patterns(w.o.Include), patterns(w.o.Exclude), patterns(w.o.IncludeSecrets)
	repo, ok := gitrepo.Find(w.root)
	if !ok {
		return
	}
	prefix, inside := relTo(repo.WorkTree, w.root)
	if !inside {
		return
	}
	w.snap.Git = &GitInfo{Remote: gitrepo.PublicURL(repo.RemoteURL())}
	w.ig.prefix = prefix
	if ex := repo.ExcludesFile(); ex != "" {
		if data, err := gitrepo.ReadSmall(ex, 1<<20); err == nil {
			w.ig.AddPatterns("", string(data))
		}
	}
	if data, err := gitrepo.ReadSmall(filepath.Join(repo.Common, "info", "exclude"), 1<<20); err == nil {
		w.ig.AddPatterns("", string(data))
	}
	// .gitignore files of the directories between the repository's top and
	// the workspace
	if prefix != "" {
		dirs := strings.Split(prefix, "/")
		for i := 0; i < len(dirs); i++ {
			base := strings.Join(dirs[:i], "/")
			if data, err := gitrepo.ReadSmall(filepath.Join(repo.WorkTree, filepath.FromSlash(base), ".gitignore"), 1<<20); err == nil {
				w.ig.AddPatterns(base, string(data))
			}
		}
	}
	tracked, err := repo.TrackedFiles()
	if err != nil {
		// An index this reader does not understand: go on with the ignore
		// rules alone (tracked-but-ignored files are then left out).
		tracked = map[string]bool{}
	}
	w.tracked, w.trackedDir = tracked, map[string]bool{}
	for p := range tracked {
		for d := path.Dir(p); d != "." && !w.trackedDir[d]; d = path.Dir(d) {
			w.trackedDir[d] = true
		}
	}
}

// full is a workspace path as the repository sees it.
func (w *walker) full(rel string) string {
	if w.ig.prefix == "" || rel == "" {
		return w.ig.prefix + rel
	}
	return w.ig.prefix + "/" + rel
}

// walk reads directory dir (workspace-relative, "" = root). inIgnored is
// true below an ignored directory entered only for its tracked or
// included files.
func (w *walker) walk(dir string, inIgnored bool) error {
	abs := filepath.Join(w.root, filepath.FromSlash(dir))
	entries, err := os.ReadDir(abs)
	if err != nil {
		return unreadable(dir, err)
	}
	if st, err := os.Stat(abs); err == nil {
		key := dir
		if key == "" {
			key = "."
		}
		w.snap.dirs[key] = st.ModTime()
	}
	if data, err := gitrepo.ReadSmall(filepath.Join(abs, ".gitignore"), 1<<20); err == nil {
		w.ig.AddPatterns(w.full(dir), string(data))
	}
	for _, e := range entries {
		rel := e.Name()
		if dir != "" {
			rel = dir + "/" + rel
		}
		if err := w.entry(rel, e, inIgnored); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) entry(rel string, e fs.DirEntry, inIgnored bool) error {
	isDir := e.IsDir()
	if alwaysSkipped[e.Name()] && (isDir || e.Name() == ".git") || isDir && slices.Contains(w.o.SkipDirs, e.Name()) {
		if !isDir && e.Type().IsRegular() {
			w.snap.Skipped.GitFiles = append(w.snap.Skipped.GitFiles, rel)
		}
		return nil
	}
	if w.exclude.Match(rel, isDir) {
		w.snap.Skipped.Excluded = append(w.snap.Skipped.Excluded, rel)
		return nil
	}
	full := w.full(rel)
	ignored := inIgnored || w.ig.Match(rel, isDir) // Match prepends the prefix
	if isDir {
		if ignored && !w.trackedDir[full] && w.include.Len() == 0 {
			w.snap.Skipped.IgnoredDirs = append(w.snap.Skipped.IgnoredDirs, rel)
			return nil
		}
		return w.walk(rel, ignored)
	}
	if ignored && !w.tracked[full] && !w.include.Ignored(rel) { // Ignored: rel or a parent matches
		w.snap.Skipped.IgnoredFiles++
		return nil
	}
	if w.o.IsSecret != nil && w.o.IsSecret(rel) && !w.secretsOK.Ignored(rel) && w.holdsSecret(rel, e) {
		w.snap.Skipped.Secrets = append(w.snap.Skipped.Secrets, rel)
		return nil
	}
	switch t := e.Type(); {
	case t&fs.ModeSymlink != 0:
		return w.link(rel)
	case !t.IsRegular():
		w.snap.Skipped.Special = append(w.snap.Skipped.Special, rel)
		return nil
	}
	info, err := e.Info()
	if err != nil {
		return unreadable(rel, err)
	}
	if w.o.MaxFileSize > 0 && info.Size() > w.o.MaxFileSize {
		w.snap.Skipped.TooLarge = append(w.snap.Skipped.TooLarge, SizedPath{rel, info.Size()})
		return nil
	}
	w.total += info.Size()
	w.snap.Files[rel] = File{Mode: info.Mode().Perm(), size: info.Size(), mtime: info.ModTime(), disk: &diskSource{root: w.root, rel: rel}}
	return nil
}

// admits reports whether a file not on disk at rel (an editor buffer)
// would have been taken in.
func (w *walker) admits(rel string) bool {
	if _, err := CleanRel(rel); err != nil || w.exclude.Ignored(rel) {
		return false
	}
	for _, seg := range strings.Split(rel, "/") {
		if alwaysSkipped[seg] || slices.Contains(w.o.SkipDirs, seg) {
			return false
		}
	}
	if w.ig.Ignored(rel) && !w.include.Ignored(rel) {
		return false
	}
	if _, ok := w.snap.credentials[rel]; ok && !w.secretsOK.Ignored(rel) {
		return false
	}
	return w.o.IsSecret == nil || !w.o.IsSecret(rel) || w.secretsOK.Ignored(rel)
}

// dropCredentials leaves out the files hashAll found a credential in,
// unless IncludeSecrets lets them in.
func (w *walker) dropCredentials() {
	for _, rel := range slices.Sorted(maps.Keys(w.snap.credentials)) {
		if w.secretsOK.Ignored(rel) {
			continue
		}
		w.total -= w.snap.Files[rel].size
		delete(w.snap.Files, rel)
		w.snap.Skipped.Credentials = append(w.snap.Skipped.Credentials, CredentialFile{Path: rel, Rule: w.snap.credentials[rel]})
	}
}

// holdsSecret asks HoldsSecret about a regular file; anything else that
// IsSecret flagged is a secret.
func (w *walker) holdsSecret(rel string, e fs.DirEntry) bool {
	if w.o.HoldsSecret == nil || !e.Type().IsRegular() {
		return true
	}
	head, err := gitrepo.ReadSmall(filepath.Join(w.root, filepath.FromSlash(rel)), 64<<10)
	return err != nil || w.o.HoldsSecret(rel, head)
}

// link keeps a symlink whose target resolves inside the workspace.
func (w *walker) link(rel string) error {
	abs := filepath.Join(w.root, filepath.FromSlash(rel))
	target, err := os.Readlink(abs)
	if err != nil {
		return unreadable(rel, err)
	}
	skip := func(reason string) error {
		w.snap.Skipped.Links = append(w.snap.Skipped.Links, SkippedLink{Path: rel, Target: target, Reason: reason})
		return nil
	}
	resolved, err := filepath.EvalSymlinks(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return skip("dangling")
	case err != nil && strings.Contains(err.Error(), "too many links"):
		return skip("a symlink loop")
	case err != nil:
		return skip(err.Error())
	}
	inside, ok := relTo(w.real, resolved)
	if !ok || inside == "" {
		return skip("leaves the workspace")
	}
	// Keep the link text when it is relative and stays inside the
	// workspace by itself; otherwise (absolute, or climbing through other
	// links) point straight at the resolved target, which is where it
	// leads on the host too.
	text := filepath.ToSlash(target)
	if filepath.IsAbs(target) || !lexicallyInside(path.Dir(rel), text) {
		text, err = filepath.Rel(filepath.Dir(filepath.FromSlash(rel)), filepath.FromSlash(inside))
		if err != nil {
			return skip(err.Error())
		}
		text = filepath.ToSlash(text)
	}
	w.snap.Files[rel] = File{Link: text}
	if w.linkTo == nil {
		w.linkTo = map[string]string{}
	}
	w.linkTo[rel] = filepath.ToSlash(inside)
	return nil
}

// dropLinksToMissing leaves out kept symlinks whose target the snapshot
// does not hold (.git, an ignored, excluded or secret path): in the
// sandbox they would dangle, and test runners that walk the tree (node
// --test, pytest) stop on a dangling link.
func (w *walker) dropLinksToMissing() {
	if len(w.linkTo) == 0 {
		return
	}
	dirs := map[string]bool{}
	for p, f := range w.snap.Files {
		if f.IsLink() {
			continue
		}
		for d := path.Dir(p); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(w.linkTo)) {
		target := w.linkTo[rel]
		if f, ok := w.snap.Files[target]; (ok && !f.IsLink()) || dirs[target] {
			continue
		}
		text := w.snap.Files[rel].Link
		delete(w.snap.Files, rel)
		w.snap.Skipped.Links = append(w.snap.Skipped.Links, SkippedLink{Path: rel, Target: text,
			Reason: "its target " + target + " is not in the sandbox"})
	}
}

// lexicallyInside reports whether target, relative to directory dir (both
// workspace-relative), names a path inside the workspace.
func lexicallyInside(dir, target string) bool {
	j := path.Join(dir, target)
	return j != ".." && !strings.HasPrefix(j, "../") && !path.IsAbs(j)
}

func unreadable(rel string, err error) error {
	if rel == "" {
		rel = "."
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("snapshot: cannot read %s: %w; make it readable, or leave it out with [sandbox] exclude = [%q] in .fixpoint.toml (or a .gitignore line)", rel, err, rel)
}

// hashAll reads every file once to record its hash. Files are streamed,
// never held; a few run at once, since with many small files the time goes
// into waiting for the disk. All workers exit before it returns.
func (w *walker) hashAll() error {
	type job struct {
		rel  string
		sum  [sha256.Size]byte
		n    int64
		rule string // the credential ScanSecret found
	}
	var jobs []job
	for rel, f := range w.snap.Files {
		if f.disk != nil {
			jobs = append(jobs, job{rel: rel})
		}
	}
	const workers = 4
	errs := make([]error, len(jobs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 64<<10)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) {
					return
				}
				j := &jobs[i]
				var sc SecretScanner
				if w.o.ScanSecret != nil {
					sc = w.o.ScanSecret(j.rel)
				}
				sum, n, err := hashFile(filepath.Join(w.root, filepath.FromSlash(j.rel)), buf, sc)
				if err != nil {
					errs[i] = unreadable(j.rel, err)
					next.Store(int64(len(jobs))) // stop the others early
					return
				}
				j.sum, j.n = sum, n
				if sc != nil {
					j.rule = sc.Rule()
				}
			}
		}()
	}
	wg.Wait()
	for i, j := range jobs {
		if errs[i] != nil {
			return errs[i]
		}
		f := w.snap.Files[j.rel]
		f.sum, f.hasSum, f.size = j.sum, true, j.n
		w.snap.Files[j.rel] = f
		if j.rule != "" {
			if w.snap.credentials == nil {
				w.snap.credentials = map[string]string{}
			}
			w.snap.credentials[j.rel] = j.rule
		}
	}
	return nil
}

// hashFile hashes the file at p, writing its contents to sc too when sc
// is not nil.
func hashFile(p string, buf []byte, sc SecretScanner) ([sha256.Size]byte, int64, error) {
	var sum [sha256.Size]byte
	fh, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return sum, 0, err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil || !st.Mode().IsRegular() { // replaced since the walk
		return sum, 0, &fs.PathError{Op: "read", Path: p, Err: errors.New("no longer a regular file")}
	}
	h := sha256.New()
	var dst io.Writer = h
	if sc != nil {
		dst = io.MultiWriter(h, sc)
	}
	n, err := io.CopyBuffer(dst, struct{ io.Reader }{fh}, buf) // hide WriteTo: it would allocate a buffer per file
	if err != nil {
		return sum, 0, &fs.PathError{Op: "read", Path: p, Err: err}
	}
	copy(sum[:], h.Sum(nil))
	return sum, n, nil
}

// checkTotal fails with ErrTooLarge, naming the biggest directories and
// files and the settings that fix it.
func (w *walker) checkTotal() error {
	if w.o.MaxTotalSize < 0 || w.total <= w.o.MaxTotalSize {
		return nil
	}
	dirs := map[string]int64{}
	var files []SizedPath
	for rel, f := range w.snap.Files {
		files = append(files, SizedPath{rel, f.size})
		if i := strings.IndexByte(rel, '/'); i > 0 {
			dirs[rel[:i]+"/"] += f.size
		}
	}
	var tops []SizedPath
	for d, n := range dirs {
		tops = append(tops, SizedPath{d, n})
	}
	bySize := func(s []SizedPath) {
		sort.Slice(s, func(i, j int) bool {
			if s[i].Size != s[j].Size {
				return s[i].Size > s[j].Size
			}
			return s[i].Path < s[j].Path
		})
	}
	bySize(tops)
	bySize(files)
	name := func(s []SizedPath) string {
		var out []string
		for _, f := range s[:min(len(s), 5)] {
			out = append(out, fmt.Sprintf("%s (%s)", f.Path, FormatBytes(f.Size)))
		}
		return strings.Join(out, ", ")
	}
	msg := fmt.Sprintf("%v: %s in %d files is over the %s limit; biggest directories: %s; biggest files: %s. "+
		"Leave out what tests do not need with a .gitignore line or [sandbox] exclude = [\"dir/\"] in .fixpoint.toml, "+
		"or raise [sandbox] max_workspace_size",
		ErrTooLarge, FormatBytes(w.total), len(w.snap.Files), FormatBytes(w.o.MaxTotalSize), name(tops), name(files))
	return fmt.Errorf("snapshot %s: %w", w.root, &tooLargeError{msg: msg})
}

type tooLargeError struct{ msg string }

func (e *tooLargeError) Error() string { return e.msg }
func (e *tooLargeError) Unwrap() error { return ErrTooLarge }

// relTo returns p relative to base in slash form, or "", false when p is
// not inside base.
func relTo(base, p string) (string, bool) {
	rel, err := filepath.Rel(base, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	return path.Clean("/" + rel)[1:], true
}
