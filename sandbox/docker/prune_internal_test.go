package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestPruneCacheVolumes: `fixpoint cache prune` removes the docker cache
// volumes (label fixpoint.cache) that no container uses until the rest
// fit the cap; a volume a container mounts is kept and reported; a
// dependency setup's caches go with their done marker, as one. Only this
// test's volumes are considered (the engine is shared).
func TestPruneCacheVolumes(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	const image = "fixpoint-sandbox-python"
	sandboxtest.RequireImage(t, cli, image)
	b, err := New(t.Context(), &Options{Client: cli})
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("%d", time.Now().UnixNano())
	const testLabel = "fixpoint.test.prune"
	old := pruneMatch
	pruneMatch = func(l map[string]string) bool { return l[testLabel] == id }
	t.Cleanup(func() { pruneMatch = old })

	const mib = 1 << 20
	mk := func(name string, size int, labels map[string]string) string {
		name = "fixpoint-test-prune-" + id + "-" + name
		labels[testLabel] = id
		if _, err := cli.VolumeCreate(t.Context(), volume.CreateOptions{Name: name, Labels: labels}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cli.VolumeRemove(context.Background(), name, true) })
		if size > 0 {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			tw.WriteHeader(&tar.Header{Name: "blob", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(size)})
			tw.Write(make([]byte, size))
			tw.Close()
			if err := b.fillVolume(t.Context(), image, name, io.Reader(&buf)); err != nil {
				t.Fatal(err)
			}
		}
		return name
	}
	used := mk("used", mib, map[string]string{LabelCache: "gocache"})
	free1 := mk("free1", mib, map[string]string{LabelCache: "gocache"})
	free2 := mk("free2", mib, map[string]string{LabelCache: "toolchaincache"})
	deps := mk("deps", mib, map[string]string{LabelCache: cacheKindDeps, labelSetupKey: "k" + id})
	done := mk("done", 0, map[string]string{LabelCache: cacheKindDeps, labelSetupKey: "k" + id, labelSetupDone: "1"})
	// A container (created, never started: a session's) mounts used.
	c, err := cli.ContainerCreate(t.Context(), &container.Config{Image: image, Entrypoint: []string{"/nonexistent"}, Labels: ownerLabels("prune-test-" + id)},
		&container.HostConfig{Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: used, Target: "/c"}}}, nil, nil, "fixpoint-test-prune-"+id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true}) })

	exists := func(name string) bool { _, err := cli.VolumeInspect(t.Context(), name); return err == nil }

	var removed [][]string
	// A cap of 3.5 MiB over 4 MiB: one group goes, the rest stays.
	rep, err := PruneCacheVolumes(t.Context(), cli, 3*mib+mib/2)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Before < 4*mib || rep.After > 3*mib+mib/2 || len(rep.Removed) != 1 {
		t.Errorf("cap 3.5 MiB: before %d, after %d, removed %+v; want one group removed", rep.Before, rep.After, rep.Removed)
	}
	if !exists(used) {
		t.Errorf("the volume a container uses was removed")
	}
	for _, g := range rep.Removed {
		removed = append(removed, g.Names)
	}

	// Cap 0: everything no container uses.
	rep, err = PruneCacheVolumes(t.Context(), cli, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{free1, free2, deps, done} {
		if exists(v) {
			t.Errorf("cap 0 kept %s, which no container uses", v)
		}
	}
	if !exists(used) || len(rep.KeptInUse) != 1 || rep.KeptInUse[0].Names[0] != used {
		t.Errorf("cap 0: kept %+v, want %s reported in use and kept", rep.KeptInUse, used)
	}
	for _, g := range rep.Removed {
		removed = append(removed, g.Names)
	}
	// The setup's cache and its marker went as one group, marker first.
	if !slices.ContainsFunc(removed, func(g []string) bool { return slices.Equal(g, []string{done, deps}) }) {
		t.Errorf("removed groups %v, want [%s %s] as one", removed, done, deps)
	}
}
