package golang

import (
	"archive/zip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
)

func TestReleases(t *testing.T) {
	list := strings.Join([]string{
		"v0.0.1-go1.22.12.linux-amd64",
		"v0.0.1-go1.22.12.darwin-arm64",
		"v0.0.1-go1.23rc1.linux-amd64",
		"v0.0.1-go1.21beta1.linux-amd64",
		"v0.0.1-go1.21.0.linux-amd64",
		"v0.0.1-gonext.linux-amd64",
		"v0.0.2-go1.30.0.linux-amd64",
	}, "\n") + "\n"
	tests := []struct {
		name, src, proxy string
	}{
		{"unset", "", PublicProxy},
		{"direct", "direct", PublicProxy},
		{"off", "off", PublicProxy},
		{"one proxy", "https://goproxy.example/", "https://goproxy.example"},
		{"list", "https://goproxy.example,direct", "https://goproxy.example"},
		{"fallback list", "https://goproxy.example|https://other.example", "https://goproxy.example"},
		{"direct first", "direct,https://goproxy.example", PublicProxy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotURL, gotAccept string
			get := func(_ context.Context, url, accept string) ([]byte, error) {
				gotURL, gotAccept = url, accept
				return []byte(list), nil
			}
			rels, err := Language{}.Releases(t.Context(), get, tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.proxy + "/golang.org/toolchain/@v/list"; gotURL != want || gotAccept != "" {
				t.Errorf("Releases(%q) fetched %q (Accept %q), want %q", tt.src, gotURL, gotAccept, want)
			}
			slices.SortFunc(rels, func(a, b lang.Release) int { return a.Version.Compare(b.Version) })
			at := tt.proxy + "/golang.org/toolchain/@v/"
			want := []lang.Release{
				{Version: lang.Version{Major: 1, Minor: 21}, URL: at + "v0.0.1-go1.21.0.linux-amd64.zip"},
				{Version: lang.Version{Major: 1, Minor: 22, Patch: 12}, URL: at + "v0.0.1-go1.22.12.linux-amd64.zip"},
			}
			if !slices.Equal(rels, want) {
				t.Errorf("Releases(%q) = %+v, want %+v (linux-amd64 only, no rc or beta)", tt.src, rels, want)
			}
		})
	}
	get := func(context.Context, string, string) ([]byte, error) { return nil, os.ErrDeadlineExceeded }
	if _, err := (Language{}).Releases(t.Context(), get, ""); err == nil || !strings.HasPrefix(err.Error(), "list go toolchains: ") {
		t.Errorf("Releases(unreachable) = %v, want an error starting %q", err, "list go toolchains: ")
	}
}

// toolchainZip writes a module zip with the given entries (name → content).
func toolchainZip(t *testing.T, file string, entries [][2]string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, e := range entries {
		w, err := zw.Create(e[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLayer(t *testing.T) {
	const mod = "golang.org/toolchain@v0.0.1-go1.22.12.linux-amd64/"
	file := filepath.Join(t.TempDir(), "go-1.22.12.zip")
	toolchainZip(t, file, [][2]string{
		{mod + "bin/go", "go binary"},
		{mod + "pkg/tool/linux_amd64/compile", "compiler"},
		{mod + "src/fmt/print.go", "package fmt"},
		{mod + "VERSION", "go1.22.12"},
	})
	r := lang.Release{Version: lang.Version{Major: 1, Minor: 22, Patch: 12}}
	l, err := Language{}.Layer(r, file)
	if err != nil {
		t.Fatal(err)
	}
	dir := strings.TrimSuffix(file, ".zip")
	if len(l.Files) != 0 || len(l.Trees) != 1 || l.Trees[0].Src != dir || l.Trees[0].Path != "/usr/local/go1.22.12" {
		t.Fatalf("Layer = %+v, want the unpacked tree %s at /usr/local/go1.22.12", l, dir)
	}
	wantEnv := []string{"GOROOT=/usr/local/go1.22.12", "PATH=/usr/local/go1.22.12/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if !slices.Equal(l.Env, wantEnv) {
		t.Errorf("Layer env = %q, want %q", l.Env, wantEnv)
	}
	if skip := l.Trees[0].Skip; skip == nil || !skip(".done") || skip("bin/go") {
		t.Errorf("Layer tree must skip the unpacking marker .done and nothing else")
	}
	for _, tt := range []struct {
		rel  string
		mode os.FileMode
		data string
	}{
		{"bin/go", 0o755, "go binary"},
		{"pkg/tool/linux_amd64/compile", 0o755, "compiler"},
		{"src/fmt/print.go", 0o644, "package fmt"},
		{"VERSION", 0o644, "go1.22.12"},
	} {
		p := filepath.Join(dir, filepath.FromSlash(tt.rel))
		st, err := os.Stat(p)
		if err != nil {
			t.Errorf("unpacked toolchain lacks %s: %v", tt.rel, err)
			continue
		}
		data, _ := os.ReadFile(p)
		if st.Mode().Perm() != tt.mode || string(data) != tt.data {
			t.Errorf("%s: mode %v content %q, want %v %q", tt.rel, st.Mode().Perm(), data, tt.mode, tt.data)
		}
	}
	// Unpacked once: a second Layer reuses the tree even when the zip is gone.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if _, err := (Language{}).Layer(r, file); err != nil {
		t.Errorf("second Layer unpacked again: %v", err)
	}
}

func TestLayerRejectsEscape(t *testing.T) {
	file := filepath.Join(t.TempDir(), "go-1.22.12.zip")
	toolchainZip(t, file, [][2]string{
		{"golang.org/toolchain@v0.0.1-go1.22.12.linux-amd64/bin/go", "go"},
		{"golang.org/toolchain@v0.0.1-go1.22.12.linux-amd64/../../../escaped", "x"},
	})
	_, err := Language{}.Layer(lang.Release{Version: lang.Version{Major: 1, Minor: 22, Patch: 12}}, file)
	if err == nil || !strings.Contains(err.Error(), "leaves the archive") {
		t.Errorf("Layer(zip with ../ entry) = %v, want an error saying the entry leaves the archive", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(file), "escaped")); err == nil {
		t.Errorf("an entry was written outside the unpacked tree")
	}
	if _, err := os.Stat(filepath.Join(strings.TrimSuffix(file, ".zip"), ".done")); err == nil {
		t.Errorf("a rejected toolchain was marked unpacked")
	}
}
