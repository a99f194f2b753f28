package host_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/host"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// backendsUnderTest returns the local backends; bwrap needs the program.
func backendsUnderTest(t *testing.T) []sandbox.Backend {
	t.Helper()
	var warn bytes.Buffer
	h, err := host.New(&host.Options{Warn: &warn})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.RequireCommand(t, "bwrap")
	b, err := bwrap.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := []sandbox.Backend{h, b}
	// Docker joins when an engine and the python image are here (and must
	// under CI=true).
	if cli := dockerOrNil(t, "fixpoint-sandbox-python"); cli != nil {
		d, err := docker.New(t.Context(), &docker.Options{Client: cli, NoReap: true})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, imageBackend{d, "fixpoint-sandbox-python"})
	}
	return out
}

// dockerOrNil returns a client when an engine answers and has image; it
// fails under CI=true when not.
func dockerOrNil(t *testing.T, image string) *client.Client {
	t.Helper()
	cli, err := engine.NewClient()
	if err == nil {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		if _, err = cli.Ping(ctx); err == nil {
			_, err = cli.ImageInspect(ctx, image)
		}
	}
	if err != nil {
		if sandboxtest.InCI() {
			t.Fatalf("CI=true and docker with %s unavailable: %v", image, err)
		}
		t.Logf("docker left out of the parity run: %v", err)
		return nil
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// imageBackend fills in the image for the docker backend.
type imageBackend struct {
	sandbox.Backend
	image string
}

func (b imageBackend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	spec.Image = b.image
	return b.Backend.Start(ctx, spec)
}

func workspace(t *testing.T) (string, *sandbox.Snapshot) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"main.py":        "import sys\nprint('hello from', sys.argv[1:])\n",
		"pkg/util.py":    "X = 42\n",
		"data/input.txt": "line1\nline2\n",
	}
	for rel, data := range files {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := sandbox.SnapshotDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dir, snap
}

// TestParity runs the same commands on every local backend and checks the
// docker backend's semantics: exit codes, output, 124 on timeout, output
// caps, no host environment, host directory untouched.
func TestParity(t *testing.T) {
	t.Setenv("FIXPOINT_CANARY_SECRET", "canary-7f3a")
	cases := []struct {
		name      string
		args      []string
		dir       string
		env       []string
		stdin     string
		limits    sandbox.Limits
		spec      sandbox.Limits // session limits (docker sizes the container with them)
		wantCode  int
		wantOut   string // substring of stdout
		wantErr   string // substring of stderr
		notOut    string // must not be in stdout
		timedOut  bool
		truncated bool
	}{
		{name: "python", args: []string{"python3", "main.py", "a"}, wantOut: "hello from ['a']"},
		{name: "exit code", args: []string{"sh", "-c", "echo oops >&2; exit 3"}, wantCode: 3, wantErr: "oops"},
		{name: "subdir", args: []string{"python3", "-c", "import util; print(util.X)"}, dir: "pkg", wantOut: "42"},
		{name: "env", args: []string{"sh", "-c", "echo $GREETING; env"}, env: []string{"GREETING=hi"}, wantOut: "hi", notOut: "canary-7f3a"},
		{name: "stdin", args: []string{"python3", "-c", "import sys; print(sys.stdin.read().upper())"}, stdin: "quiet", wantOut: "QUIET"},
		{name: "timeout", args: []string{"sleep", "30"}, limits: sandbox.Limits{Timeout: 500 * time.Millisecond}, wantCode: 124, timedOut: true},
		{name: "output cap", args: []string{"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x"}, limits: sandbox.Limits{OutputCap: 4096, Timeout: 10 * time.Second}, wantCode: 0, wantOut: "[fixpoint: output truncated after 4096 bytes]", truncated: true},
		{name: "missing program", args: []string{"no-such-program-xyz"}, wantCode: 127, wantErr: "fixpoint: no-such-program-xyz: command not found"},
		{name: "write workspace", args: []string{"sh", "-c", "echo changed > main.py && rm data/input.txt && cat main.py"}, wantOut: "changed"},
		{name: "memory", args: []string{"python3", "-c", "x = b'a' * (600 << 20); print('allocated')"}, spec: sandbox.Limits{Memory: 256 << 20}, wantCode: -1, notOut: "allocated"},
	}
	for _, b := range backendsUnderTest(t) {
		t.Run(b.Name(), func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					dir, snap := workspace(t)
					before, _ := sandbox.SnapshotDir(dir, nil)
					ctx := t.Context()
					s, err := b.Start(ctx, sandbox.Spec{Limits: tc.spec})
					if err != nil {
						t.Fatal(err)
					}
					defer s.Close()
					if _, err := s.Sync(ctx, snap); err != nil {
						t.Fatal(err)
					}
					cmd := sandbox.Command{Args: tc.args, Dir: tc.dir, Env: tc.env, Limits: tc.limits}
					if tc.stdin != "" {
						cmd.Stdin = []byte(tc.stdin)
					}
					res, err := s.Run(ctx, cmd)
					if err != nil {
						t.Fatalf("Run(%q) error: %v", tc.args, err)
					}
					if tc.wantCode == -1 { // contained: MemoryError (rlimit, exit 1) or OOM kill (cgroup, 137)
						if res.ExitCode != 1 && res.ExitCode != 137 {
							t.Errorf("Run(%q) exit = %d, want 1 (MemoryError) or 137 (OOM kill)", tc.args, res.ExitCode)
						}
					} else if res.ExitCode != tc.wantCode {
						t.Errorf("Run(%q) exit = %d, want %d; stderr: %s", tc.args, res.ExitCode, tc.wantCode, res.Stderr)
					}
					if !strings.Contains(string(res.Stdout), tc.wantOut) {
						t.Errorf("Run(%q) stdout = %.300q, want it to contain %q", tc.args, res.Stdout, tc.wantOut)
					}
					if !strings.Contains(string(res.Stderr), tc.wantErr) {
						t.Errorf("Run(%q) stderr = %q, want it to contain %q", tc.args, res.Stderr, tc.wantErr)
					}
					if tc.notOut != "" && strings.Contains(string(res.Stdout), tc.notOut) {
						t.Errorf("Run(%q) stdout contains %q", tc.args, tc.notOut)
					}
					if res.TimedOut != tc.timedOut || res.Truncated != tc.truncated {
						t.Errorf("Run(%q) timedOut=%v truncated=%v, want %v %v", tc.args, res.TimedOut, res.Truncated, tc.timedOut, tc.truncated)
					}
					after, _ := sandbox.SnapshotDir(dir, nil)
					if before.Digest() != after.Digest() {
						t.Errorf("host workspace changed by %q", tc.args)
					}
				})
			}
		})
	}
}

