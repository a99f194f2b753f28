// Package cachedir keeps the per-project cache directories that sandboxes
// write under one root (the bwrap and none backends' Go build caches, the
// bwrap backend's dependency caches) within a total size.
//
// A cache directory belongs to a group named by its key: the directory
// names "<key>", "<key>-user", "<key>-model", "<key>-std" and "<key>.ok"
// all belong to the group <key> (a project's caches of every kind, a
// setup's cache and its marker), which is used and removed as one. A
// session that reads or writes a group's directories holds [Use] on the
// key for as long as it does: a shared lock (flock) on
// <root>/.locks/<key>.lock, whose modification time records the last
// use. [Prune] removes whole groups, least recently used first, while the
// root holds more than its cap; a group whose lock it cannot take at once
// (a session uses it) is kept, whatever its size.
//
// The locks are the kernel's (package flock): a process that dies
// releases them. Lock files of removed groups are unlinked while held,
// and Use checks that the file it locked is still the one at the path,
// so a session never holds the lock of a removed group's old file while
// a pruner holds the new one.
package cachedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fixpoint-dev/fixpoint/flock"
)

// DefaultMaxSize is the cap when the user sets none (sandbox.cache_size):
// the sum over the roots fixpoint prunes.
const DefaultMaxSize = 10 << 30

// EnvDir names the environment variable that, when set, holds every
// per-project cache root of the bwrap and none backends as its
// subdirectories (gocache, deps, gocache-host) instead of their defaults
// under /var/tmp or the user's cache directory. The test suite sets it to
// a temporary directory (Makefile).
const EnvDir = "FIXPOINT_CACHE_DIR"

// Root is the cache root named sub: under $FIXPOINT_CACHE_DIR when set,
// else def.
func Root(sub, def string) string {
	if d := os.Getenv(EnvDir); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, sub)
	}
	return def
}

// lockDir is the directory of a root's lock files, inside the root: no
// group's key starts with a dot.
const lockDir = ".locks"

// Key is the group a directory name under a root belongs to, and false
// for names that are not cache directories (dot files).
func Key(name string) (string, bool) {
	if name == "" || strings.HasPrefix(name, ".") {
		return "", false
	}
	for _, suffix := range []string{"-user", "-model", "-std", ".ok"} {
		if k, ok := strings.CutSuffix(name, suffix); ok && k != "" {
			return k, true
		}
	}
	return name, true
}

// Use marks the group key under root in use until release is called (or
// the process exits), and records the time as its last use. It waits
// while a Prune removes the group; the group's directories may then be
// gone, and the caller makes them again. key must be a name Key accepts.
func Use(root, key string) (release func(), err error) {
	if k, ok := Key(key); !ok || k != key || strings.ContainsRune(key, '/') {
		return nil, fmt.Errorf("cache key %q: not a cache group name", key)
	}
	dir, err := makeLockDir(root)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, key+".lock")
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("cache lock %s: %w", path, err)
		}
		if err := flock.Shared(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("cache lock %s: %w", path, err)
		}
		if !samePath(f, path) { // removed by a Prune while we waited
			f.Close()
			continue
		}
		now := time.Now()
		os.Chtimes(path, now, now)
		return func() {
			now := time.Now()
			os.Chtimes(path, now, now)
			f.Close() // releases the lock
		}, nil
	}
}

// makeLockDir makes root's lock directory (0700) and root when missing,
// as the backends make it: 0755 as root, whose sessions run as other uids
// that traverse it to their caches, else 0700.
func makeLockDir(root string) (string, error) {
	dir := filepath.Join(root, lockDir)
	perm := os.FileMode(0o700)
	if os.Geteuid() == 0 {
		perm = 0o755
	}
	if err := os.MkdirAll(root, perm); err != nil {
		return "", fmt.Errorf("cache root: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("cache lock directory: %w", err)
	}
	return dir, nil
}

// samePath reports whether the open file f is the file now at path.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// Group is one cache group under a root.
type Group struct {
	Root     string
	Key      string
	Dirs     []string // names under Root
	Size     int64    // bytes of regular files
	LastUsed time.Time
	InUse    bool // a session held it when Prune tried to remove it
}

// Report is what Prune found and did.
type Report struct {
	Before, After int64   // bytes under the roots
	Removed       []Group // least recently used first
	// KeptInUse are groups Prune would have removed but a session used.
	KeptInUse []Group
}

// Freed is the bytes the removed groups held.
func (r Report) Freed() int64 { return r.Before - r.After }

// Prune removes the least recently used groups under roots (taken
// together) while they hold more than max bytes, skipping the groups a
// session uses. A root that does not exist holds nothing. The error
// joins what could not be read or removed; the report is still valid.
func Prune(roots []string, max int64) (Report, error) {
	var rep Report
	var groups []*Group
	var errs []error
	for _, root := range roots {
		gs, err := list(root)
		if err != nil {
			errs = append(errs, err)
		}
		groups = append(groups, gs...)
	}
	for _, g := range groups {
		rep.Before += g.Size
	}
	rep.After = rep.Before
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].LastUsed.Before(groups[j].LastUsed) })
	for _, g := range groups {
		if rep.After <= max {
			break
		}
		removed, err := remove(g)
		if err != nil {
			errs = append(errs, err)
		}
		if !removed {
			g.InUse = err == nil
			if g.InUse {
				rep.KeptInUse = append(rep.KeptInUse, *g)
			}
			continue
		}
		rep.After -= g.Size
		rep.Removed = append(rep.Removed, *g)
	}
	return rep, errors.Join(errs...)
}

