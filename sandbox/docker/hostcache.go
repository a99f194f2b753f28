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
)

// ensureHostCache offers a host cache directory (Go's module cache)
// read-only: its contents are copied once into a named volume
// ("fixpoint-<name>-<hash>", keyed by the directory and the names, sizes
// and times of its files) and reused by every later session while the
// cache is unchanged. Nothing is bind-mounted, so a remote engine works
// too.
func (b *Backend) ensureHostCache(ctx context.Context, image, name, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%s cache %s: %w", name, dir, err)
	}
	key, err := treeKey(abs)
	if err != nil {
		return "", fmt.Errorf("%s cache %s: %w", name, dir, err)
	}
	vol := "fixpoint-" + name + "-" + key[:16]
	fill := func() (io.Reader, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeTree(pw, abs)) }()
		return pr, nil
	}
	src := sha256.Sum256([]byte(abs))
	return vol, b.ensureVolume(ctx, image, vol, name+"cache", fmt.Sprintf("%x", src[:8]), fill)
}

// treeKey hashes a directory's listing (paths, sizes, modification times).
func treeKey(root string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", root)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
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
// readable by everyone (the sandbox runs as nobody).
func writeTree(w io.Writer, root string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
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
