package docker_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// issue 20: what a session running model code writes to the Go build cache
// never reaches a session whose result counts: the model's sessions share
// one volume, fixpoint test's another, and a fresh session (the verdict's)
// gets an anonymous volume filled from the image, removed with it.
func TestGoCacheKinds(t *testing.T) {
	image := cmp.Or(os.Getenv("FIXPOINT_TEST_GO_IMAGE"), "fixpoint-sandbox-go")
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, image)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatal(err)
	}
	var id [6]byte
	rand.Read(id[:])
	project := hex.EncodeToString(id[:])
	removeNewGoCaches(t, cli)
	run := func(kind sandbox.BuildCache, script string) *sandbox.Result {
		t.Helper()
		s, err := b.Start(t.Context(), sandbox.Spec{Image: image, Labels: map[string]string{sandbox.LabelProject: project}, BuildCache: kind})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", script}, Limits: sandbox.Limits{Timeout: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := run(sandbox.BuildCacheModel, `echo poisoned > "$(go env GOCACHE)/entry"`); res.ExitCode != 0 {
		t.Fatalf("model session: exit %d, %q", res.ExitCode, res.Stderr)
	}
	if res := run(sandbox.BuildCacheModel, `cat "$(go env GOCACHE)/entry"`); strings.TrimSpace(string(res.Stdout)) != "poisoned" {
		t.Errorf("a later model session lost the model cache: %q %q", res.Stdout, res.Stderr)
	}
	for _, kind := range []sandbox.BuildCache{sandbox.BuildCacheUser, sandbox.BuildCacheFresh} {
		// The image's prebuilt standard library is there: copied into the
		// volume (an image built with Go < 1.25) or served read-only by
		// the image's GOCACHEPROG (TestGoFreshSessionCopiesNoCache).
		res := run(kind, `c="$(go env GOCACHE)"; test ! -e "$c/entry" && p="$(go list -export -f '{{.Export}}' fmt)" && test -s "$p" && echo mine > "$c/entry2"`)
		if res.ExitCode != 0 {
			t.Errorf("kind %d: sees the model's entry, or has no writable cache with the image's prebuilt one: exit %d, %q", kind, res.ExitCode, res.Stderr)
		}
	}
	if res := run(sandbox.BuildCacheUser, `c="$(go env GOCACHE)"; cat "$c/entry2" && echo user > "$c/entry3"`); strings.TrimSpace(string(res.Stdout)) != "mine" {
		t.Errorf("fixpoint test's cache did not outlive its session: %q", res.Stderr)
	}
	// A fresh session starts as a copy of the user's cache: it sees the
	// user's entries, never the model's, and what it writes (to its copy
	// or, it tries, to the seed) reaches no later session.
	script := `c="$(go env GOCACHE)"; test ! -e "$c/entry" && test "$(cat "$c/entry3")" = user &&
echo poisoned > "$c/entry3" && echo poisoned > "$c/entry4" && ! echo poisoned 2>/dev/null > /gocache-seed/entry3`
	if res := run(sandbox.BuildCacheFresh, script); res.ExitCode != 0 {
		t.Errorf("fresh session: not a writable copy of the user's cache (or the seed is writable): exit %d, %q", res.ExitCode, res.Stderr)
	}
	if res := run(sandbox.BuildCacheUser, `c="$(go env GOCACHE)"; test "$(cat "$c/entry3")" = user && test ! -e "$c/entry4"`); res.ExitCode != 0 {
		t.Errorf("what a fresh session wrote reached the user's cache: %q", res.Stderr)
	}
	if res := run(sandbox.BuildCacheFresh, `test ! -e "$(go env GOCACHE)/entry4"`); res.ExitCode != 0 {
		t.Error("a fresh session sees what an earlier fresh session wrote to its cache")
	}
}

// removeNewGoCaches removes, when the test ends, the Go build cache
// volumes it created.
func removeNewGoCaches(t testing.TB, cli *client.Client) {
	t.Helper()
	before := goCacheVolumes(t, cli)
	t.Cleanup(func() {
		for name := range goCacheVolumes(t, cli) {
			if !before[name] {
				cli.VolumeRemove(context.Background(), name, true)
			}
		}
	})
}

