package agent

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// recordingInstaller records the install steps the setup phase asks for
// and refuses them (the test needs only what was asked).
type recordingInstaller struct {
	sandbox.Backend
	specs []sandbox.InstallSpec
}

var errRecorded = errors.New("install recorded, not run")

func (r *recordingInstaller) Install(_ context.Context, s sandbox.InstallSpec) (*sandbox.InstallResult, error) {
	r.specs = append(r.specs, s)
	return nil, errRecorded
}

// TestSetupAfterModelEditRunsWithoutScripts: the setup phase that re-runs
// after the model changed a manifest installs with the package manager's
// scripts off, so a dependency the model added cannot run its install
// script with the setup phase's network; the user's own first setup keeps
// them.
func TestSetupAfterModelEditRunsWithoutScripts(t *testing.T) {
	snap := &sandbox.Snapshot{Root: t.TempDir(), Files: map[string]sandbox.File{
		"package.json":      {Data: []byte(`{"name":"p","devDependencies":{"jest":"29"},"scripts":{"test":"jest"}}`)},
		"package-lock.json": {Data: []byte(`{"lockfileVersion":3}`)},
		"index.test.js":     {Data: []byte("test('x', () => {})\n")},
	}}
	for _, noScripts := range []bool{false, true} {
		rec := &recordingInstaller{Backend: testBackend(t)}
		e := New(testConfig(t), &Options{Backend: rec})
		_, _, err := e.prepare(t.Context(), e.newProject(snap), func(string) {}, noScripts)
		if !errors.Is(err, errRecorded) || len(rec.specs) != 1 {
			t.Fatalf("noScripts=%v: prepare = %v after %d install steps; want the recorded step", noScripts, err, len(rec.specs))
		}
		off := slices.Contains(rec.specs[0].Env, "npm_config_ignore_scripts=true")
		if off != noScripts {
			t.Errorf("noScripts=%v: install env %q: scripts turned off = %v", noScripts, rec.specs[0].Env, off)
		}
	}
}
