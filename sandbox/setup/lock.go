package setup

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fixpoint-dev/fixpoint/flock"
)

// defaultLockDir is where setup locks live when Options.LockDir is "":
// the user's cache directory, shared by every fixpoint process of the
// user (the editor's server and the CLI).
func defaultLockDir() string { return flock.Dir("setup-locks") }

// lockSetup takes the cross-process lock of one setup (backend and cache
// key), so that two fixpoint processes never install the same caches at
// once: the second one waits, calling waiting once, and then finds the
// first one's result cached. A cancelled ctx stops the wait.
func lockSetup(ctx context.Context, dir, backend, key string, waiting func()) (unlock func(), err error) {
	unlock, err = flock.Lock(ctx, filepath.Join(dir, backend+"-"+key+".lock"), waiting)
	if err != nil {
		return nil, fmt.Errorf("setup lock: %w", err)
	}
	return unlock, nil
}
