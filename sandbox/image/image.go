// Package image builds fixpoint's sandbox images without a registry.
//
// The main types are [Recipe], which says what goes into one image
// (fixpoint-sandbox-<language>, one per registered language), and [Builder], which makes the
// images: debootstrap into a cached root filesystem (one per package set),
// then stream that tree, plus the host's Go toolchain for the go image and a
// few synthetic files (the "sandbox" user, /workspace), into `docker import`.
// Each image carries its recipe hash in the label [LabelRecipe], so a build
// whose inputs did not change is skipped. [BuildDockerfile] builds a
// project's own Dockerfile through the engine, cached by a content hash.
package image

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// Labels written on every image this package builds.
const (
	LabelRecipe = "fixpoint.recipe" // recipe hash (12 hex digits)
	LabelLang   = "fixpoint.lang"   // go, python, node, or "project"
)

// Sandbox user inside every image.
const (
	UID       = 1000
	GID       = 1000
	User      = "sandbox"
	Workspace = "/workspace"
	Home      = "/home/sandbox"
	// GoModCache is the module cache directory of the go image.
	GoModCache = "/go/pkg/mod"
	// GoRootInImage is where the host's GOROOT is copied in the go image.
	GoRootInImage = "/usr/local/go"
)

// builderVersion changes when the way images are assembled from a root
// filesystem changes, so that existing images are rebuilt; rootfsVersion
// changes when the way root filesystems are made changes (it costs a new
// debootstrap).
const (
	builderVersion = "3"
	rootfsVersion  = "2"
)

// basePackages go into every image: git, for test scripts that ask their
// repository (testrun.Runner.Git). Nothing else is every language's: an
// image carries its own language's tools ([lang.Image]: Python's image its
// python3, pytest and hypothesis), and one debootstrapped tree of these
// packages is shared by every image, each adding its Extra with apt-get.
// Nothing fixpoint runs in an image needs python3 there: the supervisor
// and the workspace sync are static Go, the Kubernetes network probe
// falls back to bash, and the policy parser runs on the host.
var basePackages = []string{"git"}

// Recipe describes one sandbox image.
type Recipe struct {
	Lang     string   // the language's name ("go")
	Name     string   // image name, e.g. fixpoint-sandbox-python
	Packages []string // Debian packages given to debootstrap --include
	// Extra packages are installed with apt-get on a copy of the Packages
	// tree: debootstrap's resolver cannot handle some dependency graphs
	// (npm's alternatives), apt-get can.
	Extra  []string
	GoRoot bool     // copy the host's GOROOT to /usr/local/go
	Env    []string // KEY=VALUE set in the image
	// GoCacheEnvs are the environments (over Env) the prebuilt Go build
	// cache also holds the standard library for ([lang.Image]).
	GoCacheEnvs [][]string
	// goCacheProg: the image's prebuilt Go build cache is read-only at
	// GoCacheImageDir behind GOCACHEPROG=GoCacheProg (GoRoot recipes
	// whose Go is GoCacheProgSupported; set by Build from the Inputs).
	goCacheProg bool
}

// ImageName returns the default image name for a language.
func ImageName(lang string) string { return defaultImagePrefix + lang }

const defaultImagePrefix = "fixpoint-sandbox-"

// ImageLang is the language whose default image img is (the inverse of
// ImageName); ok is false for any other image, a per-version one
// ("fixpoint-sandbox-node:20.11.1") included.
func ImageLang(img string) (lang string, ok bool) {
	name, ok := strings.CutPrefix(img, defaultImagePrefix)
	if !ok || name == "" || strings.ContainsAny(name, ":/@") {
		return "", false
	}
	return name, true
}

