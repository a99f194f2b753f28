package docker

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Two holders of the same volume's lock never overlap; a cancelled wait
// returns an error naming the volume; another volume's lock is free.
func TestLockVolume(t *testing.T) {
	dir := t.TempDir()
	var inside, overlaps atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			unlock, err := lockVolume(t.Context(), dir, "fixpoint-gomod-x")
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
		t.Errorf("%d holders overlapped on one volume's lock", n)
	}

	unlock, err := lockVolume(t.Context(), dir, "fixpoint-gomod-x")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	other, err := lockVolume(t.Context(), dir, "fixpoint-gomod-y")
	if err != nil {
		t.Fatalf("another volume's lock: %v", err)
	}
	other()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := lockVolume(ctx, dir, "fixpoint-gomod-x"); err == nil {
		t.Fatal("a second lock of a held volume succeeded")
	}
}
