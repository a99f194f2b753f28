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

// Two open files of one path exclude each other under TryExclusive, shared
// holders coexist and keep an exclusive taker out, and Unlock frees it.
func TestTryExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b, c := open(), open(), open()
	if err := TryExclusive(a); err != nil {
		t.Fatalf("TryExclusive(free) = %v, want nil", err)
	}
	if err := TryExclusive(b); !errors.Is(err, ErrLocked) {
		t.Fatalf("TryExclusive(held) = %v, want ErrLocked", err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := Shared(a); err != nil {
		t.Fatal(err)
	}
	if err := Shared(b); err != nil {
		t.Fatalf("second Shared = %v, want nil", err)
	}
	if err := TryExclusive(c); !errors.Is(err, ErrLocked) {
		t.Fatalf("TryExclusive under shared holders = %v, want ErrLocked", err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := Unlock(b); err != nil {
		t.Fatal(err)
	}
	if err := TryExclusive(c); err != nil {
		t.Fatalf("TryExclusive after Unlock = %v, want nil", err)
	}
}
