package docker_test

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/fixpoint-dev/fixpoint/lang/python"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

const podmanChildEnv = "FIXPOINT_PODMAN_CHILD"

// startPodman serves Podman's Docker-compatible API on a private socket
// (`podman system service`), as root, and stops it at cleanup. It returns
// the socket's unix:// address. Rootful, the service keeps its images and
// containers in a private store under the temporary directory (so the
// sandbox image is built into it from nothing, and nothing of another
// Podman user's store is touched); as a rootless user, in that user's.
func startPodman(t *testing.T, as *rootlessUser) string {
	t.Helper()
	podman := sandboxtest.RequireCommand(t, "podman")
	dir, err := os.MkdirTemp("", "fpp-")
	if err != nil {
		t.Fatal(err)
	}
	host := "unix://" + filepath.Join(dir, "podman.sock")
	args := []string{"system", "service", "--time=0", host}
	if as == nil {
		args = append([]string{"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run")}, args...)
	}
	cmd := exec.Command(podman, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// conmon writes an empty "oom" file into the service's working
	// directory when a container is OOM-killed (the 4 GiB escape case):
	// keep it in the temporary directory, not the package's source.
	cmd.Dir = dir
	// Podman's compat image load spools the archive to a temporary file
	// (api_load.tar*) in its image-copy directory, /var/tmp unless TMPDIR
	// says otherwise, and leaves it there (357 MB per image build seen):
	// keep it in the temporary directory cleanup removes.
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	if as != nil {
		// The service runs as the user: its own storage under ~/.local and
		// its runtime directory; the socket's directory must be theirs.
		if err := os.Chown(dir, as.uid, as.gid); err != nil {
			t.Fatal(err)
		}
		cmd.Dir = as.home
		cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + as.home, "USER=" + as.name, "XDG_RUNTIME_DIR=" + as.runtimeDir, "TMPDIR=" + dir}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(as.uid), Gid: uint32(as.gid)}
	}
	log, err := os.Create(filepath.Join(dir, "podman.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		// Containers still there (a child's background reap or removal
		// cut short by its exit) are removed through the service while
		// it runs: stopped by the service's own shutdown instead, each
		// one's conmon would start `podman container cleanup` on the
		// store after the service is gone (see removeStore).
		removeContainers(t, host)
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		log.Close()
		if err := removeStore(t, dir); err != nil {
			t.Errorf("remove the private podman store: %v", err)
		}
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

// removeContainers force-removes every container of the engine at host,
// logging which ones were left.
func removeContainers(t *testing.T, host string) {
	cli, err := engine.ForHost(host)
	if err != nil {
		return
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := engine.ListContainers(ctx, cli, container.ListOptions{All: true})
	if err != nil {
		t.Logf("list the containers left on podman: %v", err)
		return
	}
	for _, c := range list {
		t.Logf("removing container %s (%s, %s) left on podman", c.ID[:12], strings.Join(c.Names, ","), c.State)
		if err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			t.Logf("remove container %s: %v", c.ID[:12], err)
		}
	}
}

// removeStore removes a Podman service's temporary directory. The
// service is gone, but conmon's exit commands (`podman container
// cleanup --root dir ...`, run when a container stops) may still be
// running or about to start, and each one initialises the store, which
// makes its overlay directory a mount of its own again: a mount made
// after the unmount pass made RemoveAll fail with EBUSY on CI. So every
// process whose command line names dir is killed first (conmon before
// the cleanups it would start), then the mounts are detached and the
// directory removed, a bounded number of times.
func removeStore(t *testing.T, dir string) error {
	var err error
	for range 5 {
		if killed := killNaming(dir); len(killed) > 0 {
			t.Logf("killed what was still running on the store: %s", strings.Join(killed, "; "))
		}
		unmountUnder(dir)
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
	}
	return err
}

// killNaming SIGKILLs every process (other than this one) whose command
// line contains s, conmon first, and waits until none is left. It
// returns the command lines it killed.
func killNaming(s string) (killed []string) {
	for range 50 {
		var pids, conmons []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil || !strings.Contains(string(b), s) {
				continue
			}
			killed = append(killed, strings.Join(strings.Fields(strings.ReplaceAll(string(b), "\x00", " ")), " "))
			if strings.Contains(strings.SplitN(string(b), "\x00", 2)[0], "conmon") {
				conmons = append(conmons, pid)
			} else {
				pids = append(pids, pid)
			}
		}
		if len(pids)+len(conmons) == 0 {
			return killed
		}
		for _, pid := range append(conmons, pids...) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		// Wait for them to go (a killed child of this process would
		// stay a zombie, but the service's children are not ours).
		for _, pid := range append(conmons, pids...) {
			for range 100 {
				b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
				if err != nil || strings.Contains(string(b), ") Z ") {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	return killed
}

// TestPodman runs the docker backend against Podman's Docker-compatible
// API: the engine is told apart from Docker, the sandbox image is built
// there through the API by the image builder (as `fixpoint sandbox images
// build` does on a Podman-only machine: no Docker involved), and then
// this package's escape, session, reaping and repair tests, and rootful
// the backend conformance suite (sandboxtest.Conformance), run again in a
// child process (the same test binary) with DOCKER_HOST on Podman's socket.
func TestPodman(t *testing.T) {
	if os.Getenv(podmanChildEnv) != "" {
		t.Skip("already on podman")
	}
	t.Run("rootful", func(t *testing.T) {
		podmanSuite(t, startPodman(t, nil), false, "^(TestConformance|TestEscape|TestRun|TestSyncIncremental|TestReadFileRejectsEscapes|TestReapAfterSIGKILL|TestReapKeepsLiveOwners|TestPendingRemoval|TestRefillBrokenSupervisorVolume|TestReplacedAfterSupervisorDies|TestCloseAbortsRun|TestGoModCache)$")
	})
	t.Run("rootless", func(t *testing.T) {
		u := requireRootlessUser(t)
		podmanSuite(t, startPodman(t, u), true, "^(TestEscape|TestRun|TestSyncIncremental|TestReapAfterSIGKILL|TestPendingRemoval)$")
	})
}

// podmanSuite checks the engine at host is told apart as Podman, builds
// the sandbox image there when it is missing or out of date, and reruns
// the tests matching run against it in a child process.
func podmanSuite(t *testing.T, host string, rootless bool, run string) {
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
	info, err := cli.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := engine.RootlessNoLimits(ctx, cli), rootless && info.CgroupVersion == "1"; got != want {
		t.Errorf("RootlessNoLimits = %v on a %s engine with cgroups v%s, want %v", got, map[bool]string{true: "rootless", false: "rootful"}[rootless], info.CgroupVersion, want)
	}
	buildOnPodman(t, cli, !rootless)
	b, err := docker.New(ctx, &docker.Options{Client: cli})
	if err != nil {
		t.Fatalf("New on podman: %v", err)
	}
	defer b.Close()
	if b.Engine() != "podman" {
		t.Errorf("Backend.Engine() = %q, want podman", b.Engine())
	}
	args := []string{"-test.count=1", "-test.v", "-test.run=" + run}
	if engine.RootlessNoLimits(ctx, cli) {
		// Rootless on cgroups v1: no memory or pids cgroup. A 4 GiB
		// allocation succeeds, and a fork bomb is held only by
		// RLIMIT_NPROC (about a minute to clean up). README, "Remote and
		// rootless engines", says so and doctor warns; the rest must hold.
		args = append(args, "-test.skip=^TestEscape$/^(allocate_4_GiB|fork_bomb)$")
		t.Logf("rootless on cgroups v1: memory and pids limits are not applied; skipping those two escape cases")
	}
	child := exec.CommandContext(ctx, os.Args[0], args...)
	child.Env = append(os.Environ(), "DOCKER_HOST="+host, podmanChildEnv+"=1")
	out, err := child.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("the docker backend's tests on podman (%s) failed: %v\n%s", host, err, out)
	}
	for _, name := range []string{"TestEscape", "TestRun"} {
		if strings.Contains(string(out), "--- SKIP: "+name) {
			t.Errorf("%s was skipped on podman:\n%s", name, out)
		}
	}
}

// buildOnPodman builds the python sandbox image into the Podman engine
// behind cli with the image builder, as `fixpoint sandbox images build`
// does there (a fresh store must get a real build), and checks the
// recipe and language labels read back exactly (Podman's import once
// folded "LABEL a=1 b=2" into a's value, and every build failed its
// recipe check).
func buildOnPodman(t *testing.T, cli *client.Client, fresh bool) {
	t.Helper()
	var progress strings.Builder
	bld, err := image.NewBuilder(&image.Options{Client: cli, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	out, err := bld.Build(t.Context(), python.Language{}, false)
	if err != nil {
		t.Fatalf("building the python image on podman: %v\n%s", err, progress.String())
	}
	if fresh && out.Skipped {
		t.Errorf("the build into a fresh podman store was skipped:\n%s", progress.String())
	}
	insp, err := cli.ImageInspect(t.Context(), out.Name)
	if err != nil {
		t.Fatalf("inspect %s on podman after the build: %v", out.Name, err)
	}
	if got := insp.Config.Labels[image.LabelRecipe]; got != out.Hash {
		t.Errorf("%s on podman: label %s = %q, want %q", out.Name, image.LabelRecipe, got, out.Hash)
	}
	if got := insp.Config.Labels[image.LabelLang]; got != "python" {
		t.Errorf("%s on podman: label %s = %q, want python", out.Name, image.LabelLang, got)
	}
}

type rootlessUser struct {
	name, home, runtimeDir string
	uid, gid               int
}

// requireRootlessUser returns the user "fprootless" (created when missing,
// with a subordinate id range), its runtime directory, and Podman storage
// set to the kernel's overlay (the default here, vfs, copies the whole
// image for every container: about 10 s per session start).
func requireRootlessUser(t *testing.T) *rootlessUser {
	t.Helper()
	if os.Geteuid() != 0 {
		if sandboxtest.InCI() {
			t.Fatal("creating the rootless test user needs root; CI runs as root")
		}
		t.Skip("creating the rootless test user needs root")
	}
	sandboxtest.RequireCommand(t, "newuidmap")
	const name = "fprootless"
	if _, err := user.Lookup(name); err != nil {
		if out, err := exec.Command("useradd", "-m", "-s", "/bin/sh", name).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v\n%s", name, err, out)
		}
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"/etc/subuid", "/etc/subgid"} {
		b, _ := os.ReadFile(f)
		if !strings.Contains(string(b), name+":") {
			if out, err := exec.Command("usermod", "--add-subuids", "300000-365535", "--add-subgids", "300000-365535", name).CombinedOutput(); err != nil {
				t.Fatalf("usermod: %v\n%s", err, out)
			}
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	r := &rootlessUser{name: name, home: u.HomeDir, uid: uid, gid: gid, runtimeDir: filepath.Join(os.TempDir(), "fpr-"+u.Uid)}
	conf := filepath.Join(u.HomeDir, ".config", "containers")
	for _, d := range []string{r.runtimeDir, filepath.Join(u.HomeDir, ".config"), conf} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chown(d, uid, gid)
	}
	sc := filepath.Join(conf, "storage.conf")
	if err := os.WriteFile(sc, []byte("[storage]\ndriver = \"overlay\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chown(sc, uid, gid)
	return r
}
