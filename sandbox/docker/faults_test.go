package docker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/fixpoint-dev/fixpoint/internal/dockerproxy"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// proxied returns a client that reaches the real engine through a proxy
// the test can cut ("the daemon stopped") without stopping the engine.
func proxied(t *testing.T) (*dockerproxy.Proxy, *client.Client) {
	t.Helper()
	p, err := dockerproxy.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	cli, err := client.NewClientWithOpts(client.WithHost(p.Host()), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return p, cli
}

// TestFaultEngineGone cuts the engine under a live session: a command
// fails with an error (it does not hang, it is not a test failure), Close
// returns, and the container is still removable once the engine is back.
func TestFaultEngineGone(t *testing.T) {
	real := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, real, testImage)
	p, cli := proxied(t)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli, NoReap: true})
	if err != nil {
		t.Fatalf("New through the proxy: %v", err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s, err := b.Start(ctx, sandbox.Spec{Image: testImage, Limits: sandbox.Limits{Timeout: time.Minute}})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	sess := s.(*docker.Session)
	t.Cleanup(func() {
		real.ContainerRemove(context.Background(), sess.ContainerID(), container.RemoveOptions{Force: true, RemoveVolumes: true})
	})
	if res, err := s.Run(ctx, sandbox.Command{Args: []string{"python3", "-c", "print(1)"}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("Run before the cut: %v %+v", err, res)
	}
	p.Cut()
	res, err := s.Run(ctx, sandbox.Command{Args: []string{"python3", "-c", "print(2)"}})
	if err == nil {
		t.Fatalf("Run after the engine went away: no error (result %+v)", res)
	}
	if ctx.Err() != nil {
		t.Fatalf("Run after the cut ended only at the test's deadline: %v", err)
	}
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "Docker engine stopped answering") {
		t.Errorf("Run error %q, want ErrUnavailable saying the Docker engine stopped answering", err)
	}
	if err := s.Close(); err == nil {
		t.Log("Close: nil (nothing to report)")
	} else {
		t.Logf("Close error: %v", err)
	}
	// The engine is back (the real socket): the container is found by its
	// owner label and removable; Reap skips it while this process lives.
	list, err := engine.ListContainers(context.Background(), real, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", docker.LabelSession+"="+sess.Name()))})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("containers of the session after the cut: %d", len(list))
}

// TestFaultNewEngineGone: New through a cut proxy wraps ErrUnavailable
// (the CLI then explains how to start an engine or choose bwrap).
func TestFaultNewEngineGone(t *testing.T) {
	sandboxtest.RequireDocker(t)
	p, cli := proxied(t)
	p.Cut()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err := docker.New(ctx, &docker.Options{Client: cli, NoReap: true})
	if !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("New with the engine gone: %v, want ErrUnavailable", err)
	}
}
