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

// goCacheMount returns a writable named volume over the image's Go build
// cache directory, or nil when the image has none. Docker fills a new
// volume from the image's directory on first mount: in fixpoint's go image
// (Go 1.25+) that directory is empty and the prebuilt standard library is
// served read-only from the image by its GOCACHEPROG (image.GoCacheProg),
// so nothing is copied; an image that keeps its prebuilt cache there
// (an older Go) has it copied. Either way the first session of a project
// starts with the standard library compiled, and later sessions also
// reuse what earlier runs compiled of the project.
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
	return &mount.Mount{
		Type:   mount.TypeVolume,
		Source: goCacheVolume(img.ID, spec.Labels[LabelProject], spec.BuildCache),
		Target: dir,
		VolumeOptions: &mount.VolumeOptions{Labels: map[string]string{
			LabelCache: "gocache", labelGoCacheImage: img.ID,
		}},
	}, nil
}

// goCacheVolume names the persistent Go build cache volume of an image, a
// project and a kind of code.
func goCacheVolume(imageID, project string, kind sandbox.BuildCache) string {
	if project == "" {
		project = "shared"
	}
	sum := sha256.Sum256([]byte(project + kind.Suffix()))
	return fmt.Sprintf("fixpoint-gocache-%s-%x", shortImageID(imageID), sum[:6])
}

// goCacheSeedDir is where a fresh session sees its seed, read-only.
const goCacheSeedDir = "/gocache-seed"

// goCacheSeed returns, for a fresh session (sandbox.BuildCacheFresh) of an
// image with a Go build cache, a read-only mount of the project's user
// cache volume (sandbox.BuildCacheUser) at goCacheSeedDir and the cache
// directory to copy it into; nil when there is no such volume. Only
// sessions that run the user's own code write that volume (fixpoint test,
// a run's baseline), so a fresh cache that starts as its copy holds
// nothing a model's code wrote, and the verifying run recompiles only
// what the final edit changed. The mount stays read-only for the whole
// session: the code the session runs can read the user's compiled
// packages (it has their sources) and cannot change them.
func (b *Backend) goCacheSeed(ctx context.Context, spec sandbox.Spec) (*mount.Mount, string, error) {
	if spec.BuildCache != sandbox.BuildCacheFresh || spec.Labels[LabelProject] == "" {
		return nil, "", nil
	}
	img, err := b.cli.ImageInspect(ctx, spec.Image)
	if err != nil {
		return nil, "", fmt.Errorf("inspect image %s: %w", spec.Image, err)
	}
	if img.Config == nil || img.Config.Labels[labelGoCache] == "" {
		return nil, "", nil
	}
	name := goCacheVolume(img.ID, spec.Labels[LabelProject], sandbox.BuildCacheUser)
	if _, err := b.cli.VolumeInspect(ctx, name); err != nil {
		return nil, "", nil // none yet (or the engine cannot say): start from the image's
	}
	return &mount.Mount{Type: mount.TypeVolume, Source: name, Target: goCacheSeedDir, ReadOnly: true}, img.Config.Labels[labelGoCache], nil
}

// seedGoCache copies the seed (goCacheSeed) into the session's fresh Go
// build cache, keeping what the image put there. A failed copy costs a
// slower run (entries missing or cut short are misses to Go, which checks
// each output's size), not a wrong one: it is logged and the session
// goes on.
func (s *Session) seedGoCache(ctx context.Context) {
	if s.seedInto == "" {
		return
	}
	res, err := s.Run(ctx, sandbox.Command{Args: []string{"cp", "-Rn", goCacheSeedDir + "/.", s.seedInto + "/"}})
	switch {
	case err != nil:
		s.b.log.Warn("sandbox: copying the user's Go build cache into a fresh session", "err", err)
	case res.ExitCode != 0:
		s.b.log.Warn("sandbox: copying the user's Go build cache into a fresh session", "exit", res.ExitCode, "stderr", string(res.Stderr))
	}
}

func shortImageID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		id = id[:12]
	}
	return id
}
