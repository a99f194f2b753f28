package image

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fixpoint-dev/fixpoint/flock"
)

// GoCacheDir is the writable Go build cache (GOCACHE) of the go image. The
// image declares it with the label [LabelGoCache]; the docker backend
// mounts a writable volume there. In an image built with Go 1.25 or later
// it is empty: the prebuilt cache is at [GoCacheImageDir], read-only, and
// the image's GOCACHEPROG ([GoCacheProg]) reads it after this one, so a
// new volume needs no copy. Built with an older Go, the prebuilt cache is
// here, and Docker copies it into each new volume. Without a prebuilt
// cache every new sandbox compiles the standard library before the first
// test runs (minutes on two cores); with it, a project's first test run
// compiles only the project.
const GoCacheDir = "/gocache"

// The go image's read-only build cache and its GOCACHEPROG helper (the
// program in ./gocacheprog, compiled by the image builder with the
// image's own toolchain).
const (
	// GoCacheImageDir holds the prebuilt Go build cache, owned by root:
	// nothing a session runs can write it.
	GoCacheImageDir = "/usr/local/lib/fixpoint/gocache"
	// GoCacheProgPath is the helper, owned by root.
	GoCacheProgPath = "/usr/local/lib/fixpoint/gocacheprog"
	// GoCacheProg is the image's GOCACHEPROG: gets from $GOCACHE, then
	// from GoCacheImageDir (the helper's default read-only layer: the
	// directory "gocache" beside it); puts into $GOCACHE only. It has no
	// arguments, so the value holds no space that an engine's ENV
	// parsing could split.
	GoCacheProg = GoCacheProgPath
)

// goCacheProgMinor is the first Go 1.x whose toolchain builds the helper
// (it uses os.Root's Rename and WriteFile) and runs GOCACHEPROG without
// an experiment flag.
const goCacheProgMinor = 25

// GoCacheProgSupported says whether a go image whose toolchain is version
// (a $GOROOT/VERSION line, "go1.26.8") gets the read-only cache and the
// helper.
func GoCacheProgSupported(version string) bool {
	rest, ok := strings.CutPrefix(version, "go1.")
	if !ok {
		return false
	}
	minor, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(minor)
	return err == nil && n >= goCacheProgMinor
}

//go:embed gocacheprog/main.go
var goCacheProgSource []byte

// buildGoCacheProg compiles the helper with the toolchain at goroot (the
// one copied into the image) into out: static, for the toolchain's own
// platform, from the embedded source only (no module is fetched).
func buildGoCacheProg(ctx context.Context, goroot, out string) error {
	src, err := os.MkdirTemp("", "fixpoint-gocacheprog-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	mod := fmt.Sprintf("module fixpoint-gocacheprog\n\ngo 1.%d\n", goCacheProgMinor)
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte(mod), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), goCacheProgSource, 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(goroot, "bin", "go"), "build", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOROOT="+goroot, "CGO_ENABLED=0", "GOOS=linux", "GOARCH=", "GOFLAGS=", "GOWORK=off",
		"GOTOOLCHAIN=local", "GOPROXY=off", "GOCACHEPROG=", "GOEXPERIMENT=")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build the go image's GOCACHEPROG helper with %s: %v\n%s", goroot, err, tail(b, 2000))
	}
	return nil
}

// LabelGoCache names the directory holding a prebuilt Go build cache.
const LabelGoCache = "fixpoint.gocache"

// warmSource is a tiny module whose test imports what Go tests commonly
// use, so that vet facts and test-binary dependencies are cached too.
const warmSource = `package warm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/quick"
	"time"
	"unicode"
)

var _ = []any{bufio.NewReader, bytes.NewReader, context.Background, json.Marshal, errors.New, fmt.Sprint, io.EOF,
	math.Abs, os.Getenv, filepath.Join, reflect.TypeOf, regexp.MustCompile, sort.Ints, strconv.Itoa, strings.Cut,
	sync.NewCond, quick.Check, time.Now, unicode.IsSpace}

func TestWarm(t *testing.T) {}

func FuzzWarm(f *testing.F) { f.Fuzz(func(t *testing.T, s string) {}) }
`