// TestSessionLifecycle checks incremental Sync, ReadFile, the session
// staying usable after a timeout, and Close removing everything.
func TestSessionLifecycle(t *testing.T) {
	for _, b := range backendsUnderTest(t) {
		t.Run(b.Name(), func(t *testing.T) {
			ctx := t.Context()
			_, snap := workspace(t)
			s, err := b.Start(ctx, sandbox.Spec{})
			if err != nil {
				t.Fatal(err)
			}
			st, err := s.Sync(ctx, snap)
			if err != nil || st.Written != 3 {
				t.Fatalf("first Sync = %+v, %v; want 3 files written", st, err)
			}
			next := snap.With(map[string][]byte{"pkg/util.py": []byte("X = 7\n"), "data/input.txt": nil})
			st, err = s.Sync(ctx, next)
			if err != nil || st.Written != 1 || st.Deleted != 1 {
				t.Fatalf("second Sync = %+v, %v; want 1 written, 1 deleted", st, err)
			}
			res, err := s.Run(ctx, sandbox.Command{Args: []string{"sh", "-c", "sleep 20 & sleep 20"}, Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}})
			if err != nil || res.ExitCode != 124 {
				t.Fatalf("timeout run = %+v, %v; want exit 124", res, err)
			}
			res, err = s.Run(ctx, sandbox.Command{Args: []string{"sh", "-c", "python3 -c 'import util; print(util.X)' > out.txt; test ! -e ../data/input.txt"}, Dir: "pkg"})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("run after timeout = %+v, %v", res, err)
			}
			if got, err := s.ReadFile(ctx, "pkg/out.txt"); err != nil || string(got) != "7\n" {
				t.Errorf("ReadFile(pkg/out.txt) = %q, %v; want \"7\\n\"", got, err)
			}
			if _, err := s.ReadFile(ctx, "../etc-passwd"); err == nil {
				t.Errorf("ReadFile(../etc-passwd) succeeded; want an error")
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Run(ctx, sandbox.Command{Args: []string{"true"}}); err == nil {
				t.Errorf("Run after Close succeeded")
			}
		})
	}
}

// TestNoneWarns checks that every Start of the none backend warns.
func TestNoneWarns(t *testing.T) {
	var warn bytes.Buffer
	h, _ := host.New(&host.Options{Warn: &warn})
	for i := 0; i < 2; i++ {
		s, err := h.Start(context.Background(), sandbox.Spec{})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	if n := strings.Count(warn.String(), "ON THIS HOST"); n != 2 {
		t.Errorf("warnings = %d, want 2 (one per Start): %q", n, warn.String())
	}
}

// TestNoLeftovers checks that a daemon started by a command (even in its
// own session) does not outlive the command, on every local backend.
func TestNoLeftovers(t *testing.T) {
	for _, b := range backendsUnderTest(t) {
		t.Run(b.Name(), func(t *testing.T) {
			if b.Name() == "none" {
				sandboxtest.RequireRoot(t) // the none backend finds escaped daemons by uid
			}
			s, err := b.Start(t.Context(), sandbox.Spec{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", "(setsid sleep 313 &); nohup sleep 314 >/dev/null 2>&1 & echo ok"}})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			// Run sent SIGKILL to what the command left; wait for the
			// kernel to end them, and fail only if they stay.
			if out := waitGone(t, "sleep 31[34]"); len(out) > 0 {
				t.Errorf("processes left behind: %s", out)
			}
		})
	}
}

// TestReap checks that a session directory left by a dead process is
// removed and a live one is kept.
func TestReap(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadDir := filepath.Join(dir, fmt.Sprintf("fixpoint-bwrap-%d-61001-123", dead.Process.Pid))
	liveDir := filepath.Join(dir, fmt.Sprintf("fixpoint-none-%d-0-456", os.Getpid()))
	other := filepath.Join(dir, "fixpoint-other-1-2-3")
	for _, d := range []string{deadDir, liveDir, other} {
		os.MkdirAll(filepath.Join(d, "workspace"), 0o755)
	}
	if n := host.Reap(dir, nil); n != 1 {
		t.Errorf("Reap = %d, want 1", n)
	}
	if _, err := os.Stat(deadDir); err == nil {
		t.Errorf("dead session dir kept")
	}
	for _, d := range []string{liveDir, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed", d)
		}
	}
}

// waitGone waits until no process's command line matches pattern (pgrep
// -f), checking again each time the kernel has had a moment, and returns
// what still matches when a generous bound passes: a killed process
// exits soon, a leaked one never does.
func waitGone(t *testing.T, pattern string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		out, _ := exec.Command("pgrep", "-f", pattern).Output()
		if len(out) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return out
		case <-tick.C:
		}
	}
}
