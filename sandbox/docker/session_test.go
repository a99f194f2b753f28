package docker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/redact"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

const testImage = "fixpoint-sandbox-python"

// newSession starts a session on the real engine and closes it at cleanup.
func newSession(t *testing.T, limits sandbox.Limits) (*docker.Backend, *docker.Session) {
	return startSession(t, limits)
}

func newSessionB(b *testing.B) (*docker.Backend, *docker.Session) {
	return startSession(b, sandbox.Limits{})
}

func startSession(t testing.TB, limits sandbox.Limits) (*docker.Backend, *docker.Session) {
	t.Helper()
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, testImage)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	sess, err := b.Start(t.Context(), sandbox.Spec{Image: testImage, Limits: limits})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s := sess.(*docker.Session)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		sandboxtest.RequireNoContainers(t, cli, docker.LabelSession, s.Name())
	})
	return b, s
}

func TestRun(t *testing.T) {
	_, s := newSession(t, sandbox.Limits{Timeout: 10 * time.Second})
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"sub/hello.txt": {Data: []byte("hi from file\n")},
		"run.sh":        {Data: []byte("#!/bin/sh\necho script $1\n"), Mode: 0o755},
	}}
	if _, err := s.Sync(t.Context(), snap); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	tests := []struct {
		name       string
		cmd        sandbox.Command
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "echo", cmd: sandbox.Command{Args: []string{"echo", "hello"}}, wantStdout: "hello\n"},
		{name: "exit code", cmd: sandbox.Command{Args: []string{"sh", "-c", "exit 3"}}, wantCode: 3},
		{name: "stderr", cmd: sandbox.Command{Args: []string{"sh", "-c", "echo oops >&2"}}, wantStderr: "oops\n"},
		{name: "stdin", cmd: sandbox.Command{Args: []string{"cat"}, Stdin: []byte("fed\n")}, wantStdout: "fed\n"},
		{name: "env", cmd: sandbox.Command{Args: []string{"sh", "-c", "echo $FOO $HOME"}, Env: []string{"FOO=bar"}}, wantStdout: "bar /tmp\n"},
		{name: "dir", cmd: sandbox.Command{Args: []string{"cat", "hello.txt"}, Dir: "sub"}, wantStdout: "hi from file\n"},
		{name: "script", cmd: sandbox.Command{Args: []string{"./run.sh", "x"}}, wantStdout: "script x\n"},
		{name: "python", cmd: sandbox.Command{Args: []string{"python3", "-c", "import os; print(os.getuid() != 0, os.getcwd())"}}, wantStdout: "True /workspace\n"},
		{name: "not found", cmd: sandbox.Command{Args: []string{"no-such-command"}}, wantCode: 127, wantStderr: "fixpoint: no-such-command: command not found\n"},
		{name: "signal", cmd: sandbox.Command{Args: []string{"sh", "-c", "kill -TERM $$"}}, wantCode: 143},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			tt.cmd.Stdout = &out
			res, err := s.Run(t.Context(), tt.cmd)
			if err != nil {
				t.Fatalf("Run(%q): %v", tt.cmd.Args, err)
			}
			if res.ExitCode != tt.wantCode || string(res.Stdout) != tt.wantStdout || string(res.Stderr) != tt.wantStderr {
				t.Errorf("Run(%q) = code %d stdout %q stderr %q, want %d %q %q", tt.cmd.Args, res.ExitCode, res.Stdout, res.Stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
			if out.String() != tt.wantStdout {
				t.Errorf("Run(%q) streamed %q, want %q", tt.cmd.Args, out.String(), tt.wantStdout)
			}
		})
	}
}

