package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// bulkWorkspace is a small project beside 300 MB of gitignored build
// output (sparse files: cheap to make, slow to read) and 10,000 small
// gitignored files.
func bulkWorkspace(b *testing.B) string {
	dir := b.TempDir()
	writeTree(b, dir, map[string]string{".gitignore": "dist/\n*.cache\n", "go.mod": "module m\n", "m.go": "package m\n"})
	if err := os.MkdirAll(filepath.Join(dir, "dist"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		f, err := os.Create(filepath.Join(dir, "dist", fmt.Sprintf("blob%d.bin", i)))
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Truncate(100 << 20); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	for i := 0; i < 10000; i++ {
		d := filepath.Join(dir, "gen", fmt.Sprintf("d%02d", i%100))
		os.MkdirAll(d, 0o755)
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.cache", i)), make([]byte, 200), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkSnapshotIgnoredBulk: the ignored bulk costs a directory walk,
// never a read (B/op stays far below the 300 MB).
func BenchmarkSnapshotIgnoredBulk(b *testing.B) {
	dir := bulkWorkspace(b)
	b.ReportAllocs()
	for b.Loop() {
		snap, err := SnapshotDir(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(snap.Files) != 3 || snap.Skipped.IgnoredFiles != 10000 {
			b.Fatalf("%d files, %d ignored", len(snap.Files), snap.Skipped.IgnoredFiles)
		}
	}
}

// BenchmarkSnapshotManyFiles: 10,000 files taken in (hashed, not held).
func BenchmarkSnapshotManyFiles(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < 10000; i++ {
		d := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%100))
		os.MkdirAll(d, 0o755)
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.go", i)), make([]byte, 2048), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SnapshotDir(dir, nil); err != nil {
			b.Fatal(err)
		}
	}
}