// Size is the bytes under roots that Prune counts.
func Size(roots []string) (int64, error) {
	var n int64
	var errs []error
	for _, root := range roots {
		gs, err := list(root)
		if err != nil {
			errs = append(errs, err)
		}
		for _, g := range gs {
			n += g.Size
		}
	}
	return n, errors.Join(errs...)
}

// list reads the groups under root with their sizes and last uses: the
// lock file's time when there is one, else the newest of the directories'
// own times and of Go's trim.txt (which go rewrites daily as it uses a
// cache).
func list(root string) ([]*Group, error) {
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cache root: %w", err)
	}
	byKey := map[string]*Group{}
	var out []*Group
	for _, e := range ents {
		key, ok := Key(e.Name())
		if !ok {
			continue
		}
		g := byKey[key]
		if g == nil {
			g = &Group{Root: root, Key: key}
			byKey[key] = g
			out = append(out, g)
			if st, err := os.Stat(filepath.Join(root, lockDir, key+".lock")); err == nil {
				g.LastUsed = st.ModTime()
			}
		}
		g.Dirs = append(g.Dirs, e.Name())
		p := filepath.Join(root, e.Name())
		g.Size += treeSize(p)
		for _, q := range []string{p, filepath.Join(p, "trim.txt")} {
			if st, err := os.Stat(q); err == nil && st.ModTime().After(g.LastUsed) {
				g.LastUsed = st.ModTime()
			}
		}
	}
	return out, nil
}

// removeTree removes p and everything under it. Go's module cache makes
// its directories read-only (0555), which stops a non-root user's
// RemoveAll at the first file in one ("permission denied"); so when
// RemoveAll fails, the directories under p are made writable by their
// owner and it is tried once more, as `go clean -modcache` does. A
// directory is opened with O_NOFOLLOW and changed through its descriptor,
// so a symbolic link in the tree (or one swapped in meanwhile) never
// makes it change the mode of anything outside.
func removeTree(p string) error {
	err := os.RemoveAll(p)
	if err == nil {
		return nil
	}
	filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Mode&0o700 != 0o700 {
			unix.Fchmod(fd, st.Mode&0o7777|0o700)
		}
		return nil
	})
	return os.RemoveAll(p)
}

// treeSize is the bytes of the regular files under p (p itself when it is
// one); unreadable parts count nothing.
func treeSize(p string) int64 {
	var n int64
	filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// remove removes g's directories when no session uses it: removed is
// false, with a nil error, when one does.
func remove(g *Group) (removed bool, err error) {
	dir, err := makeLockDir(g.Root)
	if err != nil {
		return false, err
	}
	path := filepath.Join(dir, g.Key+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("cache lock %s: %w", path, err)
	}
	defer f.Close()
	if err := flock.TryExclusive(f); err != nil {
		if errors.Is(err, flock.ErrLocked) {
			return false, nil
		}
		return false, fmt.Errorf("cache lock %s: %w", path, err)
	}
	if !samePath(f, path) { // another Prune removed it meanwhile
		return false, nil
	}
	// Ready markers go first (a "<key>.ok" sibling, a ".done" file one or
	// two levels down): a removal cut short (the process killed) leaves a
	// cache its users rebuild, never a half-removed one they trust.
	dirs := append([]string(nil), g.Dirs...)
	sort.SliceStable(dirs, func(i, j int) bool { return strings.HasSuffix(dirs[i], ".ok") && !strings.HasSuffix(dirs[j], ".ok") })
	for _, name := range dirs {
		for _, m := range []string{".done", "*/.done"} {
			found, _ := filepath.Glob(filepath.Join(g.Root, name, m))
			for _, f := range found {
				os.Remove(f)
			}
		}
	}
	var errs []error
	for _, name := range dirs {
		if err := removeTree(filepath.Join(g.Root, name)); err != nil {
			errs = append(errs, err)
		}
	}
	// Unlinked while held: a Use waiting on this file sees it is no longer
	// the one at the path and locks the new one.
	os.Remove(path)
	return len(errs) == 0, errors.Join(errs...)
}
