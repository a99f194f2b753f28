package docker_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestRunnerCache: a session that asks for the runners' cache finds what
// an earlier such session of the same project left in jest's default
// cache directory, and can write there; a session that does not ask for
// it (one that may run model-written code) and another project's session
// start with it empty.
func TestRunnerCache(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, testImage)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	project := "ca" + strings.Repeat("fe", 7)
	t.Cleanup(func() { removeRunnerCaches(cli, project) })
	const script = `d=$1; cat "$d/entry" 2>/dev/null || echo none
mkdir -p "$d" && echo "$2" > "$d/entry" && echo wrote`
	run := func(name string, spec sandbox.Spec, value string) string {
		t.Helper()
		sess, err := b.Start(t.Context(), spec)
		if err != nil {
			t.Fatalf("%s: Start: %v", name, err)
		}
		defer sess.Close()
		id, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"id", "-u"}})
		if err != nil {
			t.Fatalf("%s: id -u: %v", name, err)
		}
		uid, err := strconv.Atoi(strings.TrimSpace(string(id.Stdout)))
		if err != nil {
			t.Fatalf("%s: id -u: %q", name, id.Stdout)
		}
		// jest's default cache directory for the sandbox user.
		res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", script, "sh", docker.JestCacheDir(uid), value}})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%s: Run: %v exit %d %s%s", name, err, res.ExitCode, res.Stdout, res.Stderr)
		}
		return strings.TrimSpace(string(res.Stdout))
	}
	spec := func(p string, persist bool) sandbox.Spec {
		return sandbox.Spec{Image: testImage, Labels: map[string]string{sandbox.LabelProject: p}, RunnerCache: persist}
	}
	steps := []struct {
		name string
		spec sandbox.Spec
		want string
	}{
		{"first trusted session", spec(project, true), "none\nwrote"},
		{"second trusted session", spec(project, true), "first trusted session\nwrote"},
		{"a session that may run model code", spec(project, false), "none\nwrote"},
		{"third trusted session", spec(project, true), "second trusted session\nwrote"},
		{"another project", spec("be"+strings.Repeat("ef", 7), true), "none\nwrote"},
	}
	t.Cleanup(func() { removeRunnerCaches(cli, "be"+strings.Repeat("ef", 7)) })
	for _, s := range steps {
		if got := run(s.name, s.spec, s.name); got != s.want {
			t.Errorf("%s: got %q, want %q", s.name, got, s.want)
		}
	}
}

// removeRunnerCaches removes the test's runner cache volumes: their names
// hash the project, so all runcache volumes unused by any container go
// when they were created by this test run (the reaper prunes the rest).
func removeRunnerCaches(cli interface {
	VolumeList(context.Context, volume.ListOptions) (volume.ListResponse, error)
	VolumeRemove(context.Context, string, bool) error
}, project string) {
	ctx := context.Background()
	list, err := cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", "fixpoint.cache=runcache"))})
	if err != nil {
		return
	}
	for _, v := range list.Volumes {
		if strings.Contains(v.Name, "-"+docker.ProjectHash(project)+"-") {
			cli.VolumeRemove(ctx, v.Name, true)
		}
	}
}
