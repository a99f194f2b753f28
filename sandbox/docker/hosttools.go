package docker

import (
	"context"
	"fmt"
	"path"
	"path/filepath"

	"github.com/docker/docker/api/types/mount"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// copyTools offers the spec's Copy host tools (sandbox.HostTool: a
// rustup toolchain a native run uses): each directory is copied once into
// a volume keyed by its listing (ensureHostTree; symlinks left out) and
// mounted read-only at its Target. It returns the mounts, the directories
// to put first on PATH and the tools' environment. Other tools (the
// rustup proxies bwrap binds) and a Copy tool without Dir (a Note saying
// why there is none) offer nothing here.
func (b *Backend) copyTools(ctx context.Context, image string, tools []sandbox.HostTool) (ms []mount.Mount, pathDirs, env []string, err error) {
	for _, t := range tools {
		if !t.Copy || t.Dir == "" {
			continue
		}
		if !filepath.IsAbs(t.Dir) || !path.IsAbs(t.Target) || path.Clean(t.Target) != t.Target || t.Target == "/" || t.Target == workspaceDir || t.Target == supervisorDir {
			return nil, nil, nil, fmt.Errorf("host tool %s: cannot be offered at %q", t.Dir, t.Target)
		}
		vol, err := b.ensureHostTree(ctx, image, "toolchain", t.Dir, t.Skip)
		if err != nil {
			return nil, nil, nil, err
		}
		ms = append(ms, mount.Mount{Type: mount.TypeVolume, Source: vol, Target: t.Target, ReadOnly: true})
		if t.OnPath {
			pathDirs = append(pathDirs, t.Target+"/bin")
		}
		env = append(env, t.Env...)
	}
	return ms, pathDirs, env, nil
}