// goCacheVersion changes when the way the prebuilt Go build cache is made
// changes; it is part of the go image's recipe hash.
//
// 2: built inside the image's own root filesystem (its gcc and C headers,
// GOROOT at GoRootInImage, the image's environment), for the image's
// environment and each of Recipe.GoCacheEnvs (cgo on: the test command's
// default), instead of on the host with CGO_ENABLED=0 only.
//
// 3: with Go 1.25 or later, read-only at GoCacheImageDir behind the
// image's GOCACHEPROG helper, no longer at GoCacheDir.
const goCacheVersion = "3"

// goWarmDir is where the warm-up module is while the cache is prebuilt.
const goWarmDir = "/tmp/fixpoint-warm"

// goPrebuildScript compiles the standard library, the warm-up test and
// its vet run in the image's environment, then again in each of envs (a
// list of KEY=VALUE set over it), and drops testexpire.txt (an image
// built later must not expire the test results it carries).
func goPrebuildScript(cache string, envs [][]string) string {
	steps := "go build std && go test -json -count=1 ./... >/dev/null && go vet ./..."
	script := "cd " + goWarmDir + " && " + steps
	for _, env := range envs {
		prefix := ""
		for _, kv := range env {
			prefix += shellQuote(kv) + " "
		}
		script += " && env " + prefix + "sh -c " + shellQuote(steps)
	}
	return script + " && rm -f " + cache + "/testexpire.txt"
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ensureGoCache builds (once per recipe) the standard library and a
// warm-up test into a cache directory on the host, and returns it; with
// prog, also the GOCACHEPROG helper, at prog's path beside it
// (goCacheProgFile). It runs
// under bwrap with the image's root filesystem (rootfs) as its root, the
// host's GOROOT at GoRootInImage, the cache at GoCacheDir and the image's
// environment: the C compiler, headers, paths and variables a session's
// go sees, so that every action it caches (cgo's included, whose keys
// hold gcc's version) is one a session's first run finds.
func (b *Builder) ensureGoCache(ctx context.Context, r Recipe, in Inputs, goroot, rootfs string) (string, error) {
	dir := filepath.Join(b.cacheDir, "gocache-"+shortHash("gocache", builderVersion, r.Hash(in)))
	cache := filepath.Join(dir, "cache")
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return cache, nil
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return "", errors.New("bwrap not found: prebuilding the go image's build cache needs it; install it with `apt-get install bubblewrap`")
	}
	// Two builds of one recipe (two `images build`, a test beside
	// .ci/setup) share this directory: without the lock, one's RemoveAll
	// pulls the cache out from under the other's go ("mkdir /gocache/00:
	// no such file or directory").
	unlock, err := flock.Lock(ctx, dir+".lock", func() {
		b.progressf("%s: waiting for another build of the Go build cache (%s.lock)", r.Name, dir)
	})
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil { // another process built it meanwhile
		return cache, nil
	}
	os.RemoveAll(dir)
	warm := filepath.Join(dir, "warm")
	if err := os.MkdirAll(warm, 0o755); err != nil {
		return "", err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{"go.mod": "module warm\n\ngo 1.21\n", "warm_test.go": warmSource}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(warm, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	b.progressf("%s: prebuilding the Go build cache (standard library and test deps, cgo off and on; once per recipe)", r.Name)
	args, err := goCacheBwrapArgs(rootfs, goroot, cache, warm, r.Env)
	if err != nil {
		return "", err
	}
	args = append(args, "--", "/bin/sh", "-c", goPrebuildScript(GoCacheDir, r.GoCacheEnvs))
	cmd := exec.CommandContext(ctx, bwrap, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("prebuild the go image's build cache: %v\n%s", err, tail(out, 2000))
	}
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		return "", err
	}
	return cache, nil
}

// goCacheBwrapArgs lays out the image for the cache's build: an empty
// root holding the root filesystem's top-level entries read-only, then
// GOROOT (read-only) over an empty /usr/local, the cache and the warm-up
// module writable, nothing of the host's, no network.
func goCacheBwrapArgs(rootfs, goroot, cache, warm string, env []string) ([]string, error) {
	ents, err := os.ReadDir(rootfs)
	if err != nil {
		return nil, fmt.Errorf("read the go image's root filesystem: %w", err)
	}
	args := []string{"--unshare-all", "--die-with-parent", "--tmpfs", "/"}
	for _, e := range ents {
		name := e.Name()
		switch name {
		case "proc", "dev", "sys", "tmp", "home", "go", strings.TrimPrefix(GoCacheDir, "/"):
			continue
		}
		src := filepath.Join(rootfs, name)
		if e.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err != nil {
				return nil, err
			}
			args = append(args, "--symlink", target, "/"+name)
			continue
		}
		args = append(args, "--ro-bind", src, "/"+name)
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/home", "--dir", Home,
		"--dir", GoModCache, "--tmpfs", "/usr/local", "--ro-bind", goroot, GoRootInImage,
		"--bind", cache, GoCacheDir, "--bind", warm, goWarmDir, "--chdir", goWarmDir, "--clearenv")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	return args, nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// goWarmFiles is the warm-up module as build context files (warm/).
func goWarmFiles() []entry {
	return []entry{
		{Name: "warm", Mode: 0o755, Dir: true},
		// No go directive: the module builds with any toolchain version.
		{Name: "warm/go.mod", Mode: 0o644, Data: []byte("module warm\n")},
		{Name: "warm/warm_test.go", Mode: 0o644, Data: []byte(warmSource)},
	}
}

// goPrebuildStep is the Dockerfile step of a per-version Go image that
// compiles the standard library and the warm-up test with that toolchain
// into the image's build cache (cache, the base image's LabelGoCache), as
// ensureGoCache does for the image's own Go. Without it the first session
// of every project compiles the standard library before the first test
// (minutes on two cores). It runs as the image's user with the image's
// environment, so the cached actions match a session's, and again in
// each of envs (the language's GoCacheEnvs: cgo on). A failure only costs
// that time later, so it does not fail the build.
func goPrebuildStep(cache string, envs [][]string) string {
	return "COPY warm " + goWarmDir + "\n" +
		"RUN " + goPrebuildScript(cache, envs) + " || echo 'fixpoint: the Go build cache was not prebuilt'\n"
}

// ensureGoCacheProg builds the helper (buildGoCacheProg) into dir once and
// returns its path.
func (b *Builder) ensureGoCacheProg(ctx context.Context, goroot, dir string) (string, error) {
	prog := filepath.Join(dir, "gocacheprog")
	if _, err := os.Stat(prog); err == nil {
		return prog, nil
	}
	b.progressf("building the go image's GOCACHEPROG helper")
	// A name of this process's own, so that two builds at once do not
	// write one file; the rename makes either's whole helper the one kept.
	tmp := prog + ".tmp" + strconv.Itoa(os.Getpid())
	defer os.Remove(tmp)
	if err := buildGoCacheProg(ctx, goroot, tmp); err != nil {
		return "", err
	}
	return prog, os.Rename(tmp, prog)
}

// goCacheProgEntries are the helper (the file at prog) and the empty
// writable cache directory of an image whose prebuilt cache is at
// GoCacheImageDir: the helper and its directory owned by root, the cache
// directory by the sandbox user.
func goCacheProgEntries(prog string) ([]entry, error) {
	if path.Dir(GoCacheProgPath) != path.Dir(GoCacheImageDir) || path.Base(GoCacheImageDir) != "gocache" {
		return nil, errors.New("the GOCACHEPROG helper's default read-only cache is the directory gocache beside it")
	}
	data, err := os.ReadFile(prog)
	if err != nil {
		return nil, err
	}
	return []entry{
		{Name: strings.TrimPrefix(filepath.Dir(GoCacheProgPath), "/"), Mode: 0o755, Dir: true},
		{Name: strings.TrimPrefix(GoCacheProgPath, "/"), Mode: 0o755, Data: data},
		{Name: strings.TrimPrefix(GoCacheDir, "/"), Mode: 0o755, Dir: true, UID: UID, GID: GID},
	}, nil
}
