package docker

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ensureHostCache offers a host cache directory (Go's module cache)
// read-only: its contents are copied once into a named volume
// ("fixpoint-<name>-<hash>", keyed by the directory and the names, sizes
// and times of its files) and reused by every later session while the
// cache is unchanged. Nothing is bind-mounted, so a remote engine works
// too.
func (b *Backend) ensureHostCache(ctx context.Context, image, name, dir string) (string, error) {
	return b.ensureHostTree(ctx, image, name, dir, nil)
}

// ensureHostTree is ensureHostCache leaving out the top-level entries
// skip names (a toolchain's documentation).
func (b *Backend) ensureHostTree(ctx context.Context, image, name, dir string, skip []string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%s cache %s: %w", name, dir, err)
	}
	key, err := treeKey(abs, skip)
	if err != nil {
		return "", fmt.Errorf("%s cache %s: %w", name, dir, err)
	}
	vol := "fixpoint-" + name + "-" + key[:16]
	fill := func() (io.Reader, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeTree(pw, abs, skip)) }()
		return pr, nil
	}
	src := sha256.Sum256([]byte(abs))
	return vol, b.ensureVolume(ctx, image, vol, name+"cache", fmt.Sprintf("%x", src[:8]), fill)
}

// skipped reports whether p, under root, is (in) a top-level entry skip
// names.
func skipped(root, p string, skip []string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return slices.Contains(skip, top)
}

// treeKey hashes a directory's listing (paths, sizes, modification times),
// the top-level entries skip names left out.
func treeKey(root string, skip []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%q\x00", root, skip)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skipped(root, p, skip) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", p, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil)), err
}

// writeTree writes root's regular files and directories as a tar stream,
// readable by everyone (the sandbox runs as nobody), the top-level entries
// skip names left out. Symlinks are left out, never followed.
func writeTree(w io.Writer, root string, skip []string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skipped(root, p, skip) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			return tw.WriteHeader(&tar.Header{Name: rel + "/", Typeflag: tar.TypeDir, Mode: 0o755})
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := tw.WriteHeader(&tar.Header{Name: rel, Typeflag: tar.TypeReg, Mode: 0o644 | int64(info.Mode().Perm()&0o111), Size: info.Size(), ModTime: info.ModTime()}); err != nil {
				return err
			}
			_, err = io.CopyN(tw, f, info.Size())
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
