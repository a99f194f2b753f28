package main

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/docker/internal/wire"
)

func dumpable(t *testing.T) bool {
	t.Helper()
	const prGetDumpable = 3
	r, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetDumpable, 0, 0)
	if errno != 0 {
		t.Fatalf("prctl(PR_GET_DUMPABLE): %v", errno)
	}
	return r == 1
}

// TestStartTracedStaysNotDumpable: whether or not startTraced makes the
// supervisor dumpable for the fork (gVisor), it is not dumpable once the
// command can run, and the command runs under its limits.
func TestStartTracedStaysNotDumpable(t *testing.T) {
	defer setDumpable(dumpable(t))
	for _, forkDumpable := range []bool{false, true} {
		setDumpable(false)
		cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "test \"$(ulimit -n)\" = 77"},
			SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Ptrace: true}}
		early, err := startTraced(cmd, wire.RunRequest{Args: cmd.Args, NoFile: 77}, forkDumpable)
		if err != nil || early != nil {
			t.Fatalf("startTraced(dumpable=%v) = %v, %v", forkDumpable, early, err)
		}
		if dumpable(t) {
			t.Errorf("startTraced(dumpable=%v) left the supervisor dumpable", forkDumpable)
		}
		ws, _, err := wait(cmd.Process.Pid)
		if err != nil || !ws.Exited() || ws.ExitStatus() != 0 {
			t.Errorf("startTraced(dumpable=%v): command status %v, %v, want exit 0 (nofile 77)", forkDumpable, ws, err)
		}
		cmd.Process.Release()
	}
}
