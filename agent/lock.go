package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fixpoint-dev/fixpoint/flock"
	"github.com/fixpoint-dev/fixpoint/memory"
)

// ErrProjectLocked is wrapped by LockProject's error when another run
// holds the project.
var ErrProjectLocked = errors.New("another fixpoint run holds this project")

// LockedError says which process holds a project lock.
type LockedError struct {
	Root string // the project root
	Path string // the lock file
	PID  int    // the holder, 0 when unknown
}

func (e *LockedError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("another fixpoint run (%s) is working on %s: wait for it to finish or stop it (lock %s)", who, e.Root, e.Path)
}

// Unwrap makes errors.Is(err, ErrProjectLocked) true.
func (e *LockedError) Unwrap() error { return ErrProjectLocked }

// LockProject takes the per-project run lock: an flock on
// <dataDir>/locks/<memory.ProjectID(root)>.lock, without waiting. When
// another process (or another open of the file) holds it, the error is a
// *LockedError naming the holder's pid. The lock is released by unlock or
// when the process exits, however it exits.
func LockProject(dataDir, root string) (unlock func(), err error) {
	if dataDir == "" {
		return nil, errors.New("lock project: no data dir")
	}
	dir := filepath.Join(dataDir, "locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("lock project: %w", err)
	}
	p := filepath.Join(dir, memory.ProjectID(root)+".lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock project: %w", err)
	}
	if err := flock.TryExclusive(f); err != nil {
		defer f.Close()
		if errors.Is(err, flock.ErrLocked) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
			return nil, &LockedError{Root: root, Path: p, PID: pid}
		}
		return nil, fmt.Errorf("lock project %s: %w", p, err)
	}
	// The holder's pid, for the next run's message; best effort.
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		f.Truncate(0)
		_ = flock.Unlock(f)
		f.Close()
	}, nil
}

// lockRun takes the project lock for one Run. Only a lock held by another
// run refuses the run; when the data dir cannot hold a lock (read-only,
// full, missing) the run goes on unlocked with a warning, like the failure
// memory and the run log.
func (e *Engine) lockRun(root string) (unlock func(), err error) {
	unlock, err = LockProject(e.cfg.DataDir, root)
	if errors.Is(err, ErrProjectLocked) {
		return nil, err
	}
	if err != nil {
		fmt.Fprintf(e.warn, "fixpoint: warning: running without the project lock: %v\n", err)
		return func() {}, nil
	}
	return unlock, nil
}
