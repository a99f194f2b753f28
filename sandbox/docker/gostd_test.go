package docker_test

import (
	"cmp"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/lang/golang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
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
