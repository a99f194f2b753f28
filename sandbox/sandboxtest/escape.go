package sandboxtest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// EscapeSetup is the hardened session the escape battery attacks, and
// what its backend allows.
type EscapeSetup struct {
	// Session was started with EscapeLimits and /workspace and /tmp of at
	// most 32 MiB; its image has python3. Escape syncs "keep.txt" into it.
	Session sandbox.Session
	UID     string   // the uid commands run as
	Allowed []string // environment keys commands may see besides the base ones (the image's ENV)
	// Canary is a string from the host (a file, the environment) that
	// must never be seen inside; HostFile and HostDir hold it. EscapeHost
	// sets these and Port.
	Canary, HostFile, HostDir string
	// Port is a TCP listener on every host interface; Unreachable are
	// addresses (the node's, a bridge's) on which it must not be reached.
	Port        int
	Unreachable []string
	// ForkBombMayOOM: the backend has no per-sandbox pids limit of its
	// own, so memory may end a fork bomb first (137) instead of the
	// timeout (kubernetes: the kubelet's podPidsLimit is node-wide config).
	ForkBombMayOOM bool
	// Ours reports whether a process line ("pid cmdline") belongs to the
	// sandbox itself (its init, pid 1's idler, the supervisor).
	Ours func(line string) bool
	// After, when set, runs backend checks after each case (no other
	// sandbox of the session left).
	After func(t *testing.T)
	// OwnProcs, when above zero, is how many processes the sandbox itself
	// has (the lines Ours accepts): after each case there must be exactly
	// that many.
	OwnProcs int
	// GVisor: the sandbox runs under gVisor, whose /proc has no
	// NoNewPrivs or Seccomp line worth checking, whose /sys has no OOM
	// counter (137 alone means out of memory), whose mknod makes a node of
	// its own virtual filesystem (harmless), whose fork bomb may run out of
	// memory first, and whose Sentry (a host process), out of memory, may
	// die with the whole sandbox: then Run fails and the session must
	// replace the sandbox, which the checks after the case see.
	GVisor bool
	// Extra are the backend's own cases, run after the shared ones in the
	// same session and checked the same way.
	Extra []EscapeCase
}

// EscapeLimits are the limits of the session EscapeSetup describes.
func EscapeLimits() sandbox.Limits {
	return sandbox.Limits{Timeout: 3 * time.Second, Memory: 256 << 20, Pids: 64, OutputCap: 64 << 10}
}

// escapeListProcs prints every process but itself, "pid cmdline" a line.
const escapeListProcs = `import os
me = str(os.getpid())
for p in sorted(os.listdir('/proc'), key=lambda s: s.zfill(9)):
    if p.isdigit() and p != me:
        try:
            cmd = open('/proc/%s/cmdline' % p, 'rb').read().replace(b'\0', b' ').decode().strip()
        except OSError:
            continue
        print(p, cmd)
`

// EscapeCase is one abuse case: a command, its limits (zero: the
// session's), and what its result must show.
type EscapeCase struct {
	Name   string
	Args   []string
	Limits sandbox.Limits
	Check  func(t *testing.T, res *sandbox.Result)
	// MayKillSandbox marks memory exhaustion cases, which under gVisor may
	// end the whole sandbox instead of the command (EscapeSetup.GVisor).
	MayKillSandbox bool
}

