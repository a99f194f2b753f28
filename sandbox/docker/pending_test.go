package docker_test

import (
	"context"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// sessionContainers counts the containers of a session on the real engine.
func sessionContainers(t *testing.T, real *client.Client, session string) int {
	t.Helper()
	list, err := engine.ListContainers(context.Background(), real, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", docker.LabelSession+"="+session))})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// TestPendingRemoval: the engine goes away under a live session, so Close
// cannot remove its container; once the engine answers again, the same
// Backend removes the leftover on its next Start, on a later session's
// Close, or on Backend.Close, without waiting for Reap (which spares a
// living owner such as `fixpoint serve`).
func TestPendingRemoval(t *testing.T) {
	real := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, real, testImage)
	spec := sandbox.Spec{Image: testImage, Limits: sandbox.Limits{Timeout: time.Minute}}
	tests := []struct {
		name  string
		other bool // start a second session before the cut
		retry func(t *testing.T, b *docker.Backend, other sandbox.Session)
	}{
		{name: "next Start", retry: func(t *testing.T, b *docker.Backend, _ sandbox.Session) {
			s, err := b.Start(t.Context(), spec)
			if err != nil {
				t.Fatalf("Start after the engine is back: %v", err)
			}
			t.Cleanup(func() { s.Close() })
		}},
		{name: "later session Close", other: true, retry: func(t *testing.T, _ *docker.Backend, other sandbox.Session) {
			if err := other.Close(); err != nil {
				t.Fatalf("Close of the other session after the engine is back: %v", err)
			}
		}},
		{name: "Backend Close", retry: func(t *testing.T, b *docker.Backend, _ sandbox.Session) {
			if err := b.Close(); err != nil {
				t.Fatalf("Backend.Close after the engine is back: %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, cli := proxied(t)
			b, err := docker.New(t.Context(), &docker.Options{Client: cli, NoReap: true})
			if err != nil {
				t.Fatalf("New through the proxy: %v", err)
			}
			t.Cleanup(func() { b.Close() })
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			s, err := b.Start(ctx, spec)
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			sess := s.(*docker.Session)
			name, id := sess.Name(), sess.ContainerID()
			t.Cleanup(func() {
				real.ContainerRemove(context.Background(), id, container.RemoveOptions{Force: true, RemoveVolumes: true})
			})
			var other sandbox.Session
			if tt.other {
				if other, err = b.Start(ctx, spec); err != nil {
					t.Fatalf("Start of the other session: %v", err)
				}
				oid := other.(*docker.Session).ContainerID()
				t.Cleanup(func() {
					real.ContainerRemove(context.Background(), oid, container.RemoveOptions{Force: true, RemoveVolumes: true})
				})
			}
			if res, err := s.Run(ctx, sandbox.Command{Args: []string{"python3", "-c", "print(1)"}}); err != nil || res.ExitCode != 0 {
				t.Fatalf("Run before the cut: %v %+v", err, res)
			}

			p.Cut()
			if err := s.Close(); err == nil {
				t.Fatal("Close with the engine gone: nil, want the removal error")
			}
			if n := b.Pending(); n != 1 {
				t.Fatalf("Pending after the failed Close = %d, want 1", n)
			}
			if n := sessionContainers(t, real, name); n != 1 {
				t.Fatalf("containers of session %s after the failed Close = %d, want 1", name, n)
			}
			// With the engine still gone, Start fails (it does not hang on
			// the retry) and the leftover stays recorded.
			if _, err := b.Start(ctx, spec); err == nil {
				t.Fatal("Start with the engine gone succeeded")
			} else if ctx.Err() != nil {
				t.Fatalf("Start with the engine gone ended only at the test's deadline: %v", err)
			}
			if n := b.Pending(); n != 1 {
				t.Fatalf("Pending after a Start with the engine gone = %d, want 1", n)
			}

			if err := p.Restore(); err != nil {
				t.Fatal(err)
			}
			tt.retry(t, b, other)
			if n := sessionContainers(t, real, name); n != 0 {
				t.Errorf("containers of session %s after the engine came back = %d, want 0", name, n)
			}
			if n := b.Pending(); n != 0 {
				t.Errorf("Pending after the engine came back = %d, want 0", n)
			}
		})
	}
}
