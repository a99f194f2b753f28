package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// File is one entry of a snapshot: a regular file, or a symlink (Link set)
// that stays inside the workspace.
//
// A file's contents are either held in memory (Data: editor overlays,
// model edits, snapshots built by tests) or read from the workspace on
// demand: SnapshotDir records only size, mode and hash, so a workspace is
// never held in memory. Always read contents with [File.Bytes] or
// [File.Open] (or [Snapshot.Read]); Data is nil for a file on disk.
type File struct {
	Data []byte      // contents held in memory; nil when read from disk on demand
	Mode fs.FileMode // permission bits only; 0 means 0o644
	// Link, when non-empty, makes the entry a symlink with this relative
	// target, which resolves inside the workspace. Data is then unused.
	Link string

	disk   *diskSource // where on-disk contents live; nil for in-memory files
	mtime  time.Time   // the file's modification time on disk; zero for in-memory files
	size   int64
	sum    [sha256.Size]byte
	hasSum bool
}

type diskSource struct {
	root string // absolute workspace root
	rel  string // slash-separated path below root
}

// ErrChanged is returned when a file read on demand no longer has the
// contents it had when the snapshot was taken.
var ErrChanged = errors.New("changed on disk since the snapshot was taken")

// ModTime is the modification time the file had on disk when the
// snapshot was taken; zero for contents held in memory (an editor buffer,
// a model edit), which a backend then writes with the current time.
// Backends give the sandbox's copy this time, so that tools keyed on
// modification times see an unchanged file as unchanged across sessions,
// as on the host: Go's test cache re-runs a test whose opened files' times
// differ.
func (f File) ModTime() time.Time {
	if f.Data != nil || f.Link != "" {
		return time.Time{}
	}
	return f.mtime
}

// IsLink reports whether the entry is a symlink.
func (f File) IsLink() bool { return f.Link != "" }

// Size is the length of the contents (of the target text for a link).
func (f File) Size() int64 {
	switch {
	case f.Link != "":
		return int64(len(f.Link))
	case f.disk != nil && f.Data == nil:
		return f.size
	}
	return int64(len(f.Data))
}

// Sum is the sha256 of the contents (of "link:"+target for a link).
func (f File) Sum() [sha256.Size]byte {
	switch {
	case f.Link != "":
		return sha256.Sum256([]byte("link:" + f.Link))
	case f.disk != nil && f.Data == nil && f.hasSum:
		return f.sum
	}
	return sha256.Sum256(f.Data)
}

// Hash is [File.Sum] in hex.
func (f File) Hash() string {
	s := f.Sum()
	return hex.EncodeToString(s[:])
}

// Bytes returns the contents. A file read from disk is checked against
// the size and hash the snapshot recorded ([ErrChanged] otherwise); the
// error names the file.
func (f File) Bytes() ([]byte, error) {
	if f.disk == nil || f.Data != nil || f.Link != "" {
		return f.Data, nil
	}
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	buf := make([]byte, 0, f.size)
	buf, err = readAllInto(buf, r)
	if err != nil {
		return nil, err
	}
	return buf, nil
}

func readAllInto(buf []byte, r io.Reader) ([]byte, error) {
	b := bytes.NewBuffer(buf)
	_, err := b.ReadFrom(r)
	return b.Bytes(), err
}

// Open streams the contents. For a file on disk, the reader returns an
// error wrapping [ErrChanged] at the end if the contents differ from the
// snapshot's record; callers must check the error of the last Read.
func (f File) Open() (io.ReadCloser, error) {
	if f.disk == nil || f.Data != nil || f.Link != "" {
		return io.NopCloser(bytes.NewReader(f.Data)), nil
	}
	root, err := os.OpenRoot(f.disk.root)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.disk.rel, err)
	}
	defer root.Close()
	fh, err := root.OpenFile(filepath.FromSlash(f.disk.rel), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.disk.rel, err)
	}
	if st, err := fh.Stat(); err != nil || !st.Mode().IsRegular() {
		fh.Close()
		return nil, fmt.Errorf("read %s: %w (no longer a regular file)", f.disk.rel, ErrChanged)
	}
	return &checkedReader{f: fh, rel: f.disk.rel, want: f.sum, size: f.size, h: sha256.New()}, nil
}

// checkedReader hashes what it reads and fails at EOF when the contents
// are not what the snapshot recorded.
type checkedReader struct {
	f    *os.File
	rel  string
	want [sha256.Size]byte
	size int64
	n    int64
	h    interface {
		io.Writer
		Sum([]byte) []byte
	}
}

