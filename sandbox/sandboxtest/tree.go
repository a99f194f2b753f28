package sandboxtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// CopyTree copies the directory src (a testdata project) into a new
// t.TempDir and returns it.
func CopyTree(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	return dst
}

// ReadTree reads every file under root, keyed by path, to prove later that
// a workspace was left untouched. Directories named in skip are not read.
func ReadTree(t testing.TB, root string, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && slices.Contains(skip, d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatalf("read %s: %v", root, err)
	}
	return out
}
