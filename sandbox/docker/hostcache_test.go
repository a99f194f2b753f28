package docker_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/lang/golang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

func TestGoModCache(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, testImage)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	cache := t.TempDir()
	t.Setenv("GOMODCACHE", cache) // the host cache lang/golang offers
	mod := filepath.Join(cache, "example.com", "m@v1.0.0")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "m.go"), []byte("package m\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	start := func() *docker.Session {
		sess, err := b.Start(t.Context(), sandbox.Spec{Image: testImage, Caches: golang.Language{}.HostCaches(nil)})
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		s := sess.(*docker.Session)
		t.Cleanup(func() {
			s.Close()
			cli.VolumeRemove(context.Background(), s.HostCacheVolume("/gomodcache"), true)
		})
		return s
	}
	s1 := start()
	res, err := s1.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", "echo $GOMODCACHE; cat $GOMODCACHE/example.com/m@v1.0.0/m.go; touch $GOMODCACHE/x 2>&1; true"}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	out := string(res.Stdout)
	if !strings.HasPrefix(out, "/gomodcache\npackage m\n") || !strings.Contains(out, "Read-only file system") {
		t.Errorf("module cache in the sandbox: %q, want it readable and read-only", out)
	}
	s2 := start()
	if s1.HostCacheVolume("/gomodcache") != s2.HostCacheVolume("/gomodcache") {
		t.Errorf("an unchanged cache got a new volume: %s then %s", s1.HostCacheVolume("/gomodcache"), s2.HostCacheVolume("/gomodcache"))
	}
	later := time.Now().Add(time.Minute)
	os.WriteFile(filepath.Join(mod, "n.go"), []byte("package m\n"), 0o444)
	os.Chtimes(filepath.Join(mod, "n.go"), later, later)
	s3 := start()
	if s3.HostCacheVolume("/gomodcache") == s2.HostCacheVolume("/gomodcache") {
		t.Errorf("a changed cache kept volume %s", s3.HostCacheVolume("/gomodcache"))
	}
	res, err = s3.Run(t.Context(), sandbox.Command{Args: []string{"ls", "/gomodcache/example.com/m@v1.0.0"}})
	if err != nil || string(res.Stdout) != "m.go\nn.go\n" {
		t.Errorf("ls of the refreshed cache = %q, %v", res.Stdout, err)
	}
}
