package bwrap

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// hostTools binds the spec's host toolchain directories (sandbox.HostTool:
// rustup's ~/.rustup and ~/.cargo/bin) read-only at their own paths, so
// that the commands a native run finds on PATH are found here too. It
// returns bwrap's arguments, the directories to put first on PATH and
// the tools' environment.
//
// Run as root, every session has its own uid, which cannot traverse
// root's 0700 home: such a directory is offered through a mirror of hard
// links (no data is copied) under a directory every uid can traverse,
// keyed by the directory and its top-level listing; when no mirror can be
// made (another file system) it is left out with a warning.
func (b *Backend) hostTools(tools []sandbox.HostTool) (args, path, env []string) {
	for _, t := range tools {
		if t.Copy || !filepath.IsAbs(t.Dir) {
			// A Copy tool is docker's form of what the others offer here.
			continue
		}
		if st, err := os.Stat(t.Dir); err != nil || !st.IsDir() {
			continue
		}
		src := t.Dir
		if !reachable(src) {
			m, err := b.mirror(src)
			if err != nil {
				b.opts.Logger.Warn("bwrap sandbox: a host toolchain directory is not readable by the sandbox uid; it is not offered", "dir", t.Dir, "err", err)
				continue
			}
			src = m
		}
		args = append(args, "--ro-bind", src, t.Dir)
		if t.OnPath {
			path = append(path, t.Dir)
		}
		env = append(env, t.Env...)
	}
	return args, path, env
}

// mirrorBase holds the hard-link mirrors of unreachable tool directories.
const mirrorBase = "/var/tmp/fixpoint-hosttools"

// mirror returns a directory every uid can traverse whose files are hard
// links to dir's, made once per (dir, top-level listing).
func (b *Backend) mirror(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", dir)
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			continue
		}
		fmt.Fprintf(h, "%s %d %d\x00", e.Name(), info.Size(), info.ModTime().UnixNano())
	}
	dst := filepath.Join(mirrorBase, fmt.Sprintf("%x", h.Sum(nil)[:8]))
	if _, err := os.Stat(dst + ".ok"); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(mirrorBase, 0o755); err != nil {
		return "", err
	}
	if err := os.Chmod(mirrorBase, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(mirrorBase, ".tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			if rel == "." {
				return os.Chmod(tmp, 0o755)
			}
			return os.Mkdir(out, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, out)
		case d.Type().IsRegular():
			return os.Link(p, out)
		}
		return nil // sockets, pipes: not part of a toolchain
	})
	if err != nil {
		return "", fmt.Errorf("mirror %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dst); err != nil && !os.IsExist(err) && !strings.Contains(err.Error(), "directory not empty") {
		return "", err
	}
	if err := os.WriteFile(dst+".ok", nil, 0o644); err != nil {
		return "", err
	}
	return dst, nil
}
