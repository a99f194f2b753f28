package docker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// volumeLockDir holds the lock files of shared cache volumes.
func volumeLockDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "fixpoint", "volume-locks")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-volume-locks-%d", os.Getuid()))
}

// lockVolume takes a cross-process lock on the shared volume name, so that
// two fixpoint processes on this host never create and fill the same
// volume at once: the second would either extract the same tar over the
// first one's files ("mkdir …: file exists") or find the volume present
// and trust it before it is filled. The second waits, then finds the
// volume complete (or gone, if the first failed, and fills it itself).
// It is an flock, released by the kernel however its holder exits; a
// cancelled ctx stops the wait.
func lockVolume(ctx context.Context, dir, name string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("volume lock: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, name+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("volume lock: %w", err)
	}
	for {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		} else if err != syscall.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("volume lock %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another fixpoint process to fill volume %s: %w", name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
