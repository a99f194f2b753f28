package image

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/image"

	"github.com/fixpoint-dev/fixpoint/lang/python"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestBuildDockerfile builds a project Dockerfile on top of the python
// image: a failing RUN step is an error quoting its output (ImageBuild
// itself reports success), a good one builds once and is then reused.
func TestBuildDockerfile(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-python")
	ctx := t.Context()

	bad := t.TempDir()
	df := filepath.Join(bad, "Dockerfile")
	os.WriteFile(df, []byte("FROM fixpoint-sandbox-python\nRUN echo about-to-fail-7731 && exit 3\n"), 0o644)
	name := ProjectImageName(df, nil)
	_, err := BuildDockerfile(ctx, cli, df, name, nil)
	if err == nil || !strings.Contains(err.Error(), "about-to-fail-7731") {
		t.Errorf("BuildDockerfile(failing RUN) = %v, want an error quoting the step output", err)
	}

	good := t.TempDir()
	df = filepath.Join(good, "Dockerfile")
	os.WriteFile(filepath.Join(good, "marker.txt"), []byte("from-context\n"), 0o644)
	os.WriteFile(df, []byte("FROM fixpoint-sandbox-python\nCOPY marker.txt /opt/marker.txt\n"), 0o644)
	name = ProjectImageName(df, nil)
	// The name is a content hash: drop a leftover of an earlier run first.
	cli.ImageRemove(ctx, name, image.RemoveOptions{Force: true})
	t.Cleanup(func() { cli.ImageRemove(context.Background(), name, image.RemoveOptions{Force: true}) })
	built, err := BuildDockerfile(ctx, cli, df, name, nil)
	if err != nil || !built {
		t.Fatalf("BuildDockerfile = %v, %v; want built", built, err)
	}
	insp, err := cli.ImageInspect(ctx, name)
	if err != nil || insp.Config.Labels[LabelLang] != "project" {
		t.Errorf("built image %s: %v, labels %v", name, err, insp.Config)
	}
	built, err = BuildDockerfile(ctx, cli, df, name, nil)
	if err != nil || built {
		t.Errorf("second BuildDockerfile = %v, %v; want reused", built, err)
	}
}

// TestStatus checks the up-to-date logic against the engine: the python
// image, when present, reports its recipe; a missing image is not an error.
func TestStatus(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	if _, err := cli.ImageInspect(t.Context(), "fixpoint-no-such-image-xyz"); !isNotFound(err) {
		t.Fatalf("ImageInspect(missing) = %v, not recognised as not found", err)
	}
	b, err := NewBuilder(&Options{Client: cli})
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.Status(t.Context(), python.Language{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Present && st.Have == "" {
		t.Errorf("fixpoint-sandbox-python has no %s label", LabelRecipe)
	}
	if st.UpToDate != (st.Present && st.Have == st.Want) {
		t.Errorf("Status = %+v: UpToDate inconsistent", st)
	}
}
