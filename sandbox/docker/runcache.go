package docker

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// cacheKindRunner labels the test runners' cache volumes.
const cacheKindRunner = "runcache"

// JestCacheDir is where jest keeps its transform cache when the project
// configures none: os.tmpdir()/jest_<uid in base 36> (jest-config's
// default cacheDirectory). Sessions have TMPDIR=/tmp.
func JestCacheDir(uid int) string { return "/tmp/jest_" + strconv.FormatInt(int64(uid), 36) }

// runnerCacheMount returns a writable per-project volume over jest's
// default cache directory, so that ts-jest and babel-jest do not compile
// every file again in every session; nil when spec does not ask for one
// (Spec.RunnerCache) or names no project.
//
// jest keys each entry by the file's content, the jest and transformer
// versions and the configuration, so an honest edit never reads a stale
// entry. What makes it safe against a model is who may write it: only
// sessions that run no model-written code ask for it (fixpoint test), and
// it is per image and project like the Go build cache, so no other
// project reads it.
func (b *Backend) runnerCacheMount(ctx context.Context, spec sandbox.Spec, user string) (*mount.Mount, error) {
	project := spec.Labels[LabelProject]
	if !spec.RunnerCache || project == "" {
		return nil, nil
	}
	uid, err := strconv.Atoi(strings.Split(user, ":")[0])
	if err != nil || uid <= 0 {
		return nil, nil
	}
	img, err := b.cli.ImageInspect(ctx, spec.Image)
	if err != nil {
		return nil, fmt.Errorf("inspect image %s: %w", spec.Image, err)
	}
	name := fmt.Sprintf("fixpoint-runcache-%s-%s-%d", shortImageID(img.ID), projectHash(project), uid)
	if _, err := b.cli.VolumeInspect(ctx, name); cerrdefs.IsNotFound(err) {
		if err := b.newRunnerCache(ctx, spec.Image, name, img.ID, user); err != nil {
			// The cache only saves time: run without it.
			b.log.Warn("no persistent test runner cache", "volume", name, "err", err)
			return nil, nil
		}
	} else if err != nil {
		return nil, fmt.Errorf("inspect volume %s: %w", name, err)
	}
	return &mount.Mount{Type: mount.TypeVolume, Source: name, Target: JestCacheDir(uid)}, nil
}

// projectHash names a project in its cache volumes.
func projectHash(project string) string {
	sum := sha256.Sum256([]byte(project))
	return fmt.Sprintf("%x", sum[:6])
}

// newRunnerCache creates the volume and hands it to user through a
// one-shot container that may only chown. A volume whose chown failed is
// removed, so that no session mounts a directory it cannot write (jest
// fails on a cache it cannot write).
func (b *Backend) newRunnerCache(ctx context.Context, image, name, imageID, user string) error {
	labels := map[string]string{LabelCache: cacheKindRunner, labelGoCacheImage: imageID}
	if _, err := b.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Labels: labels}); err != nil {
		return fmt.Errorf("create volume %s: %w", name, err)
	}
	if err := b.chownVolume(ctx, image, name, user); err != nil {
		b.cli.VolumeRemove(context.WithoutCancel(ctx), name, true)
		return err
	}
	return nil
}

func (b *Backend) chownVolume(ctx context.Context, image, name, user string) error {
	cname := newSessionName() + "-chown"
	cfg := &container.Config{Image: image, User: "0:0", Entrypoint: []string{"chown", user, "/fill"},
		NetworkDisabled: true, Labels: ownerLabels(cname)}
	hc := &container.HostConfig{NetworkMode: "none", CapDrop: []string{"ALL"}, CapAdd: []string{"CHOWN"},
		SecurityOpt: []string{"no-new-privileges"}, ReadonlyRootfs: true, Runtime: b.opts.Runtime,
		Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: name, Target: "/fill"}}}
	created, err := b.createContainer(ctx, cfg, hc, cname, cname)
	if err != nil {
		return fmt.Errorf("chown volume %s: %w", name, err)
	}
	defer b.removeOrDefer(context.WithoutCancel(ctx), removeTimeout, leftover{id: created.ID, session: cname})
	wait, werr := b.cli.ContainerWait(ctx, created.ID, container.WaitConditionNextExit)
	if err := b.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return fmt.Errorf("chown volume %s: %w", name, err)
	}
	select {
	case st := <-wait:
		if st.StatusCode != 0 {
			return fmt.Errorf("chown volume %s: exit code %d", name, st.StatusCode)
		}
		return nil
	case err := <-werr:
		return fmt.Errorf("chown volume %s: %w", name, err)
	}
}
