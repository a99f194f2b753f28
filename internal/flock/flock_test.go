package flock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Holders of one path never overlap, a waiter is told once, another path
// is free, and a cancelled wait returns the context's error.
func TestLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "a.lock")
	var inside, overlaps, told atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			unlock, err := Lock(t.Context(), path, func() { told.Add(1) })
			if err != nil {
				t.Error(err)
				return
			}
			if inside.Add(1) > 1 {
				overlaps.Add(1)
			}
			time.Sleep(20 * time.Millisecond)
			inside.Add(-1)
			unlock()
		})
	}
	wg.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d holders overlapped on one lock", n)
	}
	if told.Load() == 0 {
		t.Errorf("no waiter was told it waits")
	}

	unlock, err := Lock(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	other, err := Lock(t.Context(), filepath.Join(dir, "b.lock"), nil)
	if err != nil {
		t.Fatalf("another path's lock: %v", err)
	}
	other()
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Lock of a held path = %v, want the context's deadline error", err)
	}
}

// UserDir is one directory for every HOME of this user, open to nobody
// else.
func TestUserDir(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", "")
	a := UserDir("test-locks")
	t.Setenv("HOME", t.TempDir())
	if b := UserDir("test-locks"); a != b {
		t.Errorf("UserDir with another HOME = %s, want %s", b, a)
	}
	st, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("UserDir %s: mode %v; want 0700", a, st.Mode().Perm())
	}
}
