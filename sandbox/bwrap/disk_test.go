package bwrap_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/host"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// fillScript writes 4 MiB files (each under the per-file limit) into its
// argument directory until a write fails, then prints how far it got and
// the errno. It stops by itself after 2 GiB.
const fillScript = `
import errno, os, sys, time
d, n, t0 = sys.argv[1], 0, time.time()
chunk = b"x" * (1 << 20)
err = "none"
try:
    for i in range(512):
        with open(os.path.join(d, "fill%d" % i), "wb") as f:
            for _ in range(4):
                f.write(chunk)
                f.flush()
                n += len(chunk)
except OSError as e:
    err = errno.errorcode.get(e.errno, str(e.errno))
print("written=%d err=%s seconds=%.3f" % (n, err, time.time() - t0))
`

var fillResult = regexp.MustCompile(`written=(\d+) err=(\w+) seconds=([\d.]+)`)

// TestDiskCap fills /workspace and /tmp with many files, each under the
// per-file limit: the writes end in ENOSPC at the cap, the workspace copy
// is on a tmpfs (not the host disk), and the session stays usable.
// As root the tmpfs is mounted on the host; as a normal user it lives in
// a namespace held for the session.
func TestDiskCap(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	const wsCap, tmpCap = 64 << 20, 32 << 20
	b, err := bwrap.New(&bwrap.Options{WorkspaceSize: wsCap, TmpSize: tmpCap})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dir string
		cap int64
	}{
		{dir: "/workspace", cap: wsCap},
		{dir: "/tmp", cap: tmpCap},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			s, err := b.Start(t.Context(), sandbox.Spec{})
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			defer func() {
				if !closed {
					s.Close()
				}
			}()
			if _, err := s.Sync(t.Context(), &sandbox.Snapshot{Files: map[string]sandbox.File{"fill.py": {Data: []byte(fillScript)}}}); err != nil {
				t.Fatal(err)
			}
			dirs := s.(interface{ Dirs() host.Dirs }).Dirs()
			var st syscall.Statfs_t
			if err := syscall.Statfs(dirs.Workspace, &st); err != nil || st.Type != 0x01021994 {
				t.Fatalf("workspace copy %s is not on a tmpfs (statfs type %#x, %v): it would fill the host disk", dirs.Workspace, st.Type, err)
			}
			if got := int64(st.Blocks) * st.Bsize; got != wsCap {
				t.Errorf("workspace tmpfs size = %d, want %d", got, wsCap)
			}
			res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"python3", "fill.py", tc.dir},
				Limits: sandbox.Limits{Timeout: 60 * time.Second, FileSize: 8 << 20}})
			if err != nil {
				t.Fatal(err)
			}
			m := fillResult.FindStringSubmatch(string(res.Stdout))
			if m == nil {
				t.Fatalf("fill.py printed no result: exit %d, %s %s", res.ExitCode, res.Stdout, res.Stderr)
			}
			written, _ := strconv.ParseInt(m[1], 10, 64)
			if m[2] != "ENOSPC" {
				t.Errorf("filling %s ended with %s after %d bytes, want ENOSPC", tc.dir, m[2], written)
			}
			if written > tc.cap || written < tc.cap/2 {
				t.Errorf("filling %s wrote %d bytes before ENOSPC, want at most the cap %d and at least half of it", tc.dir, written, tc.cap)
			}
			t.Logf("%s: %d bytes written before ENOSPC (cap %d) in %ss", tc.dir, written, tc.cap, m[3])
			// Still usable: a small file fits once the fill is removed.
			res, err = s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", "rm -f " + tc.dir + "/fill* && echo ok > " + tc.dir + "/after && cat " + tc.dir + "/after"}})
			if err != nil || string(res.Stdout) != "ok\n" {
				t.Errorf("session unusable after the fill: %+v, %v", res, err)
			}
			// Close unmounts the tmpfs and removes its mount point.
			closed = true
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			capped := filepath.Dir(dirs.Root)
			if i := strings.Index(capped, "/root/"); strings.HasPrefix(capped, "/proc/") && i > 0 {
				capped = capped[i+len("/root"):] // held in a namespace: the host side
			}
			if _, err := os.Stat(capped); !os.IsNotExist(err) {
				t.Errorf("capped dir %s is left after Close (stat: %v)", capped, err)
			}
		})
	}
}

// TestDiskCapReapsDeadProcesses: the capped dir of a fixpoint process
// that died without closing its sessions (its tmpfs still mounted) is
// unmounted and removed by the next backend's first Start.
func TestDiskCapReapsDeadProcesses(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	sandboxtest.RequireRoot(t)
	tmp, err := os.MkdirTemp("", "fixpoint-reap-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o711); err != nil { // session uids pass through
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(tmp, fmt.Sprintf("fixpoint-bwrapdisk-%d-123", dead.Process.Pid))
	if err := os.Mkdir(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", stale, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(stale, syscall.MNT_DETACH) })
	if err := os.WriteFile(filepath.Join(stale, "left"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := bwrap.New(&bwrap.Options{TempDir: tmp, WorkspaceSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Start(t.Context(), sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the dead process's capped dir %s is still there (stat: %v)", stale, err)
	}
	if res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"true"}}); err != nil || res.ExitCode != 0 {
		t.Errorf("a session under TempDir %s: %+v, %v", tmp, res, err)
	}
}

// TestDiskCapUnprivileged runs TestDiskCap again as nobody, so that the
// namespace-held cap of a normal user is tested where tests run as root
// (CI); run as a normal user, TestDiskCap itself covers it.
func TestDiskCapUnprivileged(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	if os.Geteuid() != 0 {
		t.Skip("TestDiskCap already runs unprivileged here")
	}
	dir, err := os.MkdirTemp("", "fixpoint-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bwrap.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^TestDiskCap$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + os.TempDir(), "CI=" + os.Getenv("CI")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestDiskCap ") {
		t.Fatalf("TestDiskCap as nobody: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "bytes written before ENOSPC") {
			t.Log("as nobody:", strings.TrimSpace(line))
		}
	}
}

// TestDiskCapOldBwrap: a bwrap without --size (before 0.5.0) gets the
// session's tmp directory as /tmp, inside the capped session directory:
// filling /tmp ends in ENOSPC at the workspace cap.
func TestDiskCapOldBwrap(t *testing.T) {
	real := sandboxtest.RequireCommand(t, "bwrap")
	dir, err := os.MkdirTemp("", "fixpoint-oldbwrap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755) // the session uid runs it
	fake := filepath.Join(dir, "bwrap")
	script := "#!/bin/sh\n[ \"$1\" = --help ] && { echo 'usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]'; exit 0; }\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	const wsCap = 48 << 20
	b, err := bwrap.New(&bwrap.Options{Path: fake, WorkspaceSize: wsCap, TmpSize: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Start(t.Context(), sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Sync(t.Context(), &sandbox.Snapshot{Files: map[string]sandbox.File{"fill.py": {Data: []byte(fillScript)}}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"python3", "fill.py", "/tmp"}, Limits: sandbox.Limits{Timeout: time.Minute, FileSize: 8 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	m := fillResult.FindStringSubmatch(string(res.Stdout))
	if m == nil {
		t.Fatalf("fill.py printed no result: exit %d, %s %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	written, _ := strconv.ParseInt(m[1], 10, 64)
	if m[2] != "ENOSPC" || written > wsCap || written < wsCap/2 {
		t.Errorf("filling /tmp under a bwrap without --size: %s after %d bytes, want ENOSPC at the %d byte workspace cap", m[2], written, wsCap)
	}
}