func (c *checkedReader) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	c.n += int64(n)
	c.h.Write(p[:n])
	if c.n > c.size {
		return n, fmt.Errorf("read %s: %w (it grew)", c.rel, ErrChanged)
	}
	if err == io.EOF && (c.n != c.size || !bytes.Equal(c.h.Sum(nil), c.want[:])) {
		return n, fmt.Errorf("read %s: %w", c.rel, ErrChanged)
	}
	if err != nil && err != io.EOF {
		err = fmt.Errorf("read %s: %w", c.rel, err)
	}
	return n, err
}

func (c *checkedReader) Close() error { return c.f.Close() }

// Snapshot is an immutable view of a workspace's files, keyed by
// slash-separated paths relative to the workspace root. Copy-on-write: use
// [Snapshot.With] to derive a changed snapshot; never mutate Files.
type Snapshot struct {
	Root  string // absolute host path the snapshot was taken from, for messages only
	Files map[string]File
	// Skipped lists what SnapshotDir left out and why.
	Skipped SkipReport
	// Git is set when the workspace is in a git repository: what a test
	// script may need of it in the sandbox (testrun.Runner.Git). Nothing of
	// the repository's own .git enters the sandbox.
	Git *GitInfo
	// GeneratedDirs are the directory names the languages' tools make
	// (SnapshotOptions.GeneratedDirs), which a project Dockerfile's build
	// context leaves out; nil for a snapshot not read from disk.
	GeneratedDirs []string

	dirs map[string]time.Time // modification times of the directories SnapshotDir walked ("." is the root); never mutated
	// credentials are the files SnapshotDir found a credential in (path →
	// rule), left out or let in by IncludeSecrets; never mutated
	credentials map[string]string
	scan        func(rel string) SecretScanner // SnapshotOptions.ScanSecret
	secretOK    func(rel string) bool          // IncludeSecrets matches rel
	ignore      *Ignore                        // rules from outside the workspace's .gitignore files (info/exclude, core.excludesFile, parent directories)
	admit       func(rel string) bool          // SnapshotDir's verdict for a path it did not see; nil admits all
}

// GitInfo is what a sandbox's copy of a git workspace gets: an empty
// repository (`git init`, no hooks, no config beyond git's defaults) with
// remote "origin" set to Remote, the host repository's remote URL without
// credentials (gitrepo.PublicURL; "" = no remote).
type GitInfo struct {
	Remote string
}

// DirModTimes are the modification times the workspace's directories had
// on disk ("." is the root; nil for a snapshot not read from disk), which
// backends give the directories of the sandbox's copy after a sync: a Go
// test that reads a directory is cached on its time, as on the host. The
// map is shared: do not modify it.
func (s *Snapshot) DirModTimes() map[string]time.Time { return s.dirs }

// Read returns the contents of path p.
func (s *Snapshot) Read(p string) ([]byte, error) {
	f, ok := s.Files[p]
	if !ok {
		return nil, fmt.Errorf("read %s: %w", p, fs.ErrNotExist)
	}
	return f.Bytes()
}

// Text returns the contents of path p as a string, and false when the
// file is absent, a symlink, or cannot be read.
func (s *Snapshot) Text(p string) (string, bool) {
	f, ok := s.Files[p]
	if !ok || f.IsLink() {
		return "", false
	}
	b, err := f.Bytes()
	if err != nil {
		return "", false
	}
	return string(b), true
}

// With returns a new snapshot with files replaced or added (a nil value
// deletes the path). The receiver is unchanged. A replaced file keeps its
// mode and holds the new contents in memory.
func (s *Snapshot) With(changes map[string][]byte) *Snapshot {
	out := &Snapshot{Root: s.Root, Files: make(map[string]File, len(s.Files)+len(changes)), Skipped: s.Skipped, Git: s.Git, GeneratedDirs: s.GeneratedDirs, dirs: s.dirs, ignore: s.ignore, admit: s.admit,
		credentials: s.credentials, scan: s.scan, secretOK: s.secretOK}
	for k, v := range s.Files {
		out.Files[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out.Files, k)
			continue
		}
		out.Files[k] = File{Data: v, Mode: out.Files[k].Mode}
	}
	return out
}

