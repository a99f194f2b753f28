package redact

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkString redacts about 1 MiB of Go source (the standard library's
// net/http), as a large prompt would be.
func BenchmarkString(b *testing.B) {
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
	src := sb.String()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		String(src)
	}
}
