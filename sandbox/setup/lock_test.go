package setup_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

// fileInstaller is a backend whose install step is a file in dir: "done"
// marks the cache as filled, and each install appends a line to
// "installs". An install announces itself with "installing-<pid>" and then
// waits for "release", so that a test can hold it open while another
// process arrives.
type fileInstaller struct{ dir string }

func (fileInstaller) Name() string { return "fake" }

func (fileInstaller) Start(context.Context, sandbox.Spec) (sandbox.Session, error) {
	return nil, errors.New("fileInstaller starts no sessions")
}

func (f fileInstaller) Install(ctx context.Context, spec sandbox.InstallSpec) (*sandbox.InstallResult, error) {
	res := &sandbox.InstallResult{Mounts: []sandbox.CacheMount{{Source: filepath.Join(f.dir, "cache"), Target: spec.Caches[0].Target}}}
	if _, err := os.Stat(filepath.Join(f.dir, "done")); err == nil {
		res.Cached = true
		return res, nil
	}
	if err := os.WriteFile(filepath.Join(f.dir, fmt.Sprintf("installing-%d", os.Getpid())), nil, 0o644); err != nil {
		return nil, err
	}
	for {
		if _, err := os.Stat(filepath.Join(f.dir, "release")); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	log, err := os.OpenFile(filepath.Join(f.dir, "installs"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "%d %s\n", os.Getpid(), spec.Key)
	if err := log.Close(); err != nil {
		return nil, err
	}
	return res, os.WriteFile(filepath.Join(f.dir, "done"), nil, 0o644)
}

// TestLockHelperProcess is one fixpoint process setting up a node
// project; TestSetupLockTwoProcesses starts it twice. It does nothing
// unless FIXPOINT_SETUP_LOCK_DIR is set.
func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv("FIXPOINT_SETUP_LOCK_DIR")
	if dir == "" {
		return
	}
	snap := snapOf(map[string]string{
		"package.json":      `{"name":"p","devDependencies":{"jest":"29.7.0"}}`,
		"package-lock.json": `{"lockfileVersion":3}`,
	})
	spec := sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: "0123456789abcdef"}}
	p := setup.New(fileInstaller{dir}, &setup.Options{LockDir: filepath.Join(dir, "locks"),
		Progress: func(l string) { fmt.Println("progress:", l) }})
	if err := p.Prepare(t.Context(), &spec, snap, setup.NewPlan(registry.Detect(snap), snap, "")); err != nil {
		t.Fatal(err)
	}
	fmt.Println("mounts:", spec.Caches)
}

// TestSetupLockTwoProcesses: while one process installs a cache key, a
// second process that needs the same key says it is waiting, installs
// nothing itself and reuses the first one's result.
func TestSetupLockTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	start := func(name string) (*exec.Cmd, *bufio.Scanner) {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestLockHelperProcess$", "-test.v")
		cmd.Env = append(os.Environ(), "FIXPOINT_SETUP_LOCK_DIR="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		return cmd, bufio.NewScanner(out)
	}
	first, firstOut := start("first")
	waitFor(t, func() bool { return installing(dir) == 1 }, "the first process to start installing")

	second, secondOut := start("second")
	var secondLines []string
	waited := make(chan bool, 1)
	go func() {
		for secondOut.Scan() {
			secondLines = append(secondLines, secondOut.Text())
			if strings.Contains(secondOut.Text(), "waiting for another setup of ") {
				waited <- true
				return
			}
		}
		waited <- false
	}()
	var ok bool
	waitFor(t, func() bool {
		select {
		case ok = <-waited:
			return true
		default:
			return installing(dir) > 1
		}
	}, "the second process to wait or to install")
	if !ok {
		os.WriteFile(filepath.Join(dir, "release"), nil, 0o644)
		t.Fatalf("the second process did not wait for the first (installing at once: %d)", installing(dir))
	}
	if got := strings.Join(secondLines, "\n"); !strings.Contains(got, "waiting for another setup of ") || !strings.Contains(got, "(npm ci)") {
		t.Fatalf("second process output lacks the wait:\n%s", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	firstLines := readAll(firstOut)
	for secondOut.Scan() {
		secondLines = append(secondLines, secondOut.Text())
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first process: %v\n%s", err, strings.Join(firstLines, "\n"))
	}
	if err := second.Wait(); err != nil {
		t.Fatalf("second process: %v\n%s", err, strings.Join(secondLines, "\n"))
	}
	installs, err := os.ReadFile(filepath.Join(dir, "installs"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(installs), "\n"); n != 1 {
		t.Errorf("installs = %d, want 1:\n%s", n, installs)
	}
	if got := strings.Join(secondLines, "\n"); !strings.Contains(got, "dependencies ready (npm ci, cached)") {
		t.Errorf("second process did not reuse the first one's install:\n%s", got)
	}
	if got := strings.Join(firstLines, "\n"); strings.Contains(got, "waiting for another setup") {
		t.Errorf("first process waited:\n%s", got)
	}
}

// TestSetupLockCancel: a process waiting for another setup stops waiting
// when its context ends.
func TestSetupLockCancel(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), "FIXPOINT_SETUP_LOCK_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(dir, "release"), nil, 0o644)
		cmd.Wait()
	})
	waitFor(t, func() bool { return installing(dir) == 1 }, "the helper to start installing")

	ctx, cancel := context.WithCancel(t.Context())
	snap := snapOf(map[string]string{
		"package.json":      `{"name":"p","devDependencies":{"jest":"29.7.0"}}`,
		"package-lock.json": `{"lockfileVersion":3}`,
	})
	spec := sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: "0123456789abcdef"}}
	p := setup.New(fileInstaller{dir}, &setup.Options{LockDir: filepath.Join(dir, "locks"),
		Progress: func(l string) {
			if strings.Contains(l, "waiting for another setup") {
				cancel()
			}
		}})
	err := p.Prepare(ctx, &spec, snap, setup.NewPlan(registry.Detect(snap), snap, ""))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Prepare while another process holds the lock, cancelled: %v, want context.Canceled", err)
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readAll(s *bufio.Scanner) []string {
	var lines []string
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	return lines
}

// installing counts the processes that have entered fileInstaller.Install.
func installing(dir string) int {
	m, _ := filepath.Glob(filepath.Join(dir, "installing-*"))
	return len(m)
}
