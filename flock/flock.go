// Package flock is fixpoint's one home for flock(2): locks on a file that
// every fixpoint process of a host shares and that the kernel releases
// when its holder exits, however it exits.
//
// Lock takes an exclusive lock on a path, waiting until it is free (the
// setup phase, the docker backend's shared cache volumes, the image
// builder, the warm daemon). TryExclusive, Exclusive, Shared and Unlock
// are the primitives on a file the caller opened itself (the per-project
// run lock in agent, which must not wait; the failure memory's
// reader/writer lock, which needs shared locks).
//
// The package is a leaf: it imports only the standard library, so any
// layer (sandbox/*, memory, agent, cmd) may use it.
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
		err := TryExclusive(f)
		if err == nil {
			return func() { _ = Unlock(f); f.Close() }, nil
		}
		if !errors.Is(err, ErrLocked) {
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

// ErrLocked is returned by TryExclusive when another holder has the lock.
var ErrLocked = errors.New("locked by another holder")

// TryExclusive takes the exclusive lock of f without waiting. When another
// open file description holds it (in this process or another), the error
// is ErrLocked.
func TryExclusive(f *os.File) error {
	err := retry(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}

// Exclusive takes the exclusive lock of f, blocking until it is free.
func Exclusive(f *os.File) error { return retry(f, syscall.LOCK_EX) }

// Shared takes a shared lock of f, blocking while an exclusive holder has
// it. A file opened read-only can be share-locked.
func Shared(f *os.File) error { return retry(f, syscall.LOCK_SH) }

// Unlock releases f's lock; closing f releases it too.
func Unlock(f *os.File) error { return retry(f, syscall.LOCK_UN) }

// retry calls flock(2), again when a signal interrupted it.
func retry(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
