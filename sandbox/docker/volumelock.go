package docker

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fixpoint-dev/fixpoint/flock"
)

// volumeLockDir holds the lock files of shared cache volumes: one per
// user, whatever the HOME of the process (the volumes are the engine's).
func volumeLockDir() string { return flock.UserDir("volume-locks") }

// lockVolume takes a cross-process lock on the shared volume name, so that
// two fixpoint processes on this host never create and fill the same
// volume at once: the second would either extract the same tar over the
// first one's files ("mkdir …: file exists") or find the volume present
// and trust it before it is filled. The second waits, then finds the
// volume complete (or gone, if the first failed, and fills it itself).
// A cancelled ctx stops the wait.
func lockVolume(ctx context.Context, dir, name string) (unlock func(), err error) {
	unlock, err = flock.Lock(ctx, filepath.Join(dir, name+".lock"), nil)
	if err != nil {
		return nil, fmt.Errorf("waiting for another fixpoint process to fill volume %s: %w", name, err)
	}
	return unlock, nil
}
