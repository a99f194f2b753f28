package docker_test

import (
	"cmp"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// The node image runs a project whose `npm test` is `make test` (it
// failed with "make: not found"). FIXPOINT_TEST_NODE_IMAGE names another
// image to check (one built with `sandbox images build --tag`).
func TestNodeImageRunsMakeTest(t *testing.T) {
	img := cmp.Or(os.Getenv("FIXPOINT_TEST_NODE_IMAGE"), "fixpoint-sandbox-node")
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, img)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Start(t.Context(), sandbox.Spec{Image: img})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"package.json": {Data: []byte(`{"name":"m","version":"1.0.0","scripts":{"test":"make test"}}` + "\n")},
		"Makefile":     {Data: []byte("test:\n\tnode -e 'console.log(\"made \" + (1+1))'\n")},
	}}
	if _, err := s.Sync(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"npm", "test"}, Limits: sandbox.Limits{Timeout: 2 * time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "made 2") {
		t.Fatalf("npm test (make test) in %s: exit %d\n%s\n%s", img, res.ExitCode, res.Stdout, res.Stderr)
	}
}
