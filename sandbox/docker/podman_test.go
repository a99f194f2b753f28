package docker_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

const podmanChildEnv = "FIXPOINT_PODMAN_CHILD"

// startPodman serves Podman's Docker-compatible API on a private socket
// (`podman system service`), as root, and stops it at cleanup. It returns
// the socket's unix:// address.
func startPodman(t *testing.T) string {
	t.Helper()
	podman := sandboxtest.RequireCommand(t, "podman")
	dir, err := os.MkdirTemp("", "fpp-")
	if err != nil {
		t.Fatal(err)
	}
	host := "unix://" + filepath.Join(dir, "podman.sock")
	cmd := exec.Command(podman, "system", "service", "--time=0", host)
	log, err := os.Create(filepath.Join(dir, "podman.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		log.Close()
		os.RemoveAll(dir)
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		cli, err := engine.ForHost(host)
		if err == nil {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			_, err = cli.Ping(ctx)
			cancel()
			cli.Close()
		}
		if err == nil {
			return host
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "podman.log"))
			t.Fatalf("podman system service does not answer at %s: %v\n%s", host, err, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestPodman runs the docker backend against Podman's Docker-compatible
// API: the engine is told apart from Docker, the sandbox image gets there
// through the API (ImageSave from the main engine, ImageLoad), and then
// this package's escape, session, reaping and repair tests run again in a
// child process (the same test binary) with DOCKER_HOST on Podman's socket.
func TestPodman(t *testing.T) {
	if os.Getenv(podmanChildEnv) != "" {
		t.Skip("already on podman")
	}
	local := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, local, testImage)
	host := startPodman(t)
	ctx := t.Context()
	cli, err := engine.ForHost(host)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	v, err := cli.ServerVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := engine.Kind(v); got != "podman" {
		t.Fatalf("engine.Kind of %s = %q (components %+v), want podman", host, got, v.Components)
	}
	if _, err := cli.ImageInspect(ctx, testImage); err != nil {
		rc, err := local.ImageSave(ctx, []string{testImage})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := cli.ImageLoad(ctx, rc)
		rc.Close()
		if err != nil {
			t.Fatalf("ImageLoad into podman: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	b, err := docker.New(ctx, &docker.Options{Client: cli})
	if err != nil {
		t.Fatalf("New on podman: %v", err)
	}
	defer b.Close()
	if b.Engine() != "podman" {
		t.Errorf("Backend.Engine() = %q, want podman", b.Engine())
	}

	// The suite, again, on Podman.
	child := exec.CommandContext(ctx, os.Args[0], "-test.count=1", "-test.v",
		"-test.run=^(TestEscape|TestRun|TestSyncIncremental|TestReadFileRejectsEscapes|TestReapAfterSIGKILL|TestReapKeepsLiveOwners|TestPendingRemoval|TestRefillBrokenSupervisorVolume|TestReplacedAfterSupervisorDies|TestCloseAbortsRun|TestGoModCache)$")
	child.Env = append(os.Environ(), "DOCKER_HOST="+host, podmanChildEnv+"=1")
	out, err := child.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("the docker backend's tests on podman (%s) failed: %v\n%s", host, err, out)
	}
	for _, name := range []string{"TestEscape", "TestRun", "TestReapAfterSIGKILL"} {
		if strings.Contains(string(out), "--- SKIP: "+name) {
			t.Errorf("%s was skipped on podman:\n%s", name, out)
		}
	}
}
