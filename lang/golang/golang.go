// Package golang is fixpoint's knowledge of Go projects: the go.mod
// version requirement and `go mod download` as the setup step, with the
// module cache mounted read-only in test runs.
package golang

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
)

// ModCache is where the module cache lives in a sandbox.
const ModCache = "/gomodcache"

// Language is Go. The zero value is ready to use.
type Language struct{}

var (
	goLine        = regexp.MustCompile(`(?m)^go[ \t]+([0-9][0-9a-z.]*)[ \t]*(?://.*)?$`)
	toolchainLine = regexp.MustCompile(`(?m)^toolchain[ \t]+(go[0-9][0-9a-z.]*)[ \t]*(?://.*)?$`)
	requireLine   = regexp.MustCompile(`(?m)^require\b`)
	goVersionOut  = regexp.MustCompile(`go version go([0-9][0-9a-z.]*)`)
)

func (Language) Name() string { return "go" }
func (Language) Detect(snap *sandbox.Snapshot) bool {
	_, mod := snap.Files["go.mod"]
	_, work := snap.Files["go.work"]
	return mod || work
}
func (Language) VersionCommand() []string { return []string{"go", "version"} }

// DetectNested: go.mod files below a root without one (nested.go).
func (Language) DetectNested(snap *sandbox.Snapshot) bool { return len(nestedModules(snap)) > 0 }

// ParseVersion reads `go version` output ("go version go1.26.8 linux/amd64").
func (Language) ParseVersion(out string) (lang.Version, error) {
	m := goVersionOut.FindStringSubmatch(out)
	if m == nil {
		return lang.Version{}, fmt.Errorf("no Go version in %q", strings.TrimSpace(out))
	}
	return lang.ParseVersion(m[1])
}

// PickRelease picks the newest patch release of the oldest Go minor
// version the requirement allows.
func (Language) PickRelease(r lang.Range, published []lang.Version) (lang.Version, bool) {
	return r.Lowest(published, func(v lang.Version) lang.Version { return lang.Version{Major: v.Major, Minor: v.Minor} }, nil)
}

// Requirement is go.mod's `go` line, raised by its `toolchain` line: a Go
// toolchain builds any module whose go line is not newer than itself, so
// the requirement is a minimum, as GOTOOLCHAIN treats it.
func (Language) Requirement(snap *sandbox.Snapshot) (*lang.Requirement, error) {
	name := "go.mod"
	if d := nestedModule(snap); d != "" {
		name = path.Join(d, "go.mod")
	}
	f, ok := snap.Files[name]
	if !ok {
		// A workspace without a root module: go.work's go line.
		if f, ok = snap.Files["go.work"]; !ok {
			return nil, nil
		}
		name = "go.work"
	}
	m := goLine.FindSubmatch(lang.Contents(f))
	if m == nil {
		return nil, nil
	}
	v, err := lang.ParseVersion(string(m[1]))
	if err != nil {
		return nil, fmt.Errorf("%s: go line: %w", name, err)
	}
	req := &lang.Requirement{Runtime: "go", Constraint: ">= " + string(m[1]), Source: name + " (go " + string(m[1]) + ")"}
	if t := toolchainLine.FindSubmatch(lang.Contents(f)); t != nil {
		if tv, err := lang.ParseVersion(string(t[1])); err == nil && tv.Compare(v) > 0 {
			v = tv
			req.Constraint, req.Source = ">= "+strings.TrimPrefix(string(t[1]), "go"), name+" (toolchain "+string(t[1])+")"
		}
	}
	req.Range = lang.AtLeast(v)
	return req, nil
}

