package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/cachedir"
)

// `fixpoint cache prune --max 0` removes every project's caches that no
// session uses, says what it freed, and keeps the one in use.
func TestCachePruneCommand(t *testing.T) {
	root := t.TempDir()
	t.Setenv(cachedir.EnvDir, root)
	for _, d := range []string{"gocache/aaaa-user", "gocache/aaaa-model", "gocache/bbbb-user", "deps/aaaa/key1"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "entry"), make([]byte, 2048), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	release, err := cachedir.Use(filepath.Join(root, "gocache"), "bbbb")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	c := newLoopCLI(t)
	// --volumes=false: the engine is shared; docker's part has its own
	// test on its own volumes (sandbox/docker TestPruneCacheVolumes).
	code, out, stderr := c.run(t.Context(), "cache", "prune", "--max", "0", "--volumes=false")
	if code != exitOK {
		t.Fatalf("cache prune = %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	for _, want := range []string{"removed 4.0 KiB\t" + filepath.Join(root, "gocache", "aaaa*"), "removed 2.0 KiB\t" + filepath.Join(root, "deps", "aaaa*"),
		"a session uses it", "freed 6.0 KiB: 8.0 KiB → 2.0 KiB (cap 0 B)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "docker") {
		t.Errorf("--volumes=false touched docker:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(root, "gocache", "bbbb-user", "entry")); err != nil {
		t.Errorf("the cache in use was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "gocache", "aaaa-user")); err == nil {
		t.Error("an unused cache survived --max 0")
	}
	if code, _, stderr := c.run(t.Context(), "cache", "tidy"); code != exitUsage || !strings.Contains(stderr, "prune or size") {
		t.Errorf("cache tidy = %d, %q; want a usage error naming the subcommands", code, stderr)
	}
}
