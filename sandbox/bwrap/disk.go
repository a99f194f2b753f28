package bwrap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/fixpoint-dev/fixpoint/sandbox/host"
)

// DefaultWorkspaceSize is the cap on a session's workspace copy when
// Options.WorkspaceSize is 0: the docker backend's /workspace tmpfs size.
const DefaultWorkspaceSize = 1 << 30

// DefaultTmpSize is the cap on /tmp when Options.TmpSize is 0.
const DefaultTmpSize = 256 << 20

// DefaultGoCacheSize bounds a project's Go build cache when
// Options.GoCacheSize is 0.
const DefaultGoCacheSize = 2 << 30

// diskPrefix names the capped directories; the owner pid follows, for
// reapDisks.
const diskPrefix = "fixpoint-bwrapdisk-"

// ErrNoDiskCap means the workspace cannot be put on a size-capped tmpfs
// here: mounting needs root (or CAP_SYS_ADMIN in the host's mount
// namespace).
var ErrNoDiskCap = errors.New("bwrap sandbox: no disk cap for the workspace (mounting a size-limited tmpfs needs root)")

// cappedDir makes a directory under tempDir with a tmpfs of size bytes
// mounted on it, where the session directory (workspace copy, synthetic
// /etc files) then lives: whatever a command writes into /workspace is
// bounded by size, gets ENOSPC past it and never reaches the host disk.
// release unmounts and removes it (the session directory must be closed
// first). The error wraps ErrNoDiskCap when the mount is not permitted.
func cappedDir(tempDir string, size int64) (dir string, release func(), err error) {
	if os.Geteuid() != 0 {
		return "", nil, ErrNoDiskCap
	}
	dir, err = os.MkdirTemp(tempDir, diskPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", nil, fmt.Errorf("bwrap sandbox: %w", err)
	}
	// 0711: the session uid must pass through to its own 0700 directory.
	opts := fmt.Sprintf("size=%d,mode=0711", size)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		os.Remove(dir)
		return "", nil, fmt.Errorf("%w: mount tmpfs on %s: %v", ErrNoDiskCap, dir, err)
	}
	var once sync.Once
	return dir, func() { once.Do(func() { unmountAndRemove(dir) }) }, nil
}

func unmountAndRemove(dir string) {
	syscall.Unmount(dir, syscall.MNT_DETACH)
	os.Remove(dir)
}

// reapDisks cleans the capped directories of fixpoint processes that died
// without closing their sessions: the session directories inside go first
// (host.Reap kills their session uid's processes), then the tmpfs. Session
// directories directly under tempDir (uncapped) are reaped too: the host
// package reaps only under the first session's own temp directory, which
// is a fresh capped one.
func reapDisks(tempDir string, b *Backend) {
	if tempDir == "" {
		tempDir = os.TempDir()
	}
	host.Reap(tempDir, b.opts.Logger)
	entries, err := os.ReadDir(tempDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), diskPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		dir := filepath.Join(tempDir, e.Name())
		host.Reap(dir, b.opts.Logger)
		unmountAndRemove(dir)
		b.opts.Logger.Debug("bwrap sandbox: removed a dead process's capped dir", "dir", dir)
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// dirSize adds up the sizes of the files under dir, stopping once past
// limit.
func dirSize(dir string, limit int64) int64 {
	var n int64
	errStop := errors.New("over")
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			n += info.Size()
		}
		if n > limit {
			return errStop
		}
		return nil
	})
	return n
}

// emptyDir removes what is in dir, keeping dir and its first-level
// directories (the Go cache's 00..ff, made writable for every session
// uid by prepareGoCache).
func emptyDir(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			os.Remove(p)
			continue
		}
		inner, _ := os.ReadDir(p)
		for _, f := range inner {
			os.RemoveAll(filepath.Join(p, f.Name()))
		}
	}
}