// RecipeFor returns the recipe of a language's default image: the base
// every image has (basePackages, LANG, HOME, PATH) plus what the
// language adds ([lang.Image]).
func RecipeFor(l lang.Language) Recipe {
	spec := l.Image()
	path := strings.Join(append(slices.Clone(spec.Path), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"), ":")
	env := []string{"LANG=C.UTF-8", "HOME=" + Home, "PATH=" + path}
	r := Recipe{
		Lang: l.Name(), Name: ImageName(l.Name()),
		Packages: append([]string(nil), basePackages...),
		Extra:    slices.Clone(spec.Extra),
		GoRoot:   spec.GoRoot,
		Env:      append(env, spec.Env...),
	}
	for _, e := range spec.GoCacheEnvs {
		r.GoCacheEnvs = append(r.GoCacheEnvs, slices.Clone(e))
	}
	sort.Strings(r.Packages)
	return r
}

// Inputs are the facts of this machine that a recipe's hash depends on.
type Inputs struct {
	Suite     string // Debian suite, e.g. bookworm
	Mirror    string // Debian mirror URL
	GoVersion string // content of $GOROOT/VERSION's first line; only for GoRoot recipes
}

// RootfsKey identifies the debootstrapped tree a recipe starts from: recipes
// with the same package set share it.
func (r Recipe) RootfsKey(in Inputs) string {
	base := shortHash("rootfs", rootfsVersion, in.Suite, in.Mirror, strings.Join(r.Packages, ","))
	if len(r.Extra) == 0 {
		return base
	}
	return shortHash("derived", base, strings.Join(r.Extra, ","))
}

// Hash is the recipe hash recorded in [LabelRecipe]. It is stable across
// runs and machines with the same inputs, and changes when anything that
// goes into the image changes.
func (r Recipe) Hash(in Inputs) string {
	parts := []string{"image", builderVersion, r.Name, r.RootfsKey(in), strings.Join(r.Env, "\n"), r.changesKey()}
	if r.GoRoot {
		parts = append(parts, "go="+in.GoVersion, r.goCacheKey())
	}
	return shortHash(parts...)
}

// goCacheKey is what the prebuilt Go build cache depends on besides the
// toolchain, the root filesystem and Env: how it is built
// (goCacheVersion) and for which environments.
func (r Recipe) goCacheKey() string {
	var envs []string
	for _, e := range r.GoCacheEnvs {
		envs = append(envs, strings.Join(e, " "))
	}
	return "gocache=" + goCacheVersion + ";" + strings.Join(envs, ";")
}

func (r Recipe) changesKey() string {
	return fmt.Sprintf("uid=%d gid=%d user=%s ws=%s", UID, GID, User, Workspace)
}

// Changes are the Dockerfile instructions given to `docker import --change`.
func (r Recipe) Changes(hash string) []string {
	// One label per LABEL instruction: Podman's import reads a LABEL line
	// as a single key=value, so "LABEL a=1 b=2" gave label a the value
	// "1 b=2" there (and the build failed its recipe check).
	ch := []string{
		fmt.Sprintf("LABEL %s=%s", LabelRecipe, hash),
		fmt.Sprintf("LABEL %s=%s", LabelLang, r.Lang),
	}
	if r.GoRoot {
		ch = append(ch, fmt.Sprintf("LABEL %s=%s", LabelGoCache, GoCacheDir))
	}
	ch = append(ch,
		fmt.Sprintf("USER %d:%d", UID, GID),
		"WORKDIR "+Workspace,
		`CMD ["/bin/sh"]`,
	)
	for _, e := range r.Env {
		k, v, _ := strings.Cut(e, "=")
		ch = append(ch, fmt.Sprintf("ENV %s=%s", k, v))
	}
	if r.goCacheProg {
		// Set in the image, not by a file of the workspace: the process
		// environment wins over a GOENV file (`go env -w`), and GOFLAGS
		// cannot name a GOCACHEPROG.
		ch = append(ch, "ENV GOCACHEPROG="+GoCacheProg)
	}
	return ch
}

func shortHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\x00", len(p), p)
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:12]
}

// HostSuite returns the Debian codename of the machine (from
// /etc/os-release under root), or "bookworm" when it is not Debian.
func HostSuite(root string) string {
	data, err := os.ReadFile(filepath.Join(root, "etc/os-release"))
	if err != nil {
		return "bookworm"
	}
	var id, code string
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, "=")
		v = strings.Trim(v, `"`)
		switch k {
		case "ID":
			id = v
		case "VERSION_CODENAME":
			code = v
		}
	}
	if id != "debian" || code == "" {
		return "bookworm"
	}
	return code
}

// GoVersion reads the first line of goroot/VERSION ("go1.26.8").
func GoVersion(goroot string) (string, error) {
	data, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		return "", fmt.Errorf("read go version: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(line), nil
}
