package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GoCacheDir is the Go build cache of the go image. The image declares it
// with the label [LabelGoCache]; the docker backend mounts a writable
// volume there, which Docker fills from the image on first use. Without a
// prebuilt cache every new sandbox compiles the standard library before the
// first test runs (minutes on two cores); with it, a project's first test
// run compiles only the project.
const GoCacheDir = "/gocache"

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

// goCacheEnv is the environment the cache is built with. It must match the
// image's Go environment, or the cached actions would not be reused.
func goCacheEnv(goroot, cache string) []string {
	return []string{
		"PATH=" + filepath.Join(goroot, "bin") + ":/usr/bin:/bin",
		"GOROOT=" + goroot, "GOCACHE=" + cache, "HOME=" + filepath.Dir(cache),
		"GOPATH=" + filepath.Join(filepath.Dir(cache), "gopath"), "GOMODCACHE=" + filepath.Join(filepath.Dir(cache), "gomodcache"),
		"CGO_ENABLED=0", "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-buildvcs=false", "GOENV=off",
	}
}

// ensureGoCache builds (once per Go version) the standard library and a
// warm-up test into a cache directory on the host, with the same GOROOT
// path and environment as the image, and returns it.
func (b *Builder) ensureGoCache(ctx context.Context, goroot, goVersion string) (string, error) {
	dir := filepath.Join(b.cacheDir, "gocache-"+shortHash("gocache", builderVersion, goVersion, goroot))
	cache := filepath.Join(dir, "cache")
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return cache, nil
	}
	os.RemoveAll(dir)
	warm := filepath.Join(dir, "warm")
	if err := os.MkdirAll(warm, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{"go.mod": "module warm\n\ngo 1.21\n", "warm_test.go": warmSource}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(warm, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	b.progressf("fixpoint-sandbox-go: prebuilding the Go build cache (standard library and test deps; once per Go version)")
	env := goCacheEnv(goroot, cache)
	for _, args := range [][]string{{"build", "std"}, {"test", "-json", "-count=1", "./..."}, {"vet", "./..."}} {
		cmd := exec.CommandContext(ctx, filepath.Join(goroot, "bin", "go"), args...)
		cmd.Dir, cmd.Env = warm, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("prebuild Go cache (go %s): %v\n%s", strings.Join(args, " "), err, tail(out, 2000))
		}
	}
	os.RemoveAll(filepath.Join(cache, "testexpire.txt"))
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		return "", err
	}
	return cache, nil
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
// environment, so the cached actions match a session's. A failure only
// costs that time later, so it does not fail the build.
func goPrebuildStep(cache string) string {
	return "COPY warm /tmp/fixpoint-warm\n" +
		"RUN cd /tmp/fixpoint-warm && go build std && go test -json -count=1 ./... >/dev/null && go vet ./... && rm -f " + cache + "/testexpire.txt || echo 'fixpoint: the Go build cache was not prebuilt'\n"
}
