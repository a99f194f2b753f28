package bwrap_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// goCacheBackend is a bwrap backend whose Go caches live in a fresh base
// directory that session uids can reach (t.TempDir is 0700).
func goCacheBackend(t *testing.T) *bwrap.Backend {
	t.Helper()
	sandboxtest.RequireCommand(t, "bwrap")
	base := filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-bwrap-gocache-test-%d", os.Getpid()))
	os.RemoveAll(base)
	t.Cleanup(func() { os.RemoveAll(base) })
	b, err := bwrap.New(&bwrap.Options{GoCacheDir: base})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// run runs script in a new session of project, on snap, and returns the
// result; the session is closed.
func run(t *testing.T, b *bwrap.Backend, project string, snap *sandbox.Snapshot, args ...string) *sandbox.Result {
	t.Helper()
	s, err := b.Start(t.Context(), sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: project}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if snap == nil {
		snap = &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	}
	if _, err := s.Sync(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	// A cold `go test` compiles the standard library: more than the 60 s
	// default on a loaded machine.
	res, err := s.Run(t.Context(), sandbox.Command{Args: args, Limits: sandbox.Limits{Timeout: 4 * time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A project's Go build cache outlives its sessions and is not shared with
// other projects.
func TestGoCachePerProject(t *testing.T) {
	b := goCacheBackend(t)
	res := run(t, b, "aaaa", nil, "sh", "-c", `echo "$GOCACHE"; echo kept > /gocache/marker`)
	if res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "/gocache" {
		t.Fatalf("first session: exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if res := run(t, b, "aaaa", nil, "cat", "/gocache/marker"); strings.TrimSpace(string(res.Stdout)) != "kept" {
		t.Errorf("a later session of the same project lost the cache: exit %d, %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if res := run(t, b, "bbbb", nil, "sh", "-c", "test ! -e /gocache/marker"); res.ExitCode != 0 {
		t.Errorf("another project sees the first project's cache")
	}
	if res := run(t, b, "", nil, "sh", "-c", `test -z "$GOCACHE" && test ! -e /gocache`); res.ExitCode != 0 {
		t.Errorf("a session without a project got a cache: %q", res.Stderr)
	}
}

// The point of it: the second `go test` of a project, in a new session,
// is answered from the cache.
func TestGoCacheMakesGoTestCached(t *testing.T) {
	b := goCacheBackend(t)
	sandboxtest.RequireCommand(t, "go")
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"go.mod":    {Data: []byte("module example.com/c\n\ngo 1.22\n")},
		"c.go":      {Data: []byte("package c\n\nfunc Twice(x int) int { return 2 * x }\n")},
		"c_test.go": {Data: []byte("package c\n\nimport \"testing\"\n\nfunc TestTwice(t *testing.T) {\n\tif Twice(2) != 4 {\n\t\tt.Fatal(Twice(2))\n\t}\n}\n")},
	}}
	for i, want := range []string{"", "(cached)"} {
		res := run(t, b, "cccc", snap, "go", "test", "./...")
		out := string(res.Stdout) + string(res.Stderr)
		if res.ExitCode != 0 || !strings.Contains(out, "ok  \texample.com/c") || !strings.Contains(out, want) {
			t.Fatalf("go test #%d: exit %d, want %q in:\n%s", i+1, res.ExitCode, want, out)
		}
	}
}

// TestGoCacheBounded: a command that leaves the project's Go build cache
// over its bound finds it emptied for the next command (the directories
// stay, writable).
func TestGoCacheBounded(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	base := filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-bwrap-gocache-bound-%d", os.Getpid()))
	os.RemoveAll(base)
	t.Cleanup(func() { os.RemoveAll(base) })
	b, err := bwrap.New(&bwrap.Options{GoCacheDir: base, GoCacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, b, "eeee", nil, "sh", "-c", "mkdir -p /gocache/00 && head -c 4000000 /dev/zero > /gocache/00/small && echo ok")
	if strings.TrimSpace(string(res.Stdout)) != "ok" {
		t.Fatalf("writing under the bound: %+v", res)
	}
	if res := run(t, b, "eeee", nil, "test", "-e", "/gocache/00/small"); res.ExitCode != 0 {
		t.Fatalf("a cache under its bound was emptied")
	}
	res = run(t, b, "eeee", nil, "sh", "-c", "head -c 16000000 /dev/zero > /gocache/00/big && echo ok")
	if strings.TrimSpace(string(res.Stdout)) != "ok" {
		t.Fatalf("writing over the bound: %+v", res)
	}
	res = run(t, b, "eeee", nil, "sh", "-c", "ls -A /gocache/00; touch /gocache/00/again && echo writable")
	if out := strings.TrimSpace(string(res.Stdout)); out != "writable" {
		t.Errorf("after a command left the cache over its bound: %q (want it emptied and still writable)", out)
	}
}

// issue 20: what a session running model code writes to its Go build cache
// never reaches a session whose result counts. The model's sessions share
// one cache, fixpoint test's sessions another, and a fresh session (the
// verdict's) starts from the std seed only and leaves nothing behind.
func TestGoCacheKinds(t *testing.T) {
	b := goCacheBackend(t)
	runKind := func(kind sandbox.BuildCache, script string) *sandbox.Result {
		t.Helper()
		s, err := b.Start(t.Context(), sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: "cccc"}, BuildCache: kind})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Sync(t.Context(), &sandbox.Snapshot{Files: map[string]sandbox.File{}}); err != nil {
			t.Fatal(err)
		}
		res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", script}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := runKind(sandbox.BuildCacheModel, `test "$GOCACHE" = /gocache && echo poisoned > /gocache/entry`); res.ExitCode != 0 {
		t.Fatalf("model session: exit %d, %q", res.ExitCode, res.Stderr)
	}
	if res := runKind(sandbox.BuildCacheModel, "cat /gocache/entry"); strings.TrimSpace(string(res.Stdout)) != "poisoned" {
		t.Errorf("a later model session lost the model cache: %q %q", res.Stdout, res.Stderr)
	}
	for _, kind := range []sandbox.BuildCache{sandbox.BuildCacheUser, sandbox.BuildCacheFresh} {
		if res := runKind(kind, `test "$GOCACHE" = /gocache && test -d /gocache && test ! -e /gocache/entry && echo mine > /gocache/entry2`); res.ExitCode != 0 {
			t.Errorf("kind %d: sees the model's entry, or has no writable cache: exit %d, %q", kind, res.ExitCode, res.Stderr)
		}
	}
	if res := runKind(sandbox.BuildCacheFresh, "test ! -e /gocache/entry2"); res.ExitCode != 0 {
		t.Error("a fresh session sees what an earlier session wrote to its cache")
	}
	if res := runKind(sandbox.BuildCacheUser, "cat /gocache/entry2"); strings.TrimSpace(string(res.Stdout)) != "mine" {
		t.Errorf("fixpoint test's cache did not outlive its session: %q", res.Stderr)
	}
}

// A fresh cache starts as a copy of the std seed (what only `go build std`
// wrote): a session writing into its copy leaves the seed as it was.
func TestGoCacheFreshCopiesTheSeed(t *testing.T) {
	b := goCacheBackend(t)
	seed := b.StdSeed(map[string]string{sandbox.LabelProject: "dddd"})
	if seed == "" {
		t.Fatal("no std seed: the host has no go on the sandbox's PATH")
	}
	if err := os.MkdirAll(filepath.Join(seed, "ab"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(seed, "fixpoint-std-built"), nil, 0o644)
	os.WriteFile(filepath.Join(seed, "ab", "std-a"), []byte("compiled\n"), 0o644)
	s, err := b.Start(t.Context(), sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: "dddd"}, BuildCache: sandbox.BuildCacheFresh})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", "cat /gocache/ab/std-a && echo poisoned > /gocache/ab/std-a"}})
	if err != nil || res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "compiled" {
		t.Fatalf("fresh session: %v, exit %d, %q %q; want the seed's entry, writable", err, res.ExitCode, res.Stdout, res.Stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(seed, "ab", "std-a")); string(got) != "compiled\n" {
		t.Errorf("the seed was changed through a fresh session's cache: %q", got)
	}
}

// The seed depends on the toolchain alone: two projects share one (a new
// project does not compile the standard library again), and it is no
// project's own cache, which sessions bind.
func TestStdSeedIsPerToolchain(t *testing.T) {
	b := goCacheBackend(t)
	a := b.StdSeed(map[string]string{sandbox.LabelProject: "aaaa"})
	c := b.StdSeed(map[string]string{sandbox.LabelProject: "cccc"})
	if a == "" || a != c {
		t.Fatalf("std seeds of two projects: %q and %q, want one shared seed", a, c)
	}
	for _, p := range []string{"aaaa", "cccc"} {
		if strings.HasPrefix(filepath.Base(a), p) {
			t.Fatalf("seed %q is named after project %s: a session of that project could bind it", a, p)
		}
	}
	if s := b.StdSeed(map[string]string{sandbox.LabelProject: "../x"}); s != "" {
		t.Fatalf("a project key that is not hex got seed %q", s)
	}
}

// A fresh cache starts as a copy of the project's user cache (which only
// sessions running the user's own code write) once that cache holds the
// standard library: the verifying run recompiles only what the edit
// changed. What the fresh session writes never reaches the user's cache.
func TestGoCacheFreshCopiesTheUserCache(t *testing.T) {
	b := goCacheBackend(t)
	base := filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-bwrap-gocache-test-%d", os.Getpid()))
	user := filepath.Join(base, "eeee-user")
	if err := os.MkdirAll(filepath.Join(user, "cd"), 0o777); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(user, "fixpoint-std-built"), nil, 0o644)
	os.WriteFile(filepath.Join(user, "cd", "pkg-a"), []byte("user\n"), 0o644)
	model := filepath.Join(base, "eeee-model")
	os.MkdirAll(model, 0o777)
	os.WriteFile(filepath.Join(model, "poisoned"), nil, 0o644)
	s, err := b.Start(t.Context(), sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: "eeee"}, BuildCache: sandbox.BuildCacheFresh})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", "test ! -e /gocache/poisoned && cat /gocache/cd/pkg-a && echo model > /gocache/cd/pkg-a && echo model > /gocache/cd/pkg-b"}})
	if err != nil || res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "user" {
		t.Fatalf("fresh session: %v, exit %d, %q %q; want the user cache's entry, writable, and not the model's", err, res.ExitCode, res.Stdout, res.Stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(user, "cd", "pkg-a")); string(got) != "user\n" {
		t.Errorf("the user's cache was changed through a fresh session's cache: %q", got)
	}
	if _, err := os.Stat(filepath.Join(user, "cd", "pkg-b")); err == nil {
		t.Error("an entry a fresh session wrote reached the user's cache")
	}
}
