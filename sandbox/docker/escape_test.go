package docker_test

import (
	"cmp"
	"context"
	"net"
	"os"
	"path/filepath"
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
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// listProcs prints every process of the sandbox but itself, one
// "pid cmdline" per line.
const listProcs = `import os
me = str(os.getpid())
for p in sorted(os.listdir('/proc'), key=lambda s: s.zfill(9)):
    if p.isdigit() and p != me:
        try:
            cmd = open('/proc/%s/cmdline' % p, 'rb').read().replace(b'\0', b' ').decode().strip()
        except OSError:
            continue
        print(p, cmd)
`

// TestEscape runs abuse cases in one hardened session. After each case the
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
	const canary = "FIXPOINT_CANARY_7f3a9c"
	t.Setenv("FIXPOINT_ESCAPE_CANARY", canary)
	hostDir := t.TempDir()
	hostFile := filepath.Join(hostDir, "host-secret.txt")
	if err := os.WriteFile(hostFile, []byte(canary), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", ":0") // every host interface, loopback included
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan string, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port

	startCtx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	b, err := docker.New(startCtx, &docker.Options{Client: cli, Runtime: runtime, WorkspaceSize: 32 << 20, TmpSize: 32 << 20})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	limits := sandbox.Limits{Timeout: 3 * time.Second, Memory: 256 << 20, Pids: 64, OutputCap: 64 << 10}
	sess, err := b.Start(startCtx, sandbox.Spec{Image: testImage, Limits: limits})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s := sess.(*docker.Session)
	uid := sandboxUID(t, cli)
	defer func() {
		s.Close()
		sandboxtest.RequireNoContainers(t, cli, docker.LabelSession, s.Name())
	}()
	if _, err := s.Sync(t.Context(), &sandbox.Snapshot{Files: map[string]sandbox.File{"keep.txt": {Data: []byte("kept")}}}); err != nil {
		t.Fatalf("Sync: %v", err)
	}

	py := func(code string) []string { return []string{"python3", "-c", code} }
	tests := []struct {
		name   string
		args   []string
		limits sandbox.Limits
		check  func(t *testing.T, res *sandbox.Result)
		// mayKillSandbox marks memory exhaustion cases, which on runsc
		// may end the whole sandbox instead of the command.
		mayKillSandbox bool
	}{
		{
			name:           "fork bomb",
			args:           py("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"),
			mayKillSandbox: true,
			check: func(t *testing.T, res *sandbox.Result) {
				// runc: the pids limit holds it until the timeout. runsc: it
				// may run out of memory first (137).
				if !(res.TimedOut && res.ExitCode == 124) && !(gvisor && res.ExitCode == 137) {
					t.Errorf("fork bomb = exit %d timedOut %v, want 124 after the timeout", res.ExitCode, res.TimedOut)
				}
			},
		},
		{
			name:           "allocate 4 GiB",
			args:           py("b = b'x' * (4 << 30)\nprint(len(b))"),
			mayKillSandbox: true,
			check: func(t *testing.T, res *sandbox.Result) {
				// Killed by the cgroup (137, OOMKilled), or refused by Python.
				// gVisor's /sys has no OOM counter: 137 alone is enough there.
				// On a saturated machine the timeout may come first.
				if res.TimedOut {
					return
				}
				if res.ExitCode == 0 || (res.ExitCode == 137) != (res.OOMKilled || gvisor) {
					t.Errorf("4 GiB = exit %d oom %v stderr %q, want 137 + OOMKilled or a MemoryError", res.ExitCode, res.OOMKilled, res.Stderr)
				}
			},
		},
		{
			name: "endless CPU spin",
			args: py("while True: pass"),
			check: func(t *testing.T, res *sandbox.Result) {
				if !res.TimedOut || res.ExitCode != 124 {
					t.Errorf("spin = exit %d timedOut %v, want 124", res.ExitCode, res.TimedOut)
				}
			},
		},
		{
			name: "CPU time limit",
			args: py("while True: pass"),
			// The wall limit is far away so that only the CPU limit can end
			// the spin, even on a loaded machine where 1 s of CPU takes long.
			limits: sandbox.Limits{Timeout: 45 * time.Second, CPUTime: time.Second},
			check: func(t *testing.T, res *sandbox.Result) {
				if !res.TimedOut || res.ExitCode != 124 || res.Duration > 40*time.Second {
					t.Errorf("spin with 1s CPU = exit %d timedOut %v after %v, want 124 well before the wall timeout", res.ExitCode, res.TimedOut, res.Duration)
				}
			},
		},
		{
			name: "sleep 3600",
			args: []string{"sleep", "3600"},
			check: func(t *testing.T, res *sandbox.Result) {
				if !res.TimedOut || res.ExitCode != 124 {
					t.Errorf("sleep = exit %d timedOut %v, want 124", res.ExitCode, res.TimedOut)
				}
			},
		},
		{
			name: "endless printing",
			args: []string{"yes", "spam"},
			check: func(t *testing.T, res *sandbox.Result) {
				marker := "[fixpoint: output truncated after 65536 bytes]"
				if !res.Truncated || len(res.Stdout) > 65536+len(marker)+2 || !strings.Contains(string(res.Stdout), marker) {
					t.Errorf("yes = truncated %v, %d bytes of stdout, want at most the 64 KiB cap and the marker", res.Truncated, len(res.Stdout))
				}
			},
		},
		{
			name: "fill the workspace",
			args: []string{"sh", "-c", "dd if=/dev/zero of=big bs=1M count=1000; echo dd=$?; rm -f big"},
			check: func(t *testing.T, res *sandbox.Result) {
				if !strings.Contains(string(res.Stdout), "dd=1") || !strings.Contains(string(res.Stderr), "No space left") {
					t.Errorf("filling /workspace: stdout %q stderr %q, want dd to fail with ENOSPC", res.Stdout, res.Stderr)
				}
			},
		},
		{
			name: "fill /tmp",
			args: []string{"sh", "-c", "dd if=/dev/zero of=/tmp/big bs=1M count=1000; echo dd=$?; rm -f /tmp/big"},
			check: func(t *testing.T, res *sandbox.Result) {
				if !strings.Contains(string(res.Stdout), "dd=1") || !strings.Contains(string(res.Stderr), "No space left") {
					t.Errorf("filling /tmp: stdout %q stderr %q, want dd to fail with ENOSPC", res.Stdout, res.Stderr)
				}
			},
		},
		{
			name: "write outside the writable mounts",
			args: []string{"sh", "-c", "touch /etc/x /usr/x /x 2>&1; echo rc=$?"},
			check: func(t *testing.T, res *sandbox.Result) {
				// runc says read-only; gVisor checks permissions first.
				if n := strings.Count(string(res.Stdout), "Read-only file system") + strings.Count(string(res.Stdout), "Permission denied"); n != 3 {
					t.Errorf("touch on the root fs: %q, want three refusals", res.Stdout)
				}
			},
		},
		{
			name: "TCP to a host listener",
			// The default gateway, read from the sandbox's own routing
			// table, is probed too: with network=none there is none, and
			// if there were one it is the engine's bridge on this host.
			args: py(`import errno, socket, struct
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
			check: func(t *testing.T, res *sandbox.Result) {
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
			name: "host environment and files",
			args: []string{"sh", "-c", "env; echo ---; cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'; cat " + hostFile + " 2>&1; ls -a " + hostDir + " 2>&1; ls -a /root 2>&1"},
			check: func(t *testing.T, res *sandbox.Result) {
				if strings.Contains(string(res.Stdout)+string(res.Stderr), canary) {
					t.Errorf("the sandbox saw the host canary:\n%s", res.Stdout)
				}
				allowed := []string{"PATH", "HOME", "LANG", "TMPDIR", "PWD", "SHLVL", "_", "OLDPWD"}
				allowed = append(allowed, imageEnvKeys(t, cli)...)
				env, _, _ := strings.Cut(string(res.Stdout), "---")
				for _, line := range strings.Split(strings.TrimSpace(env), "\n") {
					if k, _, _ := strings.Cut(line, "="); !slices.Contains(allowed, k) {
						t.Errorf("unexpected environment variable %q", line)
					}
				}
			},
		},
		{
			name: "docker socket",
			args: py(`import os
found = []
for top in ["/var/run", "/run", "/tmp", "/workspace", "/", "/var", "/home", "/root"]:
    for dirpath, dirs, files in os.walk(top, onerror=lambda e: None):
        if dirpath.startswith(("/proc", "/sys")):
            dirs[:] = []
            continue
        found += [os.path.join(dirpath, f) for f in files if "docker" in f and f.endswith(".sock")]
print("sockets:", found)`),
			limits: sandbox.Limits{Timeout: 30 * time.Second}, // walking the tree is slow on gVisor
			check: func(t *testing.T, res *sandbox.Result) {
				if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "sockets: []") {
					t.Errorf("docker socket search: exit %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
				}
			},
		},
		{
			name: "setuid and privileges",
			args: py(`import os
print("uid", os.getuid(), os.geteuid())
for name, f in (("setuid", lambda: os.setuid(0)), ("setgid", lambda: os.setgid(0)), ("chroot", lambda: os.chroot("/tmp")), ("mknod", lambda: os.mknod("/tmp/dev", 0o600 | 0o20000, os.makedev(1, 3)))):
    try:
        f(); print(name, "ALLOWED")
    except PermissionError as e:
        print(name, "denied")
st = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines() if ":\t" in l)
print("CapEff", st["CapEff"].strip(), "CapBnd", st["CapBnd"].strip(), "NoNewPrivs", st.get("NoNewPrivs", "?").strip())
import shutil, subprocess
open("/tmp/suid", "wb").write(open("/bin/true", "rb").read())
os.chmod("/tmp/suid", 0o4755)
print("suid bit kept:", bool(os.stat("/tmp/suid").st_mode & 0o4000))`),
			check: func(t *testing.T, res *sandbox.Result) {
				out := string(res.Stdout)
				wants := []string{"uid " + uid + " " + uid, "CapEff 0000000000000000", "CapBnd 0000000000000000", "NoNewPrivs 1"}
				if gvisor {
					// gVisor's /proc lacks NoNewPrivs, and its mknod makes a
					// node of its own virtual filesystem, harmless.
					wants = wants[:3]
					out = strings.ReplaceAll(out, "mknod ALLOWED", "")
				}
				for _, want := range wants {
					if !strings.Contains(out, want) {
						t.Errorf("privileges: output lacks %q:\n%s%s", want, out, res.Stderr)
					}
				}
				if strings.Contains(out, "ALLOWED") {
					t.Errorf("a privileged call succeeded:\n%s", out)
				}
			},
		},
		{
			name: "daemon left behind",
			args: []string{"sh", "-c", "sleep 1000 & setsid sleep 1001 & python3 -c 'import os; os.fork() or os.setsid() or os.execvp(\"sleep\", [\"sleep\", \"1002\"])'; echo started"},
			check: func(t *testing.T, res *sandbox.Result) {
				if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "started") || res.TimedOut {
					t.Errorf("daemon case = exit %d %q %q, want a prompt exit", res.ExitCode, res.Stdout, res.Stderr)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Armed: a Run that outlives its own timeout by a minute fails
			// this case (and kills the command) instead of blocking the
			// suite until go test's -timeout.
			wall := limits.Timeout
			if tt.limits.Timeout > 0 {
				wall = tt.limits.Timeout
			}
			ctx, cancel := context.WithTimeout(t.Context(), wall+time.Minute)
			defer cancel()
			cmd := sandbox.Command{Args: tt.args, Limits: tt.limits}
			res, err := s.Run(ctx, cmd)
			if ctx.Err() != nil {
				t.Fatalf("Run did not return within %v of its %v timeout: %v", time.Minute, wall, err)
			}
			switch {
			case err == nil:
				tt.check(t, res)
			case gvisor && tt.mayKillSandbox:
				// Out of memory, gVisor's Sentry (a host process) is
				// killed with the whole sandbox; the session must replace
				// it transparently, which assertClean checks.
				t.Logf("Run: %v (the sandbox died; it must be replaced)", err)
			default:
				t.Fatalf("Run: %v", err)
			}
			assertClean(t, s)
			if got := len(runningSessions(t, cli)); got != 1 {
				t.Errorf("%d sandbox containers of this test run, want 1", got)
			}
		})
	}
	select {
	case from := <-accepted:
		t.Errorf("the host listener accepted a connection from %s", from)
	default:
	}
}

// assertClean checks that only the container's init and the supervisor
// are left, and that the session still runs commands and kept its files.
func assertClean(t *testing.T, s *docker.Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := s.Run(ctx, sandbox.Command{Args: []string{"python3", "-c", listProcs}})
	if err != nil {
		t.Fatalf("session unusable after the case: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	var extra []string
	for _, l := range lines {
		if !strings.Contains(l, "docker-init") && !strings.Contains(l, "/.fixpoint/supervisor") {
			extra = append(extra, l)
		}
	}
	if len(extra) > 0 || len(lines) != 2 {
		t.Errorf("processes left in the sandbox:\n%s", res.Stdout)
	}
	if data, err := s.ReadFile(ctx, "keep.txt"); err != nil || string(data) != "kept" {
		t.Errorf("ReadFile(keep.txt) = %q, %v after the case", data, err)
	}
}

// containersOf lists the containers of one session, running or not.
func containersOf(t *testing.T, cli *client.Client, session string) []container.Summary {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", docker.LabelSession+"="+session))
	list, err := cli.ContainerList(t.Context(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatalf("list containers: %v", err)
	}
	return list
}

// runningSessions lists the sandbox containers this test process owns.
func runningSessions(t *testing.T, cli *client.Client) []container.Summary {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", docker.LabelPID+"="+strconv.Itoa(os.Getpid())))
	list, err := cli.ContainerList(t.Context(), container.ListOptions{All: true, Filters: f})
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
