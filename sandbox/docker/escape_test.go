package docker_test

import (
	"cmp"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestEscape runs the shared escape battery (sandboxtest.Escape) and the
// docker backend's own cases in one hardened session. After each case the
// command must be contained, nothing of it may be left running, and the
// session must still work.
func TestEscape(t *testing.T) { escapeSuite(t, "") }

// TestEscapeRunsc runs the same cases under gVisor when the engine has the
// runsc runtime (it is optional outside CI). FIXPOINT_ESCAPE_RUNTIME names
// another gVisor runtime to check instead, such as one of the runsc-<name>
// variants .ci/docker-up registers for `fixpoint bench sandbox`.
func TestEscapeRunsc(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	info, err := cli.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	runtime := cmp.Or(os.Getenv("FIXPOINT_ESCAPE_RUNTIME"), "runsc")
	if !docker.IsGVisor(runtime) {
		t.Fatalf("FIXPOINT_ESCAPE_RUNTIME=%s is not a gVisor runtime (runsc or runsc-<name>)", runtime)
	}
	if _, ok := info.Runtimes[runtime]; !ok {
		if sandboxtest.InCI() {
			t.Fatalf("CI=true and the engine has no %s runtime; .ci/docker-up registers it", runtime)
		}
		t.Skipf("skipping outside CI: the engine has no %s runtime", runtime)
	}
	escapeSuite(t, runtime)
}

func escapeSuite(t *testing.T, runtime string) {
	gvisor := docker.IsGVisor(runtime)
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, testImage)
	e := sandboxtest.EscapeHost(t, "FIXPOINT_CANARY_7f3a9c")
	startCtx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	b, err := docker.New(startCtx, &docker.Options{Client: cli, Runtime: runtime, WorkspaceSize: 32 << 20, TmpSize: 32 << 20})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	sess, err := b.Start(startCtx, sandbox.Spec{Image: testImage, Limits: sandboxtest.EscapeLimits()})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s := sess.(*docker.Session)
	uid := sandboxUID(t, cli)
	defer func() {
		s.Close()
		sandboxtest.RequireNoContainers(t, cli, docker.LabelSession, s.Name())
	}()
	e.Session, e.UID, e.Allowed = s, uid, imageEnvKeys(t, cli)
	e.Unreachable = []string{"172.17.0.1", "host.docker.internal"}
	e.GVisor = gvisor
	// Only the container's init and the supervisor.
	e.Ours = func(line string) bool {
		return strings.Contains(line, "docker-init") || strings.Contains(line, "/.fixpoint/supervisor")
	}
	e.OwnProcs = 2
	e.After = func(t *testing.T) {
		if got := len(runningSessions(t, cli)); got != 1 {
			t.Errorf("%d sandbox containers of this test run, want 1", got)
		}
	}
	e.Extra = dockerEscapeCases(e.Port, e.Canary)
	sandboxtest.Escape(t, e)
}

// dockerEscapeCases are the escape cases of the docker backend alone: no
// route to the engine's bridge and no interface but loopback, and
// nothing of the host in the environment of the container's init.
func dockerEscapeCases(port int, canary string) []sandboxtest.EscapeCase {
	py := func(code string) []string { return []string{"python3", "-c", code} }
	return []sandboxtest.EscapeCase{
		{
			Name: "no route to the engine's bridge",
			// The default gateway, read from the sandbox's own routing
			// table, is probed too: with network=none there is none, and
			// if there were one it is the engine's bridge on this host.
			Args: py(`import errno, socket, struct
targets = ["127.0.0.1", "172.17.0.1", "host.docker.internal"]
for l in open("/proc/net/route").read().splitlines()[1:]:
    f = l.split()
    if len(f) > 2 and f[1] == "00000000":
        gw = socket.inet_ntoa(struct.pack("<L", int(f[2], 16)))
        print("DEFAULT ROUTE", f[0], gw)
        targets.append(gw)
for h in targets:
    try:
        socket.create_connection((h, ` + strconv.Itoa(port) + `), timeout=1).close()
        print("CONNECTED", h)
    except OSError as e:
        print("blocked", h, type(e).__name__, errno.errorcode.get(e.errno, e.errno))
for l in open("/proc/net/dev").read().splitlines()[2:]:
    print("IFACE", l.split(":")[0].strip())`),
			Check: func(t *testing.T, res *sandbox.Result) {
				out := string(res.Stdout)
				if strings.Contains(out, "CONNECTED") {
					t.Errorf("the sandbox reached the host listener: %s", out)
				}
				if strings.Contains(out, "DEFAULT ROUTE") {
					t.Errorf("the sandbox has a default route (network=none has none):\n%s", out)
				}
				// No route at all to the bridge: unreachable (runc says
				// network, gVisor host), not refused or timed out, which
				// would mean packets left.
				if !strings.Contains(out, "blocked 172.17.0.1 OSError ENETUNREACH") && !strings.Contains(out, "blocked 172.17.0.1 OSError EHOSTUNREACH") {
					t.Errorf("the engine's bridge address was not unreachable:\n%s%s", out, res.Stderr)
				}
				for _, line := range strings.Split(out, "\n") {
					if iface, ok := strings.CutPrefix(line, "IFACE "); ok && iface != "lo" {
						t.Errorf("the sandbox has a network interface besides lo: %q", iface)
					}
				}
			},
		},
		{
			Name: "host environment of the container's init",
			Args: []string{"sh", "-c", "cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'"},
			Check: func(t *testing.T, res *sandbox.Result) {
				if strings.Contains(string(res.Stdout)+string(res.Stderr), canary) {
					t.Errorf("the sandbox saw the host canary:\n%s", res.Stdout)
				}
			},
		},
	}
}

