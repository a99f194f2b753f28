package bwrap

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

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
// here: neither a mount (root) nor a user namespace holding one (unshare
// and nsenter from util-linux, unprivileged user namespaces) is possible.
var ErrNoDiskCap = errors.New("bwrap sandbox: no disk cap for the workspace")

// cappedDir makes a directory under tempDir with a tmpfs of size bytes
// mounted on it, where the session directory (workspace copy, synthetic
// /etc files) then lives: whatever a command writes into /workspace is
// bounded by size, gets ENOSPC past it and never reaches the host disk.
// release unmounts and removes it (the session directory must be closed
// first). The error wraps ErrNoDiskCap when no cap is possible.
//
// Run as root, the tmpfs is mounted on dir in the host's mount namespace.
// Otherwise it is mounted in a user and mount namespace of its own, kept
// by a holder process (see holdTmpfs): fixpoint reaches it as
// /proc/<holder>/root/<dir>, which is the dir returned, and each command
// enters that namespace (see nsPrefix).
func cappedDir(tempDir string, size int64) (dir string, release func(), err error) {
	dir, err = os.MkdirTemp(tempDir, diskPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", nil, fmt.Errorf("bwrap sandbox: %w", err)
	}
	if os.Geteuid() != 0 {
		return holdTmpfs(dir, size)
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

// holdTmpfs mounts a tmpfs of size bytes on dir inside a new user and
// mount namespace, held by a process that sleeps until release kills it
// (or fixpoint dies: it gets SIGKILL then). The tmpfs exists only in that
// namespace and goes with it.
func holdTmpfs(dir string, size int64) (string, func(), error) {
	fail := func(err error) (string, func(), error) {
		os.Remove(dir)
		return "", nil, fmt.Errorf("%w: %v", ErrNoDiskCap, err)
	}
	script := fmt.Sprintf(`mount -t tmpfs -o size=%d,mode=0700 tmpfs "$0" && echo ready && exec sleep infinity`, size)
	cmd := exec.Command("unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- line == "ready\n"
	}()
	ok := false
	select {
	case ok = <-ready:
	case <-time.After(10 * time.Second):
	}
	kill := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		os.Remove(dir)
	}
	if !ok {
		kill()
		return fail(fmt.Errorf("unshare: %s", strings.TrimSpace(stderr.String())))
	}
	// sh exec'd sleep: the holder is the process unshare started.
	var once sync.Once
	return fmt.Sprintf("/proc/%d/root%s", cmd.Process.Pid, dir), func() { once.Do(kill) }, nil
}

// nsPrefix returns, for a session directory reached through a holder
// (/proc/<pid>/root/<path>), the command that enters the holder's
// namespaces and the path as seen there; for any other directory, nil
// and the directory itself.
func nsPrefix(root string) (argv []string, inside func(string) string) {
	rest, ok := strings.CutPrefix(root, "/proc/")
	pid, path, _ := strings.Cut(rest, "/root/")
	if !ok || path == "" || strings.Trim(pid, "0123456789") != "" {
		return nil, func(p string) string { return p }
	}
	prefix := "/proc/" + pid + "/root"
	return []string{"nsenter", "--target", pid, "--user", "--mount", "--preserve-credentials"},
		func(p string) string { return strings.TrimPrefix(p, prefix) }
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
