// Package flock takes exclusive locks shared by every fixpoint process of
// a host: an flock(2) on a file, which the kernel releases when its holder
// exits, however it exits. The setup phase, the docker backend's shared
// cache volumes and the image builder use it.
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// poll is how often a waiting Lock retries.
const poll = 100 * time.Millisecond

// Dir is the directory for locks of one kind (e.g. "setup-locks"): the
// user's cache directory, shared by the editor's server and the CLI, else
// a per-uid directory under the system's temporary directory.
func Dir(kind string) string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "fixpoint", kind)
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-%s-%d", kind, os.Getuid()))
}

// UserDir is the directory for locks that every process of this user
// must share whatever its HOME (the docker engine's shared volumes are the
// engine's, not one HOME's): a directory of this uid under the system's
// temporary directory, mode 0700. When it cannot be had (another user
// made it first), Dir(kind).
func UserDir(kind string) string {
	d := filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-%s-%d", kind, os.Getuid()))
	if err := os.MkdirAll(d, 0o700); err == nil {
		if st, err := os.Lstat(d); err == nil && st.IsDir() && st.Mode().Perm()&0o077 == 0 {
			if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) == os.Getuid() {
				return d
			}
		}
	}
	return Dir(kind)
}

// Lock takes the exclusive lock of path, creating the file and its
// directory. When another holder has it, waiting (if non-nil) is called
// once and Lock waits until the lock is free or ctx ends. Two Locks of
// the same path exclude each other within one process too.
func Lock(ctx context.Context, path string, waiting func()) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !told && waiting != nil {
			told = true
			waiting()
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}