func TestSyncIncremental(t *testing.T) {
	_, s := newSession(t, sandbox.Limits{Timeout: 10 * time.Second})
	ctx := t.Context()
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"a.txt":     {Data: []byte("a1")},
		"b.txt":     {Data: []byte("b1")},
		"dir/c.txt": {Data: []byte("c1")},
	}}
	steps := []struct {
		name    string
		snap    func() *sandbox.Snapshot
		prepare []string // command run before the sync
		want    sandbox.SyncStats
		files   map[string]string // expected contents; "" = must be missing
	}{
		{name: "first sends all", snap: func() *sandbox.Snapshot { return snap },
			want: sandbox.SyncStats{Written: 3, Bytes: 6}, files: map[string]string{"a.txt": "a1", "dir/c.txt": "c1"}},
		{name: "unchanged sends nothing", snap: func() *sandbox.Snapshot { return snap },
			want: sandbox.SyncStats{}},
		{name: "one change", snap: func() *sandbox.Snapshot { snap = snap.With(map[string][]byte{"a.txt": []byte("a22")}); return snap },
			want: sandbox.SyncStats{Written: 1, Bytes: 3}, files: map[string]string{"a.txt": "a22", "b.txt": "b1"}},
		{name: "delete", snap: func() *sandbox.Snapshot { snap = snap.With(map[string][]byte{"b.txt": nil}); return snap },
			want: sandbox.SyncStats{Deleted: 1}, files: map[string]string{"b.txt": ""}},
		{name: "file changed by a command is restored", snap: func() *sandbox.Snapshot { return snap },
			prepare: []string{"sh", "-c", "echo tampered > dir/c.txt"},
			want:    sandbox.SyncStats{Written: 1, Bytes: 2}, files: map[string]string{"dir/c.txt": "c1"}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.prepare != nil {
				if res, err := s.Run(ctx, sandbox.Command{Args: st.prepare}); err != nil || res.ExitCode != 0 {
					t.Fatalf("Run(%q) = %+v, %v", st.prepare, res, err)
				}
			}
			got, err := s.Sync(ctx, st.snap())
			if err != nil {
				t.Fatalf("Sync: %v", err)
			}
			if got != st.want {
				t.Errorf("Sync = %+v, want %+v", got, st.want)
			}
			for p, want := range st.files {
				data, err := s.ReadFile(ctx, p)
				if want == "" {
					if !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("ReadFile(%q) = %q, %v, want fs.ErrNotExist", p, data, err)
					}
					continue
				}
				if err != nil || string(data) != want {
					t.Errorf("ReadFile(%q) = %q, %v, want %q", p, data, err, want)
				}
			}
		})
	}
}

func TestReadFileRejectsEscapes(t *testing.T) {
	_, s := newSession(t, sandbox.Limits{})
	for _, p := range []string{"../etc/passwd", "/etc/passwd", ""} {
		if data, err := s.ReadFile(t.Context(), p); err == nil {
			t.Errorf("ReadFile(%q) = %q, want an error", p, data)
		}
	}
}

func TestCancelKeepsSession(t *testing.T) {
	_, s := newSession(t, sandbox.Limits{Timeout: 30 * time.Second})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	_, err := s.Run(ctx, sandbox.Command{Args: []string{"sleep", "30"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run(sleep) after cancel = %v, want context.Canceled", err)
	}
	res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"echo", "alive"}})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "alive" {
		t.Fatalf("Run(echo) after cancel = %+v, %v", res, err)
	}
}

func TestClosedSession(t *testing.T) {
	_, s := newSession(t, sandbox.Limits{})
	s.Close()
	if _, err := s.Run(t.Context(), sandbox.Command{Args: []string{"true"}}); !errors.Is(err, sandbox.ErrClosed) {
		t.Errorf("Run after Close = %v, want ErrClosed", err)
	}
}