// Escape runs the abuse cases every hardened backend must contain, in one
// session: after each, nothing of the case may be left running and the
// session must still work with its files. A backend adds its own cases in
// EscapeSetup.Extra (the docker backend's: its bridge and routes, pid 1's
// environment).
func Escape(t *testing.T, e EscapeSetup) {
	if _, err := e.Session.Sync(t.Context(), &sandbox.Snapshot{Files: map[string]sandbox.File{"keep.txt": {Data: []byte("kept")}}}); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	for _, c := range append(escapeCases(e), e.Extra...) {
		t.Run(c.Name, func(t *testing.T) {
			// Armed: a Run that outlives its own timeout by a minute fails
			// this case (and kills the command) instead of blocking the
			// suite until go test's -timeout.
			wall := cmpDur(c.Limits.Timeout, EscapeLimits().Timeout)
			ctx, cancel := context.WithTimeout(t.Context(), wall+time.Minute)
			defer cancel()
			res, err := e.Session.Run(ctx, sandbox.Command{Args: c.Args, Limits: c.Limits})
			if ctx.Err() != nil {
				t.Fatalf("Run did not return within a minute of its %v timeout: %v", wall, err)
			}
			switch {
			case err == nil:
				c.Check(t, res)
			case e.GVisor && c.MayKillSandbox:
				t.Logf("Run: %v (the sandbox died; it must be replaced)", err)
			default:
				t.Fatalf("Run: %v", err)
			}
			escapeClean(t, e)
			if e.After != nil {
				e.After(t)
			}
		})
	}
}

