package agent_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

func TestLockProject(t *testing.T) {
	data, root := t.TempDir(), t.TempDir()
	unlock, err := agent.LockProject(data, root)
	if err != nil {
		t.Fatalf("first lock: %v", err)
	}
	// A second open of the lock file conflicts even in this process.
	_, err = agent.LockProject(data, root)
	var le *agent.LockedError
	if !errors.As(err, &le) || !errors.Is(err, agent.ErrProjectLocked) {
		t.Fatalf("second lock: %v, want a *LockedError", err)
	}
	if le.PID != os.Getpid() || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second lock: %v, want it to name pid %d", err, os.Getpid())
	}
	// Another project is not affected.
	u2, err := agent.LockProject(data, t.TempDir())
	if err != nil {
		t.Fatalf("other project: %v", err)
	}
	u2()
	unlock()
	unlock3, err := agent.LockProject(data, root)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock3()
}

// TestLockProjectOtherProcess holds the lock from a child process (flock
// via util-linux's flock(1) on the same file).
func TestLockProjectOtherProcess(t *testing.T) {
	flock := sandboxtest.RequireCommand(t, "flock")
	data, root := t.TempDir(), t.TempDir()
	unlock, err := agent.LockProject(data, root)
	if err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(data, "locks", "*.lock"))
	if len(matches) != 1 {
		t.Fatalf("lock files: %v, want one", matches)
	}
	if out, err := exec.Command(flock, "-n", matches[0], "true").CombinedOutput(); err == nil {
		t.Errorf("flock(1) took the lock we hold (%s)", out)
	}
	unlock()
	if out, err := exec.Command(flock, "-n", matches[0], "true").CombinedOutput(); err != nil {
		t.Errorf("flock(1) after unlock: %v %s", err, out)
	}
}

func TestLockProjectUnusableDataDir(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	_, err := agent.LockProject(f, t.TempDir())
	if err == nil || errors.Is(err, agent.ErrProjectLocked) {
		t.Errorf("LockProject under a file: %v, want a plain error (the run degrades, it is not refused)", err)
	}
}
