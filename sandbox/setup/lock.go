package setup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockPoll is how often a waiting setup retries the lock.
const lockPoll = 200 * time.Millisecond

// defaultLockDir is where setup locks live when Options.LockDir is "":
// the user's cache directory, shared by every fixpoint process of the
// user (the editor's server and the CLI).
func defaultLockDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "fixpoint", "setup-locks")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-setup-locks-%d", os.Getuid()))
}

// lockSetup takes the cross-process lock of one setup (backend and cache
// key), so that two fixpoint processes never install the same caches at
// once: the second one waits, calling waiting once, and then finds the
// first one's result cached. The lock is an flock on a file in dir, so
// the kernel releases it when its holder exits, however it exits. A
// cancelled ctx stops the wait.
func lockSetup(ctx context.Context, dir, backend, key string, waiting func()) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("setup lock: %w", err)
	}
	path := filepath.Join(dir, backend+"-"+key+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("setup lock: %w", err)
	}
	release := func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return release, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("setup lock %s: %w", path, err)
		}
		if !told {
			told = true
			waiting()
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}