// SetupStep downloads the modules the main module's packages and tests
// need into the module cache, when go.mod (or a go.work member) requires
// any.
func (Language) SetupStep(snap *sandbox.Snapshot) *lang.Setup {
	if !requiresModules(snap) {
		return nil
	}
	flags := modFlags(snap)
	script := "go mod download && go list -e -deps -test ./... >/dev/null"
	if d := nestedModule(snap); d != "" {
		script = fmt.Sprintf("go -C %[1]s mod download && go -C %[1]s list -e -deps -test ./... >/dev/null", shellQuote(d))
	}
	if mods, patterns := workspaceModules(snap); len(mods) > 0 {
		// In workspace mode `go mod download` needs the member modules'
		// requirements; `go list` over every member fetches them all.
		script = "go list -e -deps -test " + strings.Join(patterns, " ") + " >/dev/null"
	}
	inputs := []string{"go.mod", "go.sum", "go.work", "go.work.sum"}
	if d := nestedModule(snap); d != "" {
		inputs = append(inputs, path.Join(d, "go.mod"), path.Join(d, "go.sum"))
	}
	if gowork, ok := snap.Text("go.work"); ok {
		for _, d := range workspaceUses(gowork) {
			inputs = append(inputs, path.Join(d, "go.mod"), path.Join(d, "go.sum"))
		}
	}
	return &lang.Setup{
		Name:   "go mod download",
		Script: script,
		Inputs: lang.InputsOf(snap, inputs...),
		Caches: []lang.Cache{{Name: "gomod", Path: ModCache}},
		// sum.golang.org is often unreachable behind a proxy: go.sum still
		// verifies every module it lists. GOFLAGS=-mod=mod lets go add
		// missing go.sum lines, as `go mod download` would.
		Env: []string{"GOMODCACHE=" + ModCache, "GOPROXY=https://proxy.golang.org,direct", "GOSUMDB=off",
			"GOFLAGS=" + flags, "GOTOOLCHAIN=local"},
		// A developer's module proxy and private modules (Go reads the
		// standard CA path itself).
		HostEnv: []string{"GOPROXY", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOSUMDB"},
		// Tests are offline: modules come from the cache the setup step
		// filled (and verified against go.sum), never from sum.golang.org.
		TestEnv: []string{"GOMODCACHE=" + ModCache, "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=" + flags, "GOTOOLCHAIN=local"},
	}
}

// RuntimeFix says how to get a version that satisfies req.
func (Language) RuntimeFix(req *lang.Requirement) string {
	return "fixpoint layers golang.org/toolchain releases from the Go module proxy onto fixpoint-sandbox-go when it can reach the proxy (with the docker backend); otherwise change " + req.Source + ", or set [sandbox] image to an image with a matching go"
}

// Image is the go image: the host's Go toolchain, the module cache and
// build cache where the docker backend mounts them, cgo off and no
// network for modules (they come from the setup step's cache). gcc and
// libc6-dev are there for modules that use cgo, whose tests run with
// CGO_ENABLED=1 (TestCommand).
func (Language) Image() lang.Image {
	return lang.Image{
		Extra:  []string{"gcc", "libc6-dev"},
		GoRoot: true,
		Path:   []string{image.GoRootInImage + "/bin"},
		Env: []string{
			"GOROOT=" + image.GoRootInImage,
			"GOMODCACHE=" + image.GoModCache,
			"GOCACHE=" + image.GoCacheDir,
			"GOPATH=/tmp/go",
			"CGO_ENABLED=0",
			"GOTOOLCHAIN=local",
			"GOPROXY=off",
			"GOFLAGS=-buildvcs=false",
		},
		// The test command's cgo default (TestCommand): with the image's
		// gcc, cgo is on, and a first run that imports net, net/http or
		// os/user would otherwise compile their cgo variants (and all
		// that imports them) before any test: 46 s instead of 17 s.
		GoCacheEnvs: [][]string{{cgoDefault}},
	}
}

// PropertyHint points at testing/quick and fuzz tests.
func (Language) PropertyHint() string {
	return "Where a property holds for all inputs, add a property-based test with testing/quick or a fuzz test with seeds."
}

// HostCaches offers the host's module cache ($GOMODCACHE, else
// $GOPATH/pkg/mod, else ~/go/pkg/mod, when that directory exists) at
// /gomodcache, resolved offline: modules the project needs that are not
// in it fail to resolve instead of being downloaded. A module whose
// go.mod requires nothing (and no go.work) needs no module: it gets no
// host cache, whose copy into a docker volume would cost as much as the
// host's whole module cache (hundreds of MB on a developer's machine),
// again after each change to it.
func (l Language) HostCaches(snap *sandbox.Snapshot) []sandbox.CacheMount {
	if snap != nil {
		_, work := snap.Files["go.work"]
		if _, mod := snap.Files[inModule(snap, "go.mod")]; mod && !work && l.SetupStep(snap) == nil {
			return nil
		}
	}
	dir := os.Getenv("GOMODCACHE")
	if dir == "" {
		gopath := os.Getenv("GOPATH")
		if gopath == "" {
			home, _ := os.UserHomeDir()
			gopath = filepath.Join(home, "go")
		}
		dir = filepath.Join(strings.Split(gopath, string(os.PathListSeparator))[0], "pkg", "mod")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil
	}
	return []sandbox.CacheMount{{
		HostDir: dir, Target: ModCache, Name: "gomod",
		DirEnv: "GOMODCACHE", Env: []string{"GOFLAGS=" + modFlags(snap), "GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local"},
	}}
}
