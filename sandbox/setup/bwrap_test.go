package setup_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

// TestBwrapInstallThenOffline: with bwrap, the install step runs with the
// host's network and tools, and sessions (no network) read its caches
// read-only.
func TestBwrapInstallThenOffline(t *testing.T) {
	for _, c := range []string{"bwrap", "node", "npm"} {
		sandboxtest.RequireCommand(t, c)
	}
	b, err := bwrap.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := snapOf(map[string]string{
		"package.json": `{"name":"p","version":"1.0.0","dependencies":{"ms":"2.1.3"}}`,
		"index.js":     `if (require("ms")("2 days") !== 172800000) process.exit(1)`,
	})
	project := "b0" + strings.Repeat("1", 14)
	spec := sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: project}}
	var lines []string
	p := setup.New(b, &setup.Options{Progress: func(l string) { lines = append(lines, l) }})
	if err := p.Prepare(t.Context(), &spec, snap, setup.NewPlan(snap, "")); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if len(spec.Caches) != 1 || spec.Caches[0].Target != "/workspace/node_modules" {
		t.Fatalf("caches = %+v", spec.Caches)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(filepath.Dir(spec.Caches[0].Source))) })
	sess, err := b.Start(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.Sync(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", "node index.js && ! touch node_modules/x 2>/dev/null"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("offline run: %v exit %d %s%s", err, res.ExitCode, res.Stdout, res.Stderr)
	}
	spec2 := sandbox.Spec{Labels: spec.Labels}
	if err := p.Prepare(t.Context(), &spec2, snap, setup.NewPlan(snap, "")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "cached") {
		t.Errorf("second Prepare did not reuse the cache: %q", lines)
	}
}