// goCacheVolumes lists the Go build cache volumes (named and anonymous
// ones alike have the label only when named: the anonymous ones are
// removed with their container).
func goCacheVolumes(t testing.TB, cli interface {
	VolumeList(context.Context, volume.ListOptions) (volume.ListResponse, error)
}) map[string]bool {
	t.Helper()
	vs, err := cli.VolumeList(context.Background(), volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", docker.LabelCache+"=gocache"))})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, v := range vs.Volumes {
		out[v.Name] = true
	}
	return out
}

// A fresh session started with Spec.DeferSeed copies the user's cache when
// asked, as it is then, not at its start: what a user session writes after
// the fresh one started (a fix's baseline running beside it) is in the
// copy, and only the first request copies.
func TestGoCacheDeferredSeed(t *testing.T) {
	image := cmp.Or(os.Getenv("FIXPOINT_TEST_GO_IMAGE"), "fixpoint-sandbox-go")
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, image)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatal(err)
	}
	if !b.DefersSeed() {
		t.Fatal("the docker backend does not honour Spec.DeferSeed")
	}
	var id [6]byte
	rand.Read(id[:])
	project := hex.EncodeToString(id[:])
	removeNewGoCaches(t, cli)
	start := func(kind sandbox.BuildCache, deferSeed bool) sandbox.Session {
		t.Helper()
		s, err := b.Start(t.Context(), sandbox.Spec{Image: image, Labels: map[string]string{sandbox.LabelProject: project}, BuildCache: kind, DeferSeed: deferSeed})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	run := func(s sandbox.Session, script string) *sandbox.Result {
		t.Helper()
		res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", script}, Limits: sandbox.Limits{Timeout: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	user := start(sandbox.BuildCacheUser, false)
	if res := run(user, `echo early > "$(go env GOCACHE)/entryA"`); res.ExitCode != 0 {
		t.Fatalf("user session: exit %d, %q", res.ExitCode, res.Stderr)
	}
	fresh := start(sandbox.BuildCacheFresh, true)
	if res := run(fresh, `test ! -e "$(go env GOCACHE)/entryA"`); res.ExitCode != 0 {
		t.Error("a deferred fresh session was seeded at its start")
	}
	if res := run(user, `echo late > "$(go env GOCACHE)/entryB"`); res.ExitCode != 0 {
		t.Fatalf("user session: exit %d, %q", res.ExitCode, res.Stderr)
	}
	seeder, ok := fresh.(sandbox.BuildCacheSeeder)
	if !ok {
		t.Fatal("a docker session is not a sandbox.BuildCacheSeeder")
	}
	seeder.SeedBuildCache(t.Context())
	if res := run(fresh, `c="$(go env GOCACHE)"; test "$(cat "$c/entryA")" = early && test "$(cat "$c/entryB")" = late && ! echo x 2>/dev/null > /gocache-seed/entryB`); res.ExitCode != 0 {
		t.Errorf("after SeedBuildCache: not a copy of the user's cache as it is now (or the seed is writable): exit %d, %q", res.ExitCode, res.Stderr)
	}
	if res := run(user, `echo later > "$(go env GOCACHE)/entryC"`); res.ExitCode != 0 {
		t.Fatalf("user session: exit %d, %q", res.ExitCode, res.Stderr)
	}
	seeder.SeedBuildCache(t.Context())
	if _, err := fresh.Sync(t.Context(), &sandbox.Snapshot{Files: map[string]sandbox.File{"a.txt": {Data: []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	if res := run(fresh, `test ! -e "$(go env GOCACHE)/entryC"`); res.ExitCode != 0 {
		t.Error("a second SeedBuildCache (or the first Sync after it) copied again")
	}
	// Without a request, the first Sync seeds.
	fresh2 := start(sandbox.BuildCacheFresh, true)
	if _, err := fresh2.Sync(t.Context(), &sandbox.Snapshot{Files: map[string]sandbox.File{"a.txt": {Data: []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	if res := run(fresh2, `test "$(cat "$(go env GOCACHE)/entryC")" = later`); res.ExitCode != 0 {
		t.Error("a deferred session's first Sync did not seed it")
	}
}
