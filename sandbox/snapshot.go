package sandbox

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// File is one file of a snapshot.
type File struct {
	Data []byte
	Mode fs.FileMode // permission bits only; 0 means 0o644
}

// Snapshot is an immutable copy of a workspace's files, keyed by
// slash-separated paths relative to the workspace root. Copy-on-write: use
// [Snapshot.With] to derive a changed snapshot; never mutate Files.
type Snapshot struct {
	Root  string // absolute host path the snapshot was taken from, for messages only
	Files map[string]File
}

// SnapshotOptions bound what SnapshotDir reads. Zero values are defaults.
type SnapshotOptions struct {
	MaxFileSize  int64    // files larger than this are skipped; default 2 MiB
	MaxTotalSize int64    // error when exceeded; default 256 MiB
	SkipDirs     []string // directory names never entered; default .git, node_modules, .venv, __pycache__, .fixpoint
}

// ErrTooLarge is returned when a workspace exceeds SnapshotOptions.MaxTotalSize.
var ErrTooLarge = errors.New("workspace too large to snapshot")

var defaultSkipDirs = []string{".git", "node_modules", ".venv", "venv", "__pycache__", ".fixpoint", ".mypy_cache", ".pytest_cache"}

// SnapshotDir reads the workspace at root. Symlinks are not followed: a
// symlink is skipped, so nothing outside root can enter the snapshot.
func SnapshotDir(root string, opts *SnapshotOptions) (*Snapshot, error) {
	o := SnapshotOptions{}
	if opts != nil {
		o = *opts
	}
	if o.MaxFileSize == 0 {
		o.MaxFileSize = 2 << 20
	}
	if o.MaxTotalSize == 0 {
		o.MaxTotalSize = 256 << 20
	}
	if o.SkipDirs == nil {
		o.SkipDirs = defaultSkipDirs
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
	snap := &Snapshot{Root: abs, Files: map[string]File{}}
	var total int64
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != abs && contains(o.SkipDirs, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // symlinks, sockets, devices
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > o.MaxFileSize {
			return nil
		}
		total += info.Size()
		if total > o.MaxTotalSize {
			return fmt.Errorf("%w: more than %d bytes", ErrTooLarge, o.MaxTotalSize)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(abs, p)
		snap.Files[filepath.ToSlash(rel)] = File{Data: data, Mode: info.Mode().Perm()}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", root, err)
	}
	return snap, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// With returns a new snapshot with files replaced or added (a nil value
// deletes the path). The receiver is unchanged.
func (s *Snapshot) With(changes map[string][]byte) *Snapshot {
	out := &Snapshot{Root: s.Root, Files: make(map[string]File, len(s.Files)+len(changes))}
	for k, v := range s.Files {
		out.Files[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out.Files, k)
			continue
		}
		f := out.Files[k]
		f.Data = v
		out.Files[k] = f
	}
	return out
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

// Diff lists the paths that differ between s (old) and other (new).
func (s *Snapshot) Diff(other *Snapshot) (changed, deleted []string) {
	for k, nf := range other.Files {
		of, ok := s.Files[k]
		if !ok || !bytes.Equal(of.Data, nf.Data) || of.Mode != nf.Mode {
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
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00", k, f.Mode, len(f.Data))
		h.Write(f.Data)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Language guesses the workspace language: "go", "python", "node" or "".
func (s *Snapshot) Language() string {
	switch {
	case s.has("go.mod"):
		return "go"
	case s.has("package.json"):
		return "node"
	case s.has("pyproject.toml") || s.has("setup.cfg") || s.has("setup.py") || s.has("requirements.txt") || s.Has("*.py"):
		return "python"
	}
	return ""
}

func (s *Snapshot) has(rel string) bool { _, ok := s.Files[rel]; return ok }

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
