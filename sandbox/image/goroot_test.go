package image

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGoRoot: the GOROOT copied into the go image comes from the option,
// then from `go env GOROOT`, then from $GOROOT when it holds bin/go, and
// is an error otherwise (never the build machine's runtime.GOROOT).
func TestGoRoot(t *testing.T) {
	fake := t.TempDir() // a GOROOT with a bin/go, and a PATH with a go that prints it
	if err := os.MkdirAll(filepath.Join(fake, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, "bin", "go"), []byte("#!/bin/sh\necho "+fake+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	tests := []struct {
		name, opt, path, goroot string
		want                    string // "" = an error
	}{
		{name: "option wins", opt: "/opt/go", path: filepath.Join(fake, "bin"), goroot: empty, want: "/opt/go"},
		{name: "go env", path: filepath.Join(fake, "bin"), want: fake},
		{name: "GOROOT without go on PATH", path: empty, goroot: fake, want: fake},
		{name: "GOROOT without bin/go", path: empty, goroot: empty},
		{name: "nothing", path: empty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", tt.path)
			t.Setenv("GOROOT", tt.goroot)
			b := &Builder{opts: Options{GoRoot: tt.opt}}
			got, err := b.goRoot(t.Context())
			if tt.want == "" {
				if err == nil {
					t.Errorf("goRoot = %q, want an error", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("goRoot = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
