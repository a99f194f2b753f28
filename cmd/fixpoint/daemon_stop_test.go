package main

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/internal/warmd"
)

// TestDaemonStopOwnOnly: `fixpoint daemon --stop` stops the daemon of
// this executable and environment and leaves another one (another
// executable or environment, same user) running; --stop --all stops it.
func TestDaemonStopOwnOnly(t *testing.T) {
	dir := t.TempDir()
	if len(dir) > 60 {
		dir, _ = os.MkdirTemp("", "fpd")
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	t.Setenv("XDG_CACHE_HOME", dir) // daemonDir = dir/fixpoint/daemon; the environment is part of the socket name
	ddir := daemonDir()
	if err := warmd.PrivateDir(ddir); err != nil {
		t.Fatal(err)
	}
	own, err := daemonSockets(ddir, false)
	if err != nil || len(own) != 1 {
		t.Fatalf("daemonSockets = %q, %v", own, err)
	}
	other := warmd.SocketPath(ddir, "/another/fixpoint", append(os.Environ(), "FIXPOINT_SANDBOX=bwrap"))
	if other == own[0] {
		t.Fatal("another executable and environment got the same socket")
	}
	done := map[string]chan error{}
	for _, sock := range []string{own[0], other} {
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		srv := &warmd.Server{Idle: time.Hour}
		ch := make(chan error, 1)
		done[sock] = ch
		go func() { ch <- srv.Serve(t.Context(), ln) }()
	}
	c := newLoopCLI(t)
	if code, out, stderr := c.run(t.Context(), "daemon", "--stop"); code != exitOK || out != "stopped 1 fixpoint daemon(s)\n" {
		t.Fatalf("daemon --stop = %d %q %q", code, out, stderr)
	}
	if err := <-done[own[0]]; err != nil && !errors.Is(err, net.ErrClosed) {
		t.Errorf("own daemon ended with %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	conn, err := warmd.Dial(ctx, other)
	if err != nil {
		t.Fatalf("daemon --stop stopped another executable's daemon: %v", err)
	}
	if _, err := warmd.Do(ctx, conn, warmd.Request{Op: warmd.OpPing}, nil); err != nil {
		t.Fatalf("the other daemon does not answer a ping after --stop: %v", err)
	}
	conn.Close()
	if code, out, _ := c.run(t.Context(), "daemon", "--stop", "--all"); code != exitOK || out != "stopped 1 fixpoint daemon(s)\n" {
		t.Fatalf("daemon --stop --all = %d %q", code, out)
	}
	<-done[other]
	if code, _, _ := c.run(t.Context(), "daemon", "--all"); code != exitUsage {
		t.Errorf("daemon --all without --stop = %d, want 2", code)
	}
}
