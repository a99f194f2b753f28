package supclient_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/supclient"
)

// startSupervisor runs the embedded supervisor as a local process over
// pipes (no container): the protocol is the same whatever carries it.
func startSupervisor(t *testing.T) (*supclient.Conn, string) {
	t.Helper()
	bin, ok := docker.SupervisorBinary(runtime.GOARCH)
	if !ok {
		t.Fatalf("no supervisor build for %s: fixpoint has none for this architecture", runtime.GOARCH)
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "supervisor")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-workspace", ws)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := supclient.New(out, in, func() { in.Close() })
	t.Cleanup(func() {
		c.Close()
		cmd.Wait()
	})
	if err := c.AwaitReady(t.Context(), 30*time.Second); err != nil {
		t.Fatalf("AwaitReady: %v", err)
	}
	return c, ws
}

// TestConnOverPipes: Sync sends only what changed and deletes what went,
// Run reports exit codes, streams and timeouts, ReadFile and Changes see
// what a command wrote.
func TestConnOverPipes(t *testing.T) {
	c, ws := startSupervisor(t)
	ctx := t.Context()
	var h supclient.Hashes
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{"a.txt": {Data: []byte("A")}, "d/b.txt": {Data: []byte("B")}}}
	st, err := c.Sync(ctx, snap, &h)
	if err != nil || st.Written != 2 {
		t.Fatalf("first Sync = %+v, %v, want 2 written", st, err)
	}
	snap2 := &sandbox.Snapshot{Files: map[string]sandbox.File{"a.txt": {Data: []byte("A")}, "c.txt": {Data: []byte("C")}}}
	st, err = c.Sync(ctx, snap2, &h)
	if err != nil || st.Written != 1 || st.Deleted != 1 {
		t.Fatalf("second Sync = %+v, %v, want 1 written and 1 deleted", st, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "d/b.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("d/b.txt after the second Sync: %v, want gone", err)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=/tmp"}
	lim := supclient.Defaults(sandbox.Limits{Timeout: 30 * time.Second})
	res, err := c.Run(ctx, sandbox.Command{Args: []string{"sh", "-c", "cat a.txt c.txt; echo err >&2; echo made > new.txt; exit 3"}}, env, lim)
	if err != nil || res.ExitCode != 3 || string(res.Stdout) != "AC" || string(res.Stderr) != "err\n" {
		t.Fatalf("Run = %+v, %v; want exit 3, stdout AC, stderr err", res, err)
	}
	if data, err := c.ReadFile(ctx, "new.txt"); err != nil || string(data) != "made\n" {
		t.Errorf("ReadFile(new.txt) = %q, %v", data, err)
	}
	if _, err := c.ReadFile(ctx, "missing.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing.txt) = %v, want fs.ErrNotExist", err)
	}
	ch, err := c.Changes(ctx)
	if err != nil || strings.Join(ch.Created, ",") != "new.txt" {
		t.Errorf("Changes = %+v, %v; want new.txt created", ch, err)
	}
	short := supclient.Merge(sandbox.Limits{Timeout: 200 * time.Millisecond}, lim)
	res, err = c.Run(ctx, sandbox.Command{Args: []string{"sleep", "30"}}, env, short)
	if err != nil || !res.TimedOut || res.ExitCode != 124 {
		t.Errorf("Run(sleep 30) with a 200ms timeout = %+v, %v; want 124", res, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	started := cancelOnWrite(cancel) // cancel once the command runs
	if _, err := c.Run(cctx, sandbox.Command{Args: []string{"sh", "-c", "echo started; exec sleep 30"}, Stdout: started}, env, lim); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Run = %v, want context.Canceled", err)
	}
	if c.Dead() {
		t.Fatal("the stream died on a cancelled command")
	}
	res, err = c.Run(ctx, sandbox.Command{Args: []string{"true"}}, env, lim)
	if err != nil || res.ExitCode != 0 {
		t.Errorf("Run after cancel = %+v, %v", res, err)
	}
	c.Close()
	if _, err := c.Run(ctx, sandbox.Command{Args: []string{"true"}}, env, lim); !errors.Is(err, supclient.ErrStream) || !c.Dead() {
		t.Errorf("Run after Close = %v, want ErrStream and a dead Conn", err)
	}
}

type cancelOnWrite context.CancelFunc

func (c cancelOnWrite) Write(p []byte) (int, error) {
	c()
	return len(p), nil
}
