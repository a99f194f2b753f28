package docker_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/volume"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

const reapChildEnv = "FIXPOINT_DOCKER_REAP_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(reapChildEnv) == "1" {
		reapChild()
		return
	}
	os.Exit(m.Run())
}

// reapChild opens a session, reports its name and blocks in a long
// command until its parent SIGKILLs it.
func reapChild() {
	ctx := context.Background()
	b, err := docker.New(ctx, &docker.Options{NoReap: true})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	sess, err := b.Start(ctx, sandbox.Spec{Image: testImage})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("session", sess.(*docker.Session).Name())
	// "running" reaches the parent once the command runs under the
	// supervisor: the parent kills this process in the middle of a run.
	sess.Run(ctx, sandbox.Command{Args: []string{"sh", "-c", "echo running; exec sleep 3600"}, Stdout: os.Stdout})
	os.Exit(0)
}

// TestReapAfterSIGKILL kills a fixpoint process in the middle of a run and
// checks that the next New removes the container it leaked.
func TestReapAfterSIGKILL(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, testImage)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), reapChildEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(out)
	line, err := rd.ReadString('\n')
	name, ok := strings.CutPrefix(strings.TrimSpace(line), "session ")
	if err != nil || !ok {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q, %v", line, err)
	}
	// Kill it once its Run reached the supervisor and the command runs.
	if line, err := rd.ReadString('\n'); err != nil || strings.TrimSpace(line) != "running" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child's command said %q, %v; want running", line, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	if n := len(containersOf(t, cli, name)); n != 1 {
		t.Fatalf("after SIGKILL: %d containers of session %s, want the 1 leaked one", n, name)
	}
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer b.Close()
	select {
	case <-b.Reaped():
	case <-time.After(3 * time.Minute):
		t.Fatal("the start-up reap did not end")
	}
	sandboxtest.RequireNoContainers(t, cli, docker.LabelSession, name)
}

func TestReapKeepsLiveOwners(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	_, s := newSession(t, sandbox.Limits{})
	if _, err := docker.Reap(t.Context(), cli); err != nil {
		t.Fatalf("Reap: %v", err)
	}
	if n := len(containersOf(t, cli, s.Name())); n != 1 {
		t.Fatalf("Reap removed the container of a live session: %d left, want 1", n)
	}
	if res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"true"}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("Run after Reap = %+v, %v", res, err)
	}
}

// A Go build cache volume outlives its image only until the next Reap; the
// cache of an image that still exists is kept.
func TestReapPrunesGoCachesOfGoneImages(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, testImage)
	img, err := cli.ImageInspect(t.Context(), testImage)
	if err != nil {
		t.Fatal(err)
	}
	suffix := strconv.Itoa(os.Getpid())
	gone := "fixpoint-gocache-test-gone-" + suffix
	live := "fixpoint-gocache-test-live-" + suffix
	for name, id := range map[string]string{gone: "sha256:" + strings.Repeat("0", 64), live: img.ID} {
		if _, err := cli.VolumeCreate(t.Context(), volume.CreateOptions{Name: name, Labels: map[string]string{docker.LabelCache: "gocache", "fixpoint.image": id}}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cli.VolumeRemove(context.Background(), name, true) })
	}
	if _, err := docker.Reap(t.Context(), cli); err != nil {
		t.Fatalf("Reap: %v", err)
	}
	if _, err := cli.VolumeInspect(t.Context(), gone); err == nil {
		t.Errorf("the cache of a removed image survived Reap")
	}
	if _, err := cli.VolumeInspect(t.Context(), live); err != nil {
		t.Errorf("Reap removed the cache of an existing image: %v", err)
	}
}

// Containers created outside the backend with OwnerLabels (doctor's
// probe, the sandbox benchmark's raw containers) carry what Reap reads:
// the owner's pid and start time, and the caller's own labels.
func TestOwnerLabelsAreReapable(t *testing.T) {
	l := docker.OwnerLabels("bench-exec", map[string]string{"fixpoint.bench": "exec"})
	if l["fixpoint.bench"] != "exec" {
		t.Errorf("the caller's label is missing: %v", l)
	}
	if l[docker.LabelPID] != strconv.Itoa(os.Getpid()) || l[docker.LabelPIDStart] == "" || l[docker.LabelSession] != "bench-exec" {
		t.Errorf("OwnerLabels = %v, want this process's pid, its start time and the session name", l)
	}
}
