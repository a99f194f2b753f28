package docker_test

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/lang/golang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// The go image's prebuilt build cache holds the standard library as the
// detected test command builds it (cgo on: the image has gcc), not only as
// the image's CGO_ENABLED=0 does: the first run of a new project that
// imports net/http and os/user, in a fresh session (a cache volume filled
// from the image), compiles the project's package and nothing of the
// standard library, cgo's C files included. Without it that first run
// compiled net, os/user, runtime/cgo and all that imports them (46 s
// instead of 17 s). FIXPOINT_TEST_GO_IMAGE names another image to check
// (one built with `sandbox images build` under a tag).
func TestGoImageCacheHoldsTheTestCommandsStd(t *testing.T) {
	image := cmp.Or(os.Getenv("FIXPOINT_TEST_GO_IMAGE"), "fixpoint-sandbox-go")
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, image)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Start(t.Context(), sandbox.Spec{Image: image, BuildCache: sandbox.BuildCacheFresh})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"go.mod": {Data: []byte("module nh\n\ngo 1.21\n")},
		"nh.go": {Data: []byte(`package nh

import (
	"net/http"
	"os/user"
)

func Hello(w http.ResponseWriter, r *http.Request) { u, _ := user.Current(); w.Write([]byte("hello " + u.Username)) }
`)},
		"nh_test.go": {Data: []byte(`package nh

import (
	"net/http/httptest"
	"testing"
)

func TestHello(t *testing.T) {
	rec := httptest.NewRecorder()
	Hello(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 200 {
		t.Fatal(rec.Code)
	}
}
`)},
	}}
	if _, err := s.Sync(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	runner := golang.Language{}.TestCommand(snap)
	limits := sandbox.Limits{Timeout: 10 * time.Minute}
	env, err := s.Run(t.Context(), sandbox.Command{Args: []string{"go", "env", "CGO_ENABLED"}, Env: runner.Env, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(env.Stdout)); got != "1" {
		t.Fatalf("the test command's go has CGO_ENABLED=%q in %s (env %q), want 1: the image has gcc", got, image, runner.Env)
	}
	args := append(slices.Clone(runner.Args[:2]), append([]string{"-x"}, runner.Args[2:]...)...)
	res, err := s.Run(t.Context(), sandbox.Command{Args: args, Env: runner.Env, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), `"Action":"pass"`) {
		t.Fatalf("%q: exit %d\n%s\n%s", args, res.ExitCode, res.Stdout, tailOf(res.Stderr))
	}
	var compiled []string
	projectCompiled := false
	// With -json, go test -x reports its commands as build-output events
	// on stdout; what it runs before the JSON starts goes to stderr.
	for _, line := range strings.Split(string(res.Stdout)+"\n"+string(res.Stderr), "\n") {
		switch {
		case strings.Contains(line, "/compile ") && strings.Contains(line, " -std "):
			compiled = append(compiled, packageOf(line))
		case strings.Contains(line, "/cgo ") || strings.Contains(line, "gcc ") && strings.Contains(line, "runtime/cgo"):
			compiled = append(compiled, "cgo: "+line)
		case strings.Contains(line, "/compile ") && strings.Contains(line, " -p nh "):
			projectCompiled = true
		}
	}
	if len(compiled) > 0 {
		t.Errorf("a fresh session of %s compiled %d standard-library packages on its first `%s` (the image's cache lacks the test command's configuration): %v", image, len(compiled), strings.Join(args, " "), compiled)
	}
	if !projectCompiled {
		t.Errorf("no compile of the project's package in `go test -x`'s output: the check above proves nothing\n%s", tailOf(res.Stdout))
	}
}

// packageOf is the -p argument of a compile command line.
func packageOf(line string) string {
	f := strings.Fields(line)
	for i, w := range f {
		if w == "-p" && i+1 < len(f) {
			return f[i+1]
		}
	}
	return line
}

func tailOf(b []byte) string {
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// A fresh session of the go image copies no build cache: its GOCACHE
// volume starts empty, and the image's GOCACHEPROG serves the prebuilt
// standard library from the image's read-only cache, which the session
// cannot write, nor replace the helper. What a workspace or code run
// earlier could set does not move it: `go env -w` (a GOENV file) loses
// to the image's environment, a GOENV named by the workspace is not
// read (the environment comes from the image and the language), and the
// test command's environment keeps it. A first test run of a project
// writes only the project's entries into the session's cache. Fails on
// the image of round 8, whose fresh volume held a 206 MB copy.
func TestGoFreshSessionCopiesNoCache(t *testing.T) {
	img := cmp.Or(os.Getenv("FIXPOINT_TEST_GO_IMAGE"), "fixpoint-sandbox-go")
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, img)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Start(t.Context(), sandbox.Spec{Image: img, BuildCache: sandbox.BuildCacheFresh})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"go.mod":         {Data: []byte("module p\n\ngo 1.21\n")},
		"p.go":           {Data: []byte("package p\n\nimport \"fmt\"\n\nfunc F() string { return fmt.Sprint(1) }\n")},
		"p_test.go":      {Data: []byte("package p\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {\n\tif F() != \"1\" {\n\t\tt.Fatal(F())\n\t}\n}\n")},
		"go.env":         {Data: []byte("GOCACHEPROG=/workspace/evil\n")},
		"evil":           {Data: []byte("#!/bin/sh\necho hijacked >&2\nexit 1\n"), Mode: 0o755},
		".config/go/env": {Data: []byte("GOCACHEPROG=/workspace/evil\n")},
	}}
	if _, err := s.Sync(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	runner := golang.Language{}.TestCommand(snap)
	limits := sandbox.Limits{Timeout: 10 * time.Minute}
	sh := func(script string, env []string) *sandbox.Result {
		t.Helper()
		res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", script}, Env: env, Limits: limits})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := sh(`find "$(go env GOCACHE)" -type f | wc -l`, nil); res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "0" {
		t.Fatalf("a fresh session's GOCACHE holds %s files at start (exit %d, %s), want none: the image's cache was copied", strings.TrimSpace(string(res.Stdout)), res.ExitCode, res.Stderr)
	}
	if res := sh(`go env GOCACHEPROG`, runner.Env); strings.TrimSpace(string(res.Stdout)) != image.GoCacheProgPath {
		t.Fatalf("the test command's GOCACHEPROG = %q (%s), want %s", res.Stdout, res.Stderr, image.GoCacheProgPath)
	}
	// Code run earlier in the session writes a GOENV file; a later go
	// still uses the image's helper.
	sh(`go env -w GOCACHEPROG=/workspace/evil; true`, nil)
	if res := sh(`go env GOCACHEPROG`, runner.Env); strings.TrimSpace(string(res.Stdout)) != image.GoCacheProgPath {
		t.Fatalf("after `go env -w GOCACHEPROG=...`: GOCACHEPROG = %q, want %s", res.Stdout, image.GoCacheProgPath)
	}
	ro := filepath.Dir(image.GoCacheProgPath)
	if res := sh(`touch `+image.GoCacheImageDir+`/x || touch `+image.GoCacheImageDir+`/00/x || cp /workspace/evil `+image.GoCacheProgPath+` || mv `+ro+` /tmp/x`, nil); res.ExitCode == 0 {
		t.Fatalf("the session wrote the image's read-only cache or replaced its helper")
	}
	res, err := s.Run(t.Context(), sandbox.Command{Args: runner.Args, Env: runner.Env, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), `"Action":"pass"`) || strings.Contains(string(res.Stderr), "hijacked") {
		t.Fatalf("%q: exit %d\n%s\n%s", runner.Args, res.ExitCode, tailOf(res.Stdout), tailOf(res.Stderr))
	}
	// The run's own entries only: the project's compile, link, vet and
	// test result, not the hundreds of the standard library's.
	out := sh(`find "$(go env GOCACHE)" -name '*-a' | wc -l; find `+image.GoCacheImageDir+` -name '*-a' | wc -l`, nil)
	f := strings.Fields(string(out.Stdout))
	if len(f) != 2 {
		t.Fatalf("count cache entries: %q %q", out.Stdout, out.Stderr)
	}
	mine, prebuilt := atoi(f[0]), atoi(f[1])
	if mine == 0 || prebuilt < 500 || mine*10 > prebuilt {
		t.Errorf("after a first test run the session's cache has %d entries, the image's %d: want a few of the project's beside the image's hundreds", mine, prebuilt)
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
