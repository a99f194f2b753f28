package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/docker/docker/api/types"

	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

func TestResolveHost(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		exists []string
		want   string
	}{
		{"DOCKER_HOST wins", map[string]string{"DOCKER_HOST": "tcp://build:2376", "CONTAINER_HOST": "unix:///p.sock"}, []string{engine.DockerSocket}, "tcp://build:2376"},
		{"CONTAINER_HOST next", map[string]string{"CONTAINER_HOST": "unix:///run/user/1000/podman/podman.sock"}, []string{engine.DockerSocket}, "unix:///run/user/1000/podman/podman.sock"},
		{"local docker socket", map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}, []string{engine.DockerSocket, "/run/user/1000/podman/podman.sock"}, "unix://" + engine.DockerSocket},
		{"rootless podman socket", map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}, []string{"/run/user/1000/podman/podman.sock"}, "unix:///run/user/1000/podman/podman.sock"},
		{"nothing: the usual place", map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}, nil, "unix://" + engine.DockerSocket},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exists := func(p string) bool {
				for _, e := range tt.exists {
					if e == p {
						return true
					}
				}
				return false
			}
			if got := engine.ResolveHost(func(k string) string { return tt.env[k] }, exists); got != tt.want {
				t.Errorf("resolveHost = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestKind(t *testing.T) {
	var podman types.Version
	podman.Platform.Name = "linux/amd64/debian-12"
	podman.Components = []types.ComponentVersion{{Name: "Podman Engine", Version: "4.3.1"}}
	var docker types.Version
	docker.Platform.Name = ""
	docker.Components = []types.ComponentVersion{{Name: "Engine"}, {Name: "containerd"}, {Name: "runc"}}
	var desktop types.Version
	desktop.Platform.Name = "Docker Desktop 4.30.0 (149282)"
	for _, tc := range []struct {
		name string
		v    types.Version
		want string
	}{{"podman", podman, "podman"}, {"docker", docker, "docker"}, {"docker desktop", desktop, "docker"}} {
		if got := engine.Kind(tc.v); got != tc.want {
			t.Errorf("Kind(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSSH reaches the local engine through an ssh:// address. The ssh
// client is replaced by a script that runs the remote command locally, so
// this covers everything but ssh itself: the command line, `docker system
// dial-stdio`, and the API over the command's stdin and stdout.
func TestSSH(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	cli.Close()
	sandboxtest.RequireCommand(t, "docker")
	dir := t.TempDir()
	fake := filepath.Join(dir, "ssh")
	args := filepath.Join(dir, "args")
	// Everything after "--" and the host is the remote command.
	script := "#!/bin/sh\necho \"$@\" > " + args + "\nwhile [ \"$1\" != \"--\" ]; do shift; done\nshift 2\nunset DOCKER_HOST\nexec \"$@\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(engine.SetSSHCommand(fake))
	t.Setenv("CONTAINER_HOST", "")
	t.Setenv("DOCKER_HOST", "ssh://builder@build.example:2222")
	c, err := engine.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := c.ServerVersion(t.Context())
	if err != nil {
		t.Fatalf("ServerVersion over ssh://: %v", err)
	}
	if v.Version == "" {
		t.Errorf("empty version over ssh://")
	}
	got, _ := os.ReadFile(args)
	want := "-o ConnectTimeout=10 -o BatchMode=yes -l builder -p 2222 -- build.example docker system dial-stdio\n"
	if string(got) != want {
		t.Errorf("ssh command line %q, want %q", got, want)
	}
}
