package redact

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// netHTTP is about 1 MiB of Go source (the standard library's net/http).
func netHTTP(b *testing.B) string {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatalf("go env GOROOT: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(goroot)), "src", "net", "http", "*.go"))
	var sb strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		sb.Write(data)
		if sb.Len() > 1<<20 {
			break
		}
	}
	return sb.String()
}

// BenchmarkString redacts net/http's source, as a large prompt would be.
func BenchmarkString(b *testing.B) {
	src := netHTTP(b)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		String(src)
	}
}

// BenchmarkScanner detects credentials in net/http's source, as a
// snapshot does for every file it hashes.
func BenchmarkScanner(b *testing.B) {
	src := []byte(netHTTP(b))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		var s Scanner
		for p := src; len(p) > 0; {
			k := min(len(p), 64<<10)
			s.Write(p[:k])
			p = p[k:]
		}
		if f := s.Finding(); f != nil {
			b.Fatalf("net/http holds a %s: %q", f.Rule.ID, f.Secret)
		}
	}
}
