package parity

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestParityShapes runs `fixpoint test` with a cold setup cache on every
// shape fixture (Fixtures: the shapes of issue 21 the realworld corpus
// lacks), on docker and on bwrap, and compares the counts with the
// native run's.
func TestParityShapes(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	for _, img := range []string{"fixpoint-sandbox-python", "fixpoint-sandbox-go", "fixpoint-sandbox-node", "fixpoint-sandbox-rust"} {
		sandboxtest.RequireImage(t, cli, img)
	}
	sandboxtest.RequireCommand(t, "bwrap")
	sandboxtest.RequireCommand(t, "git")
	// The same directories every run: a project's identity is its path,
	// so bwrap's per-project Go standard library build (minutes on two
	// busy cores) is made once per machine, not per run. Unpack copies a
	// fresh fixture there each time; the dependency setup is cold on
	// docker (removeCaches) and keyed by the lockfiles on bwrap.
	work := filepath.Join(os.TempDir(), "fixpoint-parity-shapes")
	start := time.Now()
	for _, p := range Fixtures("testdata") {
		t.Run(p.Name, func(t *testing.T) {
			began := time.Now()
			rows, err := Check(t.Context(), []Project{p}, &Options{Backends: []string{config.BackendDocker, config.BackendBwrap}, WorkDir: work, ColdOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			r := rows[0]
			t.Logf("%s (%s): native %s, docker %s, bwrap %s, in %s", p.Name, p.Shape, p.Native, runCell(r.Docker), runCell(r.Bwrap), time.Since(began).Round(time.Second))
			if !r.Match() {
				t.Errorf("docker: fixpoint test reports %s, native %s", runCell(r.Docker), p.Native)
			}
			if !r.BwrapMatch() {
				t.Errorf("bwrap: fixpoint test reports %s, native %s", runCell(r.Bwrap), p.Native)
			}
		})
	}
	t.Logf("all shapes on docker and bwrap in %s", time.Since(start).Round(time.Second))
}
