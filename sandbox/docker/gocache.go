package docker

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/docker/docker/api/types/mount"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Labels of the Go build cache: an image names the directory of its
// prebuilt cache with labelGoCache (fixpoint's go image does); a Spec names
// its project with LabelProject.
const (
	labelGoCache = "fixpoint.gocache"
	// LabelProject is sandbox.LabelProject.
	LabelProject = sandbox.LabelProject
	// labelGoCacheImage, on a Go build cache volume, is the ID of the
	// image it was filled from; Reap removes it once that image is gone.
	labelGoCacheImage = "fixpoint.image"
)

// goCacheMount returns a writable named volume over the image's prebuilt
// Go build cache, or nil when the image has none. Docker fills a new named
// volume from the image's directory on first mount, so the first session
// of a project starts with the standard library compiled, and later
// sessions also reuse what earlier runs compiled of the project.
//
// The volume is keyed by image, project and kind of code
// (sandbox.BuildCache): a Go build cache written by one project's sandbox
// is never read by another project's, and one written while model code ran
// is never read by `fixpoint test` or by the verifying run, so a model
// cannot plant a poisoned cache entry that changes a result that counts.
// It is not labelled with an owner pid, so the reaper keeps it until its
// image is gone.
func (b *Backend) goCacheMount(ctx context.Context, spec sandbox.Spec) (*mount.Mount, error) {
	img, err := b.cli.ImageInspect(ctx, spec.Image)
	if err != nil {
		return nil, fmt.Errorf("inspect image %s: %w", spec.Image, err)
	}
	if img.Config == nil || img.Config.Labels[labelGoCache] == "" {
		return nil, nil
	}
	dir := img.Config.Labels[labelGoCache]
	if spec.BuildCache == sandbox.BuildCacheFresh {
		// An anonymous volume: Docker fills it from the image's prebuilt
		// cache, and the container's removal (RemoveVolumes) removes it.
		return &mount.Mount{Type: mount.TypeVolume, Target: dir}, nil
	}
	project := spec.Labels[LabelProject]
	if project == "" {
		project = "shared"
	}
	sum := sha256.Sum256([]byte(project + spec.BuildCache.Suffix()))
	name := fmt.Sprintf("fixpoint-gocache-%s-%x", shortImageID(img.ID), sum[:6])
	return &mount.Mount{
		Type:   mount.TypeVolume,
		Source: name,
		Target: dir,
		VolumeOptions: &mount.VolumeOptions{Labels: map[string]string{
			LabelCache: "gocache", labelGoCacheImage: img.ID,
		}},
	}, nil
}

func shortImageID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		id = id[:12]
	}
	return id
}
