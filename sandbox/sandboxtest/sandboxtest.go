// Package sandboxtest holds helpers for tests that need a real sandbox.
//
// RequireDocker is the one rule for Docker in tests: outside CI, a machine
// without an engine skips the test and says why; under CI=true a missing
// engine fails the test, never skips it.
package sandboxtest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
)

// InCI reports whether CI=true is set.
func InCI() bool { return os.Getenv("CI") == "true" }

// RequireDocker returns a client for a Docker engine that answers, or skips
// (outside CI) or fails (under CI=true) the test.
func RequireDocker(t testing.TB) *client.Client {
	t.Helper()
	cli, err := engine.NewClient()
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = cli.Ping(ctx)
	}
	if err != nil {
		unavailable(t, "no Docker engine answers ("+err.Error()+"); start one with .ci/docker-up")
		return nil
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// RequireImage fails or skips like RequireDocker when image is missing.
func RequireImage(t testing.TB, cli *client.Client, image string) {
	t.Helper()
	if _, err := cli.ImageInspect(context.Background(), image); err != nil {
		unavailable(t, "image "+image+" is missing; build it with `fixpoint sandbox images build`")
	}
}

// RequireCommand fails or skips like RequireDocker when a program is not
// on PATH (bwrap, nvim, node).
func RequireCommand(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		unavailable(t, name+" is not installed; .ci/run installs it")
	}
	return p
}

// RequireRoot fails or skips like RequireDocker when the test does not run
// as root (session uids, mounts).
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		unavailable(t, "the test needs root (CI runs as root)")
	}
}

// Unavailable fails the test under CI=true and skips it otherwise, saying
// why: the one rule for any missing prerequisite (root, flock, git,
// symlinks, a program).
func Unavailable(t testing.TB, why string) {
	t.Helper()
	unavailable(t, why)
}

func unavailable(t testing.TB, why string) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI=true and %s", why)
	}
	t.Skipf("skipping outside CI: %s", why)
}

// RequireNoContainers fails the test when any container, running or not,
// carries the label key=value.
func RequireNoContainers(t testing.TB, cli *client.Client, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := engine.ListContainers(ctx, cli, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", key+"="+value))})
	if err != nil {
		t.Fatalf("list containers labelled %s=%s: %v", key, value, err)
	}
	for _, c := range list {
		t.Errorf("container %.12s (%s) labelled %s=%s is left behind", c.ID, c.State, key, value)
	}
}
