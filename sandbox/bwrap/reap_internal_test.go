package bwrap

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestReapDisksOnlyDeadOwners: reapDisks removes the capped directory of
// a fixpoint process that has died, and never one whose owner is alive
// (another fixpoint's running session: its workspace tmpfs) or this
// process's own (held-out mutant sandbox-bwrap-reap-live-disk).
func TestReapDisksOnlyDeadOwners(t *testing.T) {
	tmp := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPid := dead.ProcessState.Pid()
	dir := func(pid string) string {
		p := filepath.Join(tmp, diskPrefix+pid+"-123456")
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	live := dir(strconv.Itoa(os.Getppid())) // the go command that runs this test
	own := dir(strconv.Itoa(os.Getpid()))
	notPid := dir("x1")
	gone := dir(strconv.Itoa(deadPid))
	other := filepath.Join(tmp, "fixpoint-bwrapdiskette")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}

	reapDisks(tmp, &Backend{opts: Options{Logger: slog.New(slog.DiscardHandler)}})

	for what, p := range map[string]string{"a live process's": live, "this process's": own, "a non-pid": notPid, "an unrelated": other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s capped directory %s was removed: %v", what, filepath.Base(p), err)
		}
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the dead process %d's capped directory was not reaped: %v", deadPid, err)
	}
}
