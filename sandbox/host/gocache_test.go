package host_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/cachedir"
	"github.com/fixpoint-dev/fixpoint/sandbox/host"
)

// The none backend keeps a project's Go build cache between sessions, so
// that a second run does not recompile everything.
func TestHostGoCachePerProject(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv(cachedir.EnvDir, "") // the default root, in the user cache
	b, err := host.New(&host.Options{Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	gocache := func(project string) string {
		spec := sandbox.Spec{Labels: map[string]string{}}
		if project != "" {
			spec.Labels[sandbox.LabelProject] = project
		}
		s, err := b.Start(t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", `echo "$GOCACHE"`}})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("run: %v %+v", err, res)
		}
		return strings.TrimSpace(string(res.Stdout))
	}
	a1, a2, other, none := gocache("aaaa"), gocache("aaaa"), gocache("bbbb"), gocache("")
	if a1 == "" || a1 != a2 || !strings.HasPrefix(a1, os.Getenv("XDG_CACHE_HOME")) {
		t.Errorf("GOCACHE of project aaaa = %q then %q, want one directory in the user cache", a1, a2)
	}
	if other == a1 || filepath.Dir(other) != filepath.Dir(a1) {
		t.Errorf("project bbbb shares aaaa's cache: %q", other)
	}
	if none != "" {
		t.Errorf("a session without a project got GOCACHE %q", none)
	}
}
