package golang

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// Go releases are the module proxy's golang.org/toolchain versions
// v0.0.1-go<version>.linux-amd64: what GOTOOLCHAIN downloads.

// PublicProxy is the module proxy used when GOPROXY names none.
const PublicProxy = "https://proxy.golang.org"

// SourceEnv is the module proxy setting.
func (Language) SourceEnv() []string { return []string{"GOPROXY"} }

// proxyOf is the first proxy of a GOPROXY list; PublicProxy when the list
// is empty or starts with "direct" or "off", which name no proxy.
func proxyOf(list string) string {
	first, _, _ := strings.Cut(list, ",")
	first, _, _ = strings.Cut(first, "|")
	first = strings.TrimSuffix(first, "/")
	if first == "" || first == "direct" || first == "off" {
		return PublicProxy
	}
	return first
}

// Releases lists the linux-amd64 toolchains on the first proxy of the
// GOPROXY list src, without release candidates and betas.
func (Language) Releases(ctx context.Context, get lang.Get, src string) ([]lang.Release, error) {
	proxy := proxyOf(src)
	data, err := get(ctx, proxy+"/golang.org/toolchain/@v/list", "")
	if err != nil {
		return nil, fmt.Errorf("list go toolchains: %w", err)
	}
	var out []lang.Release
	for _, line := range strings.Fields(string(data)) {
		rest, ok := strings.CutPrefix(line, "v0.0.1-go")
		if !ok || !strings.HasSuffix(rest, ".linux-amd64") {
			continue
		}
		ver := strings.TrimSuffix(rest, ".linux-amd64")
		if strings.ContainsAny(ver, "rcbeta") {
			continue
		}
		pv, err := lang.ParseVersion(ver)
		if err != nil {
			continue
		}
		out = append(out, lang.Release{Version: pv, URL: proxy + "/golang.org/toolchain/@v/" + line + ".zip"})
	}
	return out, nil
}

// Layer unpacks the toolchain's module zip (once, next to file) and puts
// it at /usr/local/go<version>, as GOROOT and first on the PATH.
func (Language) Layer(r lang.Release, file string) (*lang.RuntimeLayer, error) {
	dir, err := extractToolchain(file)
	if err != nil {
		return nil, err
	}
	goroot := "/usr/local/go" + r.Version.String()
	return &lang.RuntimeLayer{
		Trees: []lang.LayerTree{{Src: dir, Path: goroot, Skip: func(rel string) bool { return rel == doneMarker }}},
		Env:   []string{"GOROOT=" + goroot, "PATH=" + goroot + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
	}, nil
}

// doneMarker marks a completely unpacked toolchain.
const doneMarker = ".done"

// extractToolchain unpacks a golang.org/toolchain module zip next to it
// (once) and returns the GOROOT directory.
func extractToolchain(file string) (string, error) {
	dir := strings.TrimSuffix(file, ".zip")
	if _, err := os.Stat(filepath.Join(dir, doneMarker)); err == nil {
		return dir, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	zr, err := zip.OpenReader(file)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		// Entries are "golang.org/toolchain@v0.0.1-go1.27.4.linux-amd64/bin/go".
		at := strings.Index(f.Name, "@")
		if at < 0 {
			continue
		}
		_, rel, ok := strings.Cut(f.Name[at:], "/")
		if !ok || rel == "" || strings.HasSuffix(f.Name, "/") {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if !strings.HasPrefix(dst, dir+string(filepath.Separator)) {
			return "", fmt.Errorf("%s: entry %q leaves the archive", file, f.Name)
		}
		// Module zips carry no permission bits: GOTOOLCHAIN marks bin/ and
		// pkg/tool/ executable, and so does this.
		exe := strings.HasPrefix(rel, "bin/") || strings.HasPrefix(rel, "pkg/tool/")
		if err := extractFile(f, dst, exe); err != nil {
			return "", err
		}
	}
	return dir, os.WriteFile(filepath.Join(dir, doneMarker), nil, 0o644)
}

func extractFile(f *zip.File, dst string, exe bool) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if exe || f.Mode()&0o111 != 0 {
		mode = 0o755
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, rc); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