// containersOf lists the containers of one session, running or not.
func containersOf(t *testing.T, cli *client.Client, session string) []container.Summary {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", docker.LabelSession+"="+session))
	list, err := engine.ListContainers(t.Context(), cli, container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatalf("list containers: %v", err)
	}
	return list
}

// runningSessions lists the sandbox containers this test process owns.
func runningSessions(t *testing.T, cli *client.Client) []container.Summary {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", docker.LabelPID+"="+strconv.Itoa(os.Getpid())))
	list, err := engine.ListContainers(t.Context(), cli, container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatalf("list containers: %v", err)
	}
	return list
}

// imageEnvKeys lists the variables the test image itself sets.
func imageEnvKeys(t *testing.T, cli *client.Client) []string {
	img, err := cli.ImageInspect(t.Context(), testImage)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	if img.Config != nil {
		for _, e := range img.Config.Env {
			k, _, _ := strings.Cut(e, "=")
			keys = append(keys, k)
		}
	}
	return keys
}

// sandboxUID is the uid sessions of the test image run as: the image's
// non-root user, else nobody.
func sandboxUID(t *testing.T, cli *client.Client) string {
	img, err := cli.ImageInspect(t.Context(), testImage)
	if err != nil {
		t.Fatal(err)
	}
	if img.Config != nil {
		if u, _, _ := strings.Cut(img.Config.User, ":"); u != "" && u != "0" && u != "root" {
			if _, err := strconv.Atoi(u); err == nil {
				return u
			}
		}
	}
	return "65534"
}

// TestHardeningWithZeroLimits starts a session with no limits at all (the
// zero Spec the escape suite never uses) and checks what the engine and
// the kernel enforce: the created container's HostConfig (read-only root
// filesystem, no network, no capabilities, default memory, pids and CPU),
// then from inside, the root mount is read-only for root too (a non-root
// user's failed write would hide a writable rootfs), and the command runs
// under the default rlimits, its CPU limit being the default timeout.
func TestHardeningWithZeroLimits(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, testImage)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	b, err := docker.New(ctx, &docker.Options{Client: cli})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	sess, err := b.Start(ctx, sandbox.Spec{Image: testImage})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s := sess.(*docker.Session)
	defer func() {
		s.Close()
		sandboxtest.RequireNoContainers(t, cli, docker.LabelSession, s.Name())
	}()
	list := containersOf(t, cli, s.Name())
	if len(list) != 1 {
		t.Fatalf("%d containers for session %s, want 1", len(list), s.Name())
	}
	info, err := cli.ContainerInspect(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	hc := info.HostConfig
	if !hc.ReadonlyRootfs {
		t.Errorf("HostConfig.ReadonlyRootfs = false: the root filesystem is writable")
	}
	if string(hc.NetworkMode) != "none" || !slices.Equal(hc.CapDrop, []string{"ALL"}) || !slices.Contains(hc.SecurityOpt, "no-new-privileges") {
		t.Errorf("network %q, cap drop %v, security opts %v: want none, [ALL], no-new-privileges", hc.NetworkMode, hc.CapDrop, hc.SecurityOpt)
	}
	if hc.Memory != 1<<30 || hc.MemorySwap != 1<<30 || hc.NanoCPUs != 2e9 || hc.PidsLimit == nil || *hc.PidsLimit != 256 {
		t.Errorf("memory %d swap %d cpus %d pids %v with zero limits, want the defaults 1 GiB, 1 GiB, 2e9, 256", hc.Memory, hc.MemorySwap, hc.NanoCPUs, hc.PidsLimit)
	}
	for _, dir := range []string{"/workspace", "/tmp"} {
		if !strings.Contains(hc.Tmpfs[dir], "size=") {
			t.Errorf("tmpfs %s options %q have no size cap", dir, hc.Tmpfs[dir])
		}
	}

	res, err := s.Run(ctx, sandbox.Command{Args: []string{"sh", "-c", `awk '$2 == "/" {print "rootfs", $4}' /proc/mounts; cat /proc/self/limits; ` +
		`cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max 2>/dev/null | sed 's/^/cgroup /'`}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run: %+v, %v", res, err)
	}
	out := string(res.Stdout)
	var rootfs string
	limits := map[string]string{}
	var cgroup []string
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "rootfs "); ok {
			rootfs = v
		}
		if v, ok := strings.CutPrefix(line, "cgroup "); ok {
			cgroup = append(cgroup, v)
		}
		for _, name := range []string{"Max cpu time", "Max file size", "Max open files"} {
			if rest, ok := strings.CutPrefix(line, name); ok {
				limits[name] = strings.Fields(rest)[0]
			}
		}
	}
	if !slices.Contains(strings.Split(rootfs, ","), "ro") {
		t.Errorf("the root mount's options are %q, want ro (writable for root inside)\n%s", rootfs, out)
	}
	want := map[string]string{"Max cpu time": "60", "Max file size": "268435456", "Max open files": "1024"}
	for name, w := range want {
		if limits[name] != w {
			t.Errorf("%s = %q inside the sandbox, want the default %s", name, limits[name], w)
		}
	}
	if !slices.Equal(cgroup, []string{"1073741824", "256"}) {
		t.Errorf("cgroup memory and pids limits inside = %q, want [1073741824 256]", cgroup)
	}
}
