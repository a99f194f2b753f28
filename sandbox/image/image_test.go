package image

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseSources(t *testing.T) {
	cases := []struct {
		name   string
		deb822 bool
		text   string
		want   []Source
	}{
		{
			name: "one-line",
			text: "# comment\ndeb http://ftp.fr.debian.org/debian bookworm main contrib\ndeb-src http://src.example bookworm main\ndeb [arch=amd64 signed-by=/k.gpg] http://security.debian.org/debian-security bookworm-security main\n",
			want: []Source{
				{URI: "http://ftp.fr.debian.org/debian", Suites: []string{"bookworm"}},
				{URI: "http://security.debian.org/debian-security", Suites: []string{"bookworm-security"}},
			},
		},
		{
			name:   "deb822",
			deb822: true,
			text: `Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://src.example/debian
Suites: bookworm

Types: deb
URIs: http://off.example/debian
Suites: bookworm
Enabled: no

Types: deb deb-src
URIs: http://a.example/debian
 http://b.example/debian
Suites: trixie
`,
			want: []Source{
				{URI: "http://deb.debian.org/debian", Suites: []string{"bookworm", "bookworm-updates"}},
				{URI: "http://a.example/debian", Suites: []string{"trixie"}},
				{URI: "http://b.example/debian", Suites: []string{"trixie"}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []Source
			if tc.deb822 {
				got = ParseDeb822([]byte(tc.text))
			} else {
				got = ParseSourcesList([]byte(tc.text))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parse = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestMachineMirror(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"none", nil, DefaultMirror},
		{"security only", map[string]string{"etc/apt/sources.list": "deb http://security.debian.org/debian-security bookworm-security main\n"}, DefaultMirror},
		{"sources.list", map[string]string{"etc/apt/sources.list": "deb http://ftp.de.debian.org/debian/ bookworm main\n"}, "http://ftp.de.debian.org/debian"},
		{"deb822", map[string]string{"etc/apt/sources.list.d/debian.sources": "Types: deb\nURIs: http://mirror.local/debian\nSuites: bookworm-updates bookworm\nComponents: main\n"}, "http://mirror.local/debian"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, text := range tc.files {
				p := filepath.Join(root, rel)
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(text), 0o644)
			}
			if got := MachineMirror(root); got != tc.want {
				t.Errorf("MachineMirror = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWriteTar(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "usr/bin"), 0o755)
	os.MkdirAll(filepath.Join(src, "usr/share/doc/pkg"), 0o755)
	os.MkdirAll(filepath.Join(src, "usr/share/man/man1"), 0o755)
	os.WriteFile(filepath.Join(src, "usr/bin/tool"), []byte("#!/bin/sh\n"), 0o755)
	os.Link(filepath.Join(src, "usr/bin/tool"), filepath.Join(src, "usr/bin/tool2"))
	os.Symlink("usr/bin", filepath.Join(src, "bin"))
	os.WriteFile(filepath.Join(src, "usr/share/doc/pkg/copyright"), []byte("c"), 0o644)
	os.WriteFile(filepath.Join(src, "usr/share/doc/pkg/changelog.gz"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(src, "usr/share/man/man1/tool.1"), []byte("m"), 0o644)
	os.MkdirAll(filepath.Join(src, "etc"), 0o755)
	os.WriteFile(filepath.Join(src, "etc/passwd"), []byte("root:x:0:0::/root:/bin/sh\n"), 0o644)
	os.WriteFile(filepath.Join(src, "etc/group"), []byte("root:x:0:\n"), 0o644)

	var buf bytes.Buffer
	entries, err := userEntries(src, Recipe{})
	if err != nil {
		t.Fatal(err)
	}
	err = writeTar(&buf, []tree{{Src: src, Skip: skipRootfs}}, entries)
	if !errors.Is(err, nil) {
		t.Fatal(err)
	}
	got := map[string]*tar.Header{}
	contents := map[string]string{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := got[h.Name]; dup {
			t.Errorf("duplicate entry %s", h.Name)
		}
		got[h.Name] = h
		data, _ := io.ReadAll(tr)
		contents[h.Name] = string(data)
	}
	for _, name := range []string{"usr/bin/tool", "usr/share/doc/pkg/copyright", "workspace/", "home/sandbox/", "etc/passwd"} {
		if got[name] == nil {
			t.Errorf("missing %s", name)
		}
	}
	for _, name := range []string{"usr/share/doc/pkg/changelog.gz", "usr/share/man/man1/tool.1"} {
		if got[name] != nil {
			t.Errorf("%s should be skipped", name)
		}
	}
	if h := got["usr/bin/tool2"]; h == nil || h.Typeflag != tar.TypeLink || h.Linkname != "usr/bin/tool" {
		t.Errorf("tool2 = %+v, want a hard link to usr/bin/tool", h)
	}
	if h := got["bin"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "usr/bin" {
		t.Errorf("bin = %+v, want a symlink to usr/bin", h)
	}
	if h := got["workspace/"]; h == nil || h.Uid != UID || h.Gid != GID {
		t.Errorf("workspace = %+v, want owned by %d:%d", h, UID, GID)
	}
	if !strings.Contains(contents["etc/passwd"], "sandbox:x:1000:1000:") || !strings.HasPrefix(contents["etc/passwd"], "root:") {
		t.Errorf("etc/passwd = %q, want root kept and the sandbox user added", contents["etc/passwd"])
	}
}

func TestProjectImageName(t *testing.T) {
	dir := t.TempDir()
	df := filepath.Join(dir, "Dockerfile")
	write := func(rel, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Dockerfile", "FROM scratch\n")
	write("req.txt", "a\n")
	generated := []string{"deps_out"} // as a language's lang.ProjectDirs would name it
	n1 := ProjectImageName(df, generated)
	if n1 != ProjectImageName(df, generated) || !strings.HasPrefix(n1, ProjectImagePrefix) {
		t.Fatalf("ProjectImageName = %q, not stable", n1)
	}
	// fixpoint's own directories never count, whatever the caller passes.
	write(".git/HEAD", "x")
	write(".fixpoint/state", "x")
	if ProjectImageName(df, generated) != n1 {
		t.Errorf(".git or .fixpoint changed the context hash")
	}
	// A generated directory the caller names is left out; one it does not
	// name is context (no language's list is built in here).
	write("deps_out/big.bin", "x")
	write("sub/deps_out/big.bin", "x")
	if got := ProjectImageName(df, generated); got != n1 {
		t.Errorf("ProjectImageName with %v skipped = %s, want %s: the named generated dirs changed it", generated, got, n1)
	}
	if ProjectImageName(df, nil) == n1 {
		t.Errorf("ProjectImageName(df, nil) = %s: an unnamed deps_out/ left out of the context", n1)
	}
	write("req.txt", "b\n")
	if ProjectImageName(df, generated) == n1 {
		t.Errorf("a context change kept the name %s", n1)
	}
}
