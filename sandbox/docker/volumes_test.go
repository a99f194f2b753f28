package docker_test

import (
	"cmp"
	"context"
	"os"
	"regexp"
	"testing"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestSessionCloseRemovesAnonymousVolumes: a fresh session's anonymous
// volumes (the Go build cache Docker fills from the image) go with its
// container when the session closes; left behind, every verifying run
// would leave a volume on the engine until the disk fills (held-out mutant
// sandbox-docker-remove-volumes-leak).
func TestSessionCloseRemovesAnonymousVolumes(t *testing.T) {
	image := cmp.Or(os.Getenv("FIXPOINT_TEST_GO_IMAGE"), "fixpoint-sandbox-go")
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, image)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s, err := b.Start(t.Context(), sandbox.Spec{Image: image, BuildCache: sandbox.BuildCacheFresh})
	if err != nil {
		t.Fatal(err)
	}
	id := s.(*docker.Session).ContainerID()
	info, err := cli.ContainerInspect(t.Context(), id)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	anonymous := regexp.MustCompile(`^[0-9a-f]{64}$`)
	var vols []string
	for _, m := range info.Mounts {
		if m.Type == "volume" && anonymous.MatchString(m.Name) {
			vols = append(vols, m.Name)
		}
	}
	t.Cleanup(func() {
		for _, v := range vols {
			cli.VolumeRemove(context.Background(), v, true)
		}
	})
	if len(vols) == 0 {
		s.Close()
		t.Fatalf("a fresh session of %s has no anonymous volume (mounts %+v): the image lost its Go build cache label?", image, info.Mounts)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, v := range vols {
		if _, err := cli.VolumeInspect(t.Context(), v); !cerrdefs.IsNotFound(err) {
			t.Errorf("anonymous volume %s of the closed session: %v, want it removed", v, err)
		}
	}
}