// EscapeHost plants canary on the host, in the environment
// (FIXPOINT_ESCAPE_CANARY) and in a file of a directory of its own, and
// opens a TCP listener on every host interface, loopback included. It
// returns an EscapeSetup with Canary, HostFile, HostDir and Port set.
// When the test ends, the listener must have accepted nothing.
func EscapeHost(t *testing.T, canary string) EscapeSetup {
	t.Setenv("FIXPOINT_ESCAPE_CANARY", canary)
	hostDir := t.TempDir()
	hostFile := filepath.Join(hostDir, "host-secret.txt")
	if err := os.WriteFile(hostFile, []byte(canary), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
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
	t.Cleanup(func() {
		ln.Close()
		select {
		case from := <-accepted:
			t.Errorf("the host listener accepted a connection from %s", from)
		default:
		}
	})
	return EscapeSetup{Canary: canary, HostFile: hostFile, HostDir: hostDir, Port: ln.Addr().(*net.TCPAddr).Port}
}

func cmpDur(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}

func escapeCases(e EscapeSetup) []EscapeCase {
	py := func(code string) []string { return []string{"python3", "-c", code} }
	targets := append([]string{"127.0.0.1"}, e.Unreachable...)
	var quoted []string
	for _, h := range targets {
		quoted = append(quoted, strconv.Quote(h))
	}
	return []EscapeCase{
		{
			Name:           "fork bomb",
			Args:           py("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"),
			MayKillSandbox: true,
			Check: func(t *testing.T, res *sandbox.Result) {
				if !(res.TimedOut && res.ExitCode == 124) && !((e.ForkBombMayOOM || e.GVisor) && res.ExitCode == 137) {
					t.Errorf("fork bomb = exit %d timedOut %v, want 124 after the timeout", res.ExitCode, res.TimedOut)
				}
			},
		},
		{
			Name:           "allocate 4 GiB",
			Args:           py("b = b'x' * (4 << 30)\nprint(len(b))"),
			MayKillSandbox: true,
			Check: func(t *testing.T, res *sandbox.Result) {
				// Killed by the cgroup (137, OOMKilled), or refused by Python.
				// On a saturated machine the timeout may come first.
				if res.TimedOut {
					return
				}
				if res.ExitCode == 0 || (res.ExitCode == 137) != (res.OOMKilled || e.GVisor) {
					t.Errorf("4 GiB = exit %d oom %v stderr %q, want 137 + OOMKilled or a MemoryError", res.ExitCode, res.OOMKilled, res.Stderr)
				}
			},
		},
		{
			Name: "endless CPU spin",
			Args: py("while True: pass"),
			Check: func(t *testing.T, res *sandbox.Result) {
				if !res.TimedOut || res.ExitCode != 124 {
					t.Errorf("spin = exit %d timedOut %v, want 124", res.ExitCode, res.TimedOut)
				}
			},
		},
		{
			Name:   "CPU time limit",
			Args:   py("while True: pass"),
			Limits: sandbox.Limits{Timeout: 45 * time.Second, CPUTime: time.Second},
			Check: func(t *testing.T, res *sandbox.Result) {
				if !res.TimedOut || res.ExitCode != 124 || res.Duration > 40*time.Second {
					t.Errorf("spin with 1s CPU = exit %d timedOut %v after %v, want 124 well before the wall timeout", res.ExitCode, res.TimedOut, res.Duration)
				}
			},
		},
		{
			Name: "sleep 3600",
			Args: []string{"sleep", "3600"},
			Check: func(t *testing.T, res *sandbox.Result) {
				if !res.TimedOut || res.ExitCode != 124 {
					t.Errorf("sleep = exit %d timedOut %v, want 124", res.ExitCode, res.TimedOut)
				}
			},
		},
		{
			Name: "endless printing",
			Args: []string{"yes", "spam"},
			Check: func(t *testing.T, res *sandbox.Result) {
				marker := "[fixpoint: output truncated after 65536 bytes]"
				if !res.Truncated || len(res.Stdout) > 65536+len(marker)+2 || !strings.Contains(string(res.Stdout), marker) {
					t.Errorf("yes = truncated %v, %d bytes of stdout, want at most the 64 KiB cap and the marker", res.Truncated, len(res.Stdout))
				}
			},
		},
		{
			Name: "fill the workspace",
			Args: []string{"sh", "-c", "dd if=/dev/zero of=big bs=1M count=1000; echo dd=$?; rm -f big"},
			Check: func(t *testing.T, res *sandbox.Result) {
				if !strings.Contains(string(res.Stdout), "dd=1") || !strings.Contains(string(res.Stderr), "No space left") {
					t.Errorf("filling /workspace: stdout %q stderr %q, want dd to fail with ENOSPC", res.Stdout, res.Stderr)
				}
			},
		},
		{
			Name: "fill /tmp",
			Args: []string{"sh", "-c", "dd if=/dev/zero of=/tmp/big bs=1M count=1000; echo dd=$?; rm -f /tmp/big"},
			Check: func(t *testing.T, res *sandbox.Result) {
				if !strings.Contains(string(res.Stdout), "dd=1") || !strings.Contains(string(res.Stderr), "No space left") {
					t.Errorf("filling /tmp: stdout %q stderr %q, want dd to fail with ENOSPC", res.Stdout, res.Stderr)
				}
			},
		},
		{
			Name: "write outside the writable mounts",
			Args: []string{"sh", "-c", "touch /etc/x /usr/x /x 2>&1; echo rc=$?"},
			Check: func(t *testing.T, res *sandbox.Result) {
				if n := strings.Count(string(res.Stdout), "Read-only file system") + strings.Count(string(res.Stdout), "Permission denied"); n != 3 {
					t.Errorf("touch on the root fs: %q, want three refusals", res.Stdout)
				}
			},
		},
		{
			Name: "TCP to a host listener",
			Args: py(`import errno, socket
for h in [` + strings.Join(quoted, ", ") + `]:
    try:
        socket.create_connection((h, ` + strconv.Itoa(e.Port) + `), timeout=2).close()
        print("CONNECTED", h)
    except OSError as e:
        print("blocked", h, type(e).__name__, errno.errorcode.get(e.errno, e.errno))`),
			Limits: sandbox.Limits{Timeout: 30 * time.Second},
			Check: func(t *testing.T, res *sandbox.Result) {
				if out := string(res.Stdout); strings.Contains(out, "CONNECTED") || res.ExitCode != 0 {
					t.Errorf("the sandbox reached the host listener (exit %d):\n%s%s", res.ExitCode, out, res.Stderr)
				}
			},
		},
		{
			Name: "host environment and files",
			Args: []string{"sh", "-c", "env; echo ---; cat " + e.HostFile + " 2>&1; ls -a " + e.HostDir + " 2>&1; ls -a /root 2>&1"},
			Check: func(t *testing.T, res *sandbox.Result) {
				if e.Canary != "" && strings.Contains(string(res.Stdout)+string(res.Stderr), e.Canary) {
					t.Errorf("the sandbox saw the host canary:\n%s", res.Stdout)
				}
				allowed := append([]string{"PATH", "HOME", "LANG", "TMPDIR", "PWD", "SHLVL", "_", "OLDPWD"}, e.Allowed...)
				env, _, _ := strings.Cut(string(res.Stdout), "---")
				for _, line := range strings.Split(strings.TrimSpace(env), "\n") {
					if k, _, _ := strings.Cut(line, "="); !slices.Contains(allowed, k) {
						t.Errorf("unexpected environment variable %q", line)
					}
				}
			},
		},
		{
			Name: "engine sockets and cluster credentials",
			Args: py(`import os
found = []
for top in ["/var/run", "/run", "/tmp", "/workspace", "/", "/var", "/home", "/root", "/etc"]:
    for dirpath, dirs, files in os.walk(top, onerror=lambda e: None):
        if dirpath.startswith(("/proc", "/sys")):
            dirs[:] = []
            continue
        found += [os.path.join(dirpath, f) for f in files if f.endswith(".sock") and ("docker" in f or "containerd" in f) or f in ("token", "kubeconfig", "ca.crt") and "serviceaccount" in dirpath]
print("found:", found, os.path.exists("/var/run/secrets/kubernetes.io"))`),
			Limits: sandbox.Limits{Timeout: 30 * time.Second},
			Check: func(t *testing.T, res *sandbox.Result) {
				if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "found: [] False") {
					t.Errorf("socket and token search: exit %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
				}
			},
		},
		{
			Name: "setuid and privileges",
			Args: py(`import os
print("uid", os.getuid(), os.geteuid())
for name, f in (("setuid", lambda: os.setuid(0)), ("setgid", lambda: os.setgid(0)), ("chroot", lambda: os.chroot("/tmp")), ("mknod", lambda: os.mknod("/tmp/dev", 0o600 | 0o20000, os.makedev(1, 3)))):
    try:
        f(); print(name, "ALLOWED")
    except PermissionError as e:
        print(name, "denied")
st = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines() if ":\t" in l)
print("CapEff", st["CapEff"].strip(), "CapBnd", st["CapBnd"].strip(), "NoNewPrivs", st.get("NoNewPrivs", "?").strip(), "Seccomp", st.get("Seccomp", "?").strip())`),
			Check: func(t *testing.T, res *sandbox.Result) {
				out := string(res.Stdout)
				wants := []string{"uid " + e.UID + " " + e.UID, "CapEff 0000000000000000", "CapBnd 0000000000000000", "NoNewPrivs 1", "Seccomp 2"}
				if e.GVisor {
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
			Name: "daemon left behind",
			Args: []string{"sh", "-c", "sleep 1000 & setsid sleep 1001 & python3 -c 'import os; os.fork() or os.setsid() or os.execvp(\"sleep\", [\"sleep\", \"1002\"])'; echo started"},
			Check: func(t *testing.T, res *sandbox.Result) {
				if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "started") || res.TimedOut {
					t.Errorf("daemon case = exit %d %q %q, want a prompt exit", res.ExitCode, res.Stdout, res.Stderr)
				}
			},
		},
	}
}

// escapeClean checks that only the sandbox's own processes are left and
// that the session still runs commands and kept its files.
func escapeClean(t *testing.T, e EscapeSetup) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := e.Session.Run(ctx, sandbox.Command{Args: []string{"python3", "-c", escapeListProcs}})
	if err != nil {
		t.Fatalf("session unusable after the case: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	for _, l := range lines {
		if e.Ours == nil || !e.Ours(l) {
			t.Errorf("process left in the sandbox: %s", l)
		}
	}
	if e.OwnProcs > 0 && len(lines) != e.OwnProcs {
		t.Errorf("%d processes in the sandbox, want its own %d:\n%s", len(lines), e.OwnProcs, res.Stdout)
	}
	if data, err := e.Session.ReadFile(ctx, "keep.txt"); err != nil || string(data) != "kept" {
		t.Errorf("ReadFile(keep.txt) = %q, %v after the case", data, err)
	}
}
