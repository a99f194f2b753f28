package docker_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestImageRootUserRunsAsNobody: an image whose USER is root (by number or
// by name) does not make the tests run as root: commands run as nobody,
// and cannot create a user namespace either.
func TestImageRootUserRunsAsNobody(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, testImage)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	b, err := docker.New(ctx, &docker.Options{Client: cli})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for i, user := range []string{"0", "0:0", "root"} {
		t.Run(user, func(t *testing.T) {
			// The test image with another USER: a container is created
			// (never started) and committed with the new config.
			ref := fmt.Sprintf("fixpoint-test-rootuser:%d-%d", os.Getpid(), i)
			c, err := cli.ContainerCreate(ctx, &container.Config{Image: testImage, Cmd: []string{"true"}}, nil, nil, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = cli.ContainerCommit(ctx, c.ID, container.CommitOptions{Reference: ref, Config: &container.Config{User: user}})
			cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
			if err != nil {
				t.Fatal(err)
			}
			defer cli.ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true, PruneChildren: true})
			if img, err := cli.ImageInspect(ctx, ref); err != nil || img.Config == nil || img.Config.User != user {
				t.Fatalf("the derived image's USER is not %q: %v", user, err)
			}
			sess, err := b.Start(ctx, sandbox.Spec{Image: ref})
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			s := sess.(*docker.Session)
			defer func() {
				s.Close()
				sandboxtest.RequireNoContainers(t, cli, docker.LabelSession, s.Name())
			}()
			res, err := s.Run(ctx, sandbox.Command{Args: []string{"sh", "-c", "id -u; id -g; unshare --user true 2>/dev/null && echo NESTED-USERNS; true"}})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if strings.Contains(string(res.Stdout), "NESTED-USERNS") {
				t.Errorf("image USER %q: the command created a user namespace", user)
			}
			if got := strings.Fields(string(res.Stdout)); len(got) < 2 || got[0] != "65534" || got[1] != "65534" {
				t.Errorf("image USER %q: the command ran as uid, gid %q, want 65534 65534 (nobody)\n%s", user, got, res.Stderr)
			}
		})
	}
}