// Credentials returns the files SnapshotDir found a credential in, path →
// rule: those it left out (Skipped.Credentials) and those IncludeSecrets
// let in. The map is shared: do not modify it.
func (s *Snapshot) Credentials() map[string]string { return s.credentials }

// WithOverlays is [Snapshot.With] for editor buffers: a buffer replaces a
// file of the snapshot, and adds a new one only where SnapshotDir would
// have taken a file in — an unsaved .env, a buffer under an ignored
// directory or one holding a credential (SnapshotOptions.ScanSecret)
// stays out of the sandbox. It returns the paths left out.
func (s *Snapshot) WithOverlays(overlays map[string][]byte) (*Snapshot, []string) {
	keep := make(map[string][]byte, len(overlays))
	var out []string
	for p, data := range overlays {
		if s.scan != nil && (s.secretOK == nil || !s.secretOK(p)) {
			sc := s.scan(p)
			sc.Write(data)
			if sc.Rule() != "" {
				out = append(out, p)
				continue
			}
		}
		if _, ok := s.Files[p]; ok || s.admit == nil || s.admit(p) {
			keep[p] = data
			continue
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return s.With(keep), out
}

// Paths returns the snapshot's paths, sorted.
func (s *Snapshot) Paths() []string {
	out := make([]string, 0, len(s.Files))
	for k := range s.Files {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Has reports whether any path has the given base name or suffix pattern
// (path.Match against the base name).
func (s *Snapshot) Has(pattern string) bool {
	for k := range s.Files {
		if ok, _ := path.Match(pattern, path.Base(k)); ok {
			return true
		}
	}
	return false
}

// same reports whether two entries have the same contents, kind and mode.
func same(a, b File) bool {
	if a.Mode != b.Mode || a.Link != b.Link || a.Size() != b.Size() {
		return false
	}
	if a.Link != "" {
		return true
	}
	if a.Data == nil && b.Data == nil && a.disk != nil && b.disk != nil && *a.disk == *b.disk {
		return a.sum == b.sum
	}
	return a.Sum() == b.Sum()
}

// Diff lists the paths that differ between s (old) and other (new).
func (s *Snapshot) Diff(other *Snapshot) (changed, deleted []string) {
	for k, nf := range other.Files {
		of, ok := s.Files[k]
		if !ok || !same(of, nf) {
			changed = append(changed, k)
		}
	}
	for k := range s.Files {
		if _, ok := other.Files[k]; !ok {
			deleted = append(deleted, k)
		}
	}
	sort.Strings(changed)
	sort.Strings(deleted)
	return changed, deleted
}

// Digest is a content hash of the whole snapshot.
func (s *Snapshot) Digest() string {
	h := sha256.New()
	for _, k := range s.Paths() {
		f := s.Files[k]
		sum := f.Sum()
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00%s\x00", k, f.Mode, f.Size(), f.Link)
		h.Write(sum[:])
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// IgnoreRules returns the gitignore rules of the snapshot: those of the
// .gitignore files it holds (edits included), over the repository's
// info/exclude and core.excludesFile when SnapshotDir found a repository.
// A tracked or [sandbox] include'd file can be in the snapshot and still
// be ignored.
func (s *Snapshot) IgnoreRules() *Ignore {
	ig := &Ignore{}
	if s.ignore != nil {
		ig.prefix = s.ignore.prefix
		ig.rules = append(ig.rules, s.ignore.rules...)
	}
	var files []string
	for k := range s.Files {
		if path.Base(k) == ".gitignore" {
			files = append(files, k)
		}
	}
	sort.Slice(files, func(i, j int) bool { // parents first: deeper files override
		di, dj := strings.Count(files[i], "/"), strings.Count(files[j], "/")
		return di < dj || di == dj && files[i] < files[j]
	})
	for _, k := range files {
		if text, ok := s.Text(k); ok {
			dir := path.Dir(k)
			if dir == "." {
				dir = ""
			}
			if ig.prefix != "" {
				dir = strings.Trim(ig.prefix+"/"+dir, "/")
			}
			ig.AddPatterns(dir, text)
		}
	}
	return ig
}

// CleanRel validates a workspace-relative path from an untrusted source and
// returns it cleaned. It rejects absolute paths, "..", empty paths, and
// backslashes.
func CleanRel(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, '\\') || strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("invalid path %q", p)
	}
	if path.IsAbs(p) || filepath.IsAbs(p) {
		return "", fmt.Errorf("absolute path %q is outside the workspace", p)
	}
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q is outside the workspace", p)
	}
	return c, nil
}
