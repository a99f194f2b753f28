package image

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// LabelRuntime, on a per-version image, is "<runtime>@<version>".
const LabelRuntime = "fixpoint.runtime"

// runtimeRecipeVersion changes when the way per-version images are made
// changes, so that existing ones are rebuilt.
const runtimeRecipeVersion = "4"

// Runtimes builds per-version images: a language's default image with
// another runtime release layered on top, named "<default image>:<version>".
// The language says where its releases are published and what a release
// adds to the image ([lang.RuntimeSource]: Node from the npm registry, Go
// from the module proxy); Runtimes downloads, verifies and caches the
// release in CacheDir and builds the image. A language without a
// RuntimeSource (Python, Rust) has only the Debian release of its default
// image. Images carry their recipe hash and are reused while it holds.
type Runtimes struct {
	Client   *client.Client
	HTTP     *http.Client // nil = a client with a 10-minute timeout that honours HTTPS_PROXY
	CacheDir string       // "" = DefaultCacheDir
	// Getenv reads the source settings a language names
	// (RuntimeSource.SourceEnv: NPM_CONFIG_REGISTRY, GOPROXY); nil =
	// os.Getenv. An unset one means the public source.
	Getenv   func(string) string
	Progress io.Writer // nil = discard
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

// source is the language's configured source ("" = its public one).
func (rt *Runtimes) source(src lang.RuntimeSource) string {
	getenv := rt.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, k := range src.SourceEnv() {
		if v := getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// Releases lists the published releases of l's runtime. A language
// without a [lang.RuntimeSource] has none to offer: the error says that
// its runtime comes from Debian only.
func (rt *Runtimes) Releases(ctx context.Context, l lang.Language) ([]lang.Release, error) {
	src, ok := l.(lang.RuntimeSource)
	if !ok {
		return nil, fmt.Errorf("%s comes only from Debian %s: the image has one version", l.Name(), HostSuite("/"))
	}
	return src.Releases(ctx, rt.get, rt.source(src))
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

// RuntimeImage is the name of the per-version image of base at runtime
// version v ("fixpoint-sandbox-node:20.11.1"), as Ensure builds it.
func RuntimeImage(base string, v lang.Version) string { return base + ":" + v.String() }

// Ensure returns the image for l's runtime at release r, building it on
// top of base when missing or outdated.
func (rt *Runtimes) Ensure(ctx context.Context, l lang.Language, base string, r lang.Release) (string, error) {
	runtime := l.Name()
	src, ok := l.(lang.RuntimeSource)
	if !ok {
		return "", fmt.Errorf("no per-version images for %s", runtime)
	}
	baseImg, err := rt.Client.ImageInspect(ctx, base)
	if err != nil {
		return "", fmt.Errorf("per-version image needs %s: %w", base, err)
	}
	name := RuntimeImage(base, r.Version)
	hash := runtimeHash(runtime, r, baseImg.ID)
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
	layer, err := src.Layer(r, file)
	if err != nil {
		return "", err
	}
	var baseLabels map[string]string
	if baseImg.Config != nil {
		baseLabels = baseImg.Config.Labels
	}
	dockerfile, trees, files, err := layerContext(base, baseLabels, layer, l.Image().GoCacheEnvs)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", runtime, r.Version, err)
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
	tail := &sandbox.TailBuffer{Max: 4 << 10}
	if err := jsonmessage.DisplayJSONMessagesStream(resp.Body, tail, 0, false, nil); err != nil {
		return "", fmt.Errorf("build %s failed: %v\n%s", name, err, tail.String())
	}
	return name, nil
}

// runtimeHash is the recipe hash of a per-version image: the release and
// the base image it is layered on. The language's layer is not part of
// it; a change to what a language lays out bumps runtimeRecipeVersion.
func runtimeHash(runtime string, r lang.Release, baseID string) string {
	return shortHash("runtime", runtimeRecipeVersion, builderVersion, runtime, r.Version.String(), r.URL, r.SRI, baseID)
}

// layerContext turns a layer into the Dockerfile and build context of a
// per-version image on base: every file and tree is one context entry
// ("layer<i>") copied to its path, then one ENV line. A base whose labels
// name a prebuilt Go build cache (LabelGoCache) gets it refreshed by the
// layered toolchain, whose compiled packages differ from the base's, for
// the image's environment and each of goCacheEnvs.
func layerContext(base string, baseLabels map[string]string, l *lang.RuntimeLayer, goCacheEnvs [][]string) (dockerfile string, trees []tree, files []entry, err error) {
	var b strings.Builder
	b.WriteString("FROM " + base + "\n")
	n := 0
	copyTo := func(dst string) (string, error) {
		if !path.IsAbs(dst) || strings.ContainsAny(dst, " \t\n\"'\\") {
			return "", fmt.Errorf("layer path %q: want an absolute path without whitespace or quotes", dst)
		}
		name := fmt.Sprintf("layer%d", n)
		n++
		fmt.Fprintf(&b, "COPY %s %s\n", name, dst)
		return name, nil
	}
	for _, f := range l.Files {
		name, err := copyTo(f.Path)
		if err != nil {
			return "", nil, nil, err
		}
		files = append(files, entry{Name: name, Mode: int64(f.Mode.Perm()), Data: f.Data})
	}
	for _, t := range l.Trees {
		name, err := copyTo(t.Path)
		if err != nil {
			return "", nil, nil, err
		}
		trees = append(trees, tree{Src: t.Src, Dst: name, Root: true, Skip: t.Skip})
	}
	if len(l.Env) > 0 {
		for _, kv := range l.Env {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.ContainsAny(kv, " \t\n\"'\\") {
				return "", nil, nil, fmt.Errorf("layer env %q: want KEY=VALUE without whitespace or quotes", kv)
			}
		}
		b.WriteString("ENV " + strings.Join(l.Env, " ") + "\n")
	}
	if cache := baseLabels[LabelGoCache]; cache != "" {
		files = append(files, goWarmFiles()...)
		b.WriteString(goPrebuildStep(cache, goCacheEnvs))
	}
	return b.String(), trees, files, nil
}

func (rt *Runtimes) download(ctx context.Context, r lang.Release, file string) error {
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
