package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestKeepWarmEndToEnd: `fixpoint test --keep-warm` through the real
// binary and Docker. The first run starts the daemon and reports what a
// run without it reports; the second takes the session the daemon started
// ahead and reports the same; an edit on disk reaches the kept session
// (the fixed code passes); `fixpoint daemon --stop` ends the daemon, which
// removes its containers.
func TestKeepWarmEndToEnd(t *testing.T) {
	cli := faultRequire(t)
	bin := buildFixpoint(t)
	home := t.TempDir()
	ws := faultWorkspace(t)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(home, ".cache", "fixpoint", "daemon", "*.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("daemon log %s:\n%s", filepath.Base(l), b)
			}
		}
	})
	env := append(os.Environ(), "FIXPOINT_LOG=debug", "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"FIXPOINT_DATA_DIR="+filepath.Join(home, "data"), "FIXPOINT_KEEP_WARM=")
	run := func(args ...string) (int, string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("fixpoint %s: %v\n%s", strings.Join(args, " "), err, errb.String())
		}
		return code, out.String(), errb.String()
	}
	counts := func(out string) string {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		last := lines[len(lines)-1]
		c, _, _ := strings.Cut(last, " · exit code")
		return c
	}

	code, plain, stderr := run("test", "--dir", ws, "--sandbox", "docker")
	if code != 1 || !strings.Contains(plain, "failed") {
		t.Fatalf("fixpoint test without the daemon: exit %d\n%s\n%s", code, plain, stderr)
	}

	code, out, stderr := run("test", "--dir", ws, "--sandbox", "docker", "--keep-warm", "2m")
	m := regexp.MustCompile(`started the fixpoint daemon \(pid (\d+)\)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("first --keep-warm run did not start the daemon: exit %d\nstderr:\n%s", code, stderr)
	}
	pid := m[1]
	t.Cleanup(func() {
		if p, err := os.FindProcess(atoiOr(pid)); err == nil {
			p.Signal(syscall.SIGKILL)
		}
	})
	if code != 1 || counts(out) != counts(plain) {
		t.Errorf("first run through the daemon: exit %d, %q; without it: exit 1, %q", code, counts(out), counts(plain))
	}

	code, out, stderr = run("test", "--dir", ws, "--sandbox", "docker", "--keep-warm", "2m")
	if !strings.Contains(stderr, "kept warm by the fixpoint daemon") || strings.Contains(stderr, "started the fixpoint daemon") {
		t.Errorf("second run did not take the kept session:\n%s", stderr)
	}
	if code != 1 || counts(out) != counts(plain) {
		t.Errorf("second run: exit %d, %q; want exit 1, %q", code, counts(out), counts(plain))
	}

	// The fix, saved to disk, is what the kept session runs next.
	src := filepath.Join(ws, "textkit", "chunks.py")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	fixed := strings.Replace(string(b), "range(0, len(seq) - size + 1, size)", "range(0, len(seq), size)", 1)
	if fixed == string(b) {
		t.Fatal("the bug line of agent/testdata/py-bug moved; update this test")
	}
	if err := os.WriteFile(src, []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = run("test", "--dir", ws, "--sandbox", "docker", "--keep-warm", "2m")
	if code != 0 || !strings.Contains(counts(out), " 0 failed") {
		t.Errorf("after the fix: exit %d, %q\n%s", code, counts(out), stderr)
	}

	code, out, _ = run("daemon", "--stop")
	if code != 0 || !strings.Contains(out, "stopped 1 ") {
		t.Errorf("daemon --stop: exit %d, %q", code, out)
	}
	deadline := time.Now().Add(60 * time.Second)
	for syscall.Kill(atoiOr(pid), 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon (pid %s) still runs a minute after --stop", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	sandboxtest.RequireNoContainers(t, cli, docker.LabelPID, pid)
}

func atoiOr(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
