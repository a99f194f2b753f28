package docker_test

import (
	"errors"
	"testing"

	"github.com/docker/docker/client"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

func TestNewUnavailable(t *testing.T) {
	dead, err := client.NewClientWithOpts(client.WithHost("tcp://127.0.0.1:1"), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	if _, err := docker.New(t.Context(), &docker.Options{Client: dead}); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("New with no engine = %v, want ErrUnavailable", err)
	}
	cli := sandboxtest.RequireDocker(t)
	if _, err := docker.New(t.Context(), &docker.Options{Client: cli, Runtime: "no-such-runtime"}); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("New with an unknown runtime = %v, want ErrUnavailable", err)
	}
}

func TestStartImageMissing(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, img := range []string{"", "fixpoint-no-such-image:latest"} {
		if s, err := b.Start(t.Context(), sandbox.Spec{Image: img}); !errors.Is(err, sandbox.ErrImageMissing) {
			if s != nil {
				s.Close()
			}
			t.Errorf("Start(image %q) = %v, want ErrImageMissing", img, err)
		}
	}
	if b.Name() != "docker" {
		t.Errorf("Name() = %q", b.Name())
	}
}