// TestReplacedAfterSupervisorDies kills the supervisor from inside; the
// next call must start a new container with the last snapshot.
func TestReplacedAfterSupervisorDies(t *testing.T) {
	_, s := newSession(t, sandbox.Limits{Timeout: 10 * time.Second})
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{"f.txt": {Data: []byte("synced")}}}
	if _, err := s.Sync(t.Context(), snap); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	first := s.ContainerID()
	if _, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", "kill -9 $PPID; sleep 5"}}); err == nil {
		t.Fatalf("Run that kills the supervisor returned no error")
	}
	res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"cat", "f.txt"}})
	if err != nil || string(res.Stdout) != "synced" {
		t.Fatalf("Run after the supervisor died = %+v, %v, want the re-synced file", res, err)
	}
	if s.ContainerID() == first {
		t.Errorf("container %s was not replaced", first[:12])
	}
	cli := sandboxtest.RequireDocker(t)
	if _, err := cli.ContainerInspect(t.Context(), first); err == nil {
		t.Errorf("the dead container %.12s was not removed", first)
	}
}

// TestSyncManyFiles crosses the manifest batch size, and checks that a
// command cannot open the supervisor's protocol stream.
func TestSyncManyFiles(t *testing.T) {
	_, s := newSession(t, sandbox.Limits{Timeout: 30 * time.Second})
	files := map[string]sandbox.File{}
	for i := range 25000 {
		files[fmt.Sprintf("d%d/f%05d.txt", i%10, i)] = sandbox.File{Data: []byte(strconv.Itoa(i))}
	}
	st, err := s.Sync(t.Context(), &sandbox.Snapshot{Files: files})
	if err != nil || st.Written != 25000 {
		t.Fatalf("Sync of 25000 files = %+v, %v", st, err)
	}
	res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", "find . -type f | wc -l; cat d7/f12347.txt; echo; echo x 2>/dev/null > /proc/$PPID/fd/1 && echo WROTE; cat /proc/$PPID/environ >/dev/null 2>&1 && echo READ"}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := string(res.Stdout); got != "25000\n12347\n" {
		t.Errorf("after Sync: %q (stderr %q), want 25000 files and no write to the supervisor's stdout", got, res.Stderr)
	}
}

// TestCloseAbortsRun closes the session from another goroutine while a
// command runs.
func TestCloseAbortsRun(t *testing.T) {
	_, s := newSession(t, sandbox.Limits{Timeout: 60 * time.Second})
	time.AfterFunc(500*time.Millisecond, func() { s.Close() })
	res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sleep", "60"}})
	if !errors.Is(err, sandbox.ErrClosed) {
		t.Fatalf("Run during Close = %+v, %v, want ErrClosed", res, err)
	}
}

func TestChanges(t *testing.T) {
	_, s := newSession(t, sandbox.Limits{Timeout: 10 * time.Second})
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"keep.py":    {Data: []byte("same")},
		"edit.py":    {Data: []byte("old")},
		"gone.py":    {Data: []byte("x")},
		"touched.py": {Data: []byte("t")},
	}}
	if _, err := s.Sync(t.Context(), snap); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	script := "echo new > edit.py; rm gone.py; echo t > t2 && cat t2 | tr -d '\\n' > touched.py && rm t2; mkdir -p pkg __pycache__; echo c > pkg/new.py; echo b > __pycache__/x.pyc"
	if res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", script}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	got, err := s.Changes(t.Context(), "__pycache__")
	if err != nil {
		t.Fatalf("Changes: %v", err)
	}
	want := &docker.Changes{Modified: []string{"edit.py"}, Created: []string{"pkg/new.py"}, Deleted: []string{"gone.py"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Changes = %+v, want %+v", got, want)
	}
	if data, err := s.ReadFile(t.Context(), "edit.py"); err != nil || string(data) != "new\n" {
		t.Errorf("ReadFile(edit.py) = %q, %v", data, err)
	}
}

// TestConformance runs the contract every backend keeps (sandboxtest).
func TestConformance(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, testImage)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	sandboxtest.Conformance(t, b, sandbox.Spec{Image: testImage}, redact.IsSecretPath)
}
