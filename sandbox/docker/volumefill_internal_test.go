package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// Two backends (as two fixpoint processes) that need the same new cache
// volume at once: one fills it, the other waits and finds it complete.
// Without the volume lock the second extracted the same tree over the
// first ("mkdir …: file exists") or trusted a half-filled volume.
func TestEnsureVolumeConcurrentFill(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	const image = "fixpoint-sandbox-python"
	sandboxtest.RequireImage(t, cli, image)
	name := fmt.Sprintf("fixpoint-test-fill-%d", time.Now().UnixNano())
	t.Cleanup(func() { cli.VolumeRemove(context.Background(), name, true) }) // t.Context() is cancelled before cleanups run
	locks := t.TempDir()

	tree := func() (io.Reader, error) {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for i := range 50 {
			dir := fmt.Sprintf("cache/download/example.com/m%d/@v/", i)
			tw.WriteHeader(&tar.Header{Name: dir, Typeflag: tar.TypeDir, Mode: 0o755})
			tw.WriteHeader(&tar.Header{Name: dir + "list", Typeflag: tar.TypeReg, Mode: 0o644, Size: 7})
			tw.Write([]byte("v1.0.0\n"))
		}
		return &buf, tw.Close()
	}
	var fills sync.Map
	var wg sync.WaitGroup
	errs := make([]error, 2)
	done := make([]time.Time, 2)
	for i := range 2 {
		b, err := New(t.Context(), &Options{Client: cli})
		if err != nil {
			t.Fatal(err)
		}
		b.volumeLocks = locks
		defer b.Close()
		wg.Go(func() {
			errs[i] = b.ensureVolume(t.Context(), image, name, "test", "fill", func() (io.Reader, error) {
				fills.Store(i, true)
				r, err := tree()
				return &slowReader{r: r}, err
			})
			done[i] = time.Now()
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("backend %d: %v", i, err)
		}
	}
	n := 0
	fills.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Fatalf("the volume was filled %d times, want once (the second backend must find it filled)", n)
	}
	filler := 0
	if _, ok := fills.Load(1); ok {
		filler = 1
	}
	if other := 1 - filler; done[other].Before(done[filler]) {
		t.Errorf("the backend that did not fill returned %v before the filler finished: it trusted a volume still being filled", done[filler].Sub(done[other]))
	}
}

// slowReader delays its first read, as a large module cache does, so that
// a fill is still going on when the other backend looks at the volume.
type slowReader struct {
	r       io.Reader
	started bool
}

func (s *slowReader) Read(p []byte) (int, error) {
	if !s.started {
		s.started = true
		time.Sleep(500 * time.Millisecond)
	}
	return s.r.Read(p)
}
