package setup_test

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/node"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

// runtimeProjects are node projects whose declared range the host's Node
// satisfies (>=18, and none at all): a native run uses the host's Node,
// and so must every backend.
var runtimeProjects = []struct{ name, pkg string }{
	{"engines >=18", `{"name":"p","version":"1.0.0","engines":{"node":">=18"}}`},
	{"no engines", `{"name":"p","version":"1.0.0"}`},
}

// hostNode is the host's Node version, which these projects must get.
func hostNode(t *testing.T) lang.Version {
	t.Helper()
	sandboxtest.RequireCommand(t, "node")
	v, ok := setup.HostRuntime(t.Context(), node.Language{})
	if !ok {
		t.Fatal("node is on PATH but its version cannot be read")
	}
	if v.Compare(lang.Version{Major: 18}) < 0 {
		t.Fatalf("the host's node %s does not satisfy >=18; these cases need one that does", v)
	}
	return v
}

// sessionNode is `node --version` in a session of spec.
func sessionNode(t *testing.T, b sandbox.Backend, spec sandbox.Spec) string {
	t.Helper()
	sess, err := b.Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer sess.Close()
	res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"node", "--version"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("node --version: %v, exit %d, stderr %q", err, res.ExitCode, res.Stderr)
	}
	return strings.TrimPrefix(strings.TrimSpace(string(res.Stdout)), "v")
}

// TestRuntimeChoiceDocker: the docker backend runs the host's Node for a
// project that allows it (a per-version image of the host's release),
// as bwrap and a native run do; before, it kept the image's Node 18 for
// `engines >=18` and for a project without engines.
func TestRuntimeChoiceDocker(t *testing.T) {
	host := hostNode(t)
	e := newEnv(t, "fixpoint-sandbox-node")
	for _, tt := range runtimeProjects {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapOf(map[string]string{"package.json": tt.pkg})
			spec := e.spec("fixpoint-sandbox-node")
			if err := e.preparer(nil).Prepare(t.Context(), &spec, snap, setup.NewPlan(registry.Detect(snap), snap, "off")); err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if got := sessionNode(t, e.b, spec); got != host.String() {
				t.Errorf("docker runs node %s (image %s), the host and a native run %s", got, spec.Image, host)
			}
		})
	}
}

// TestRuntimeChoiceBwrap: bwrap runs the host's Node for the same
// projects (the same choice as docker's, TestRuntimeChoiceDocker).
func TestRuntimeChoiceBwrap(t *testing.T) {
	host := hostNode(t)
	sandboxtest.RequireCommand(t, "bwrap")
	b, err := bwrap.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range runtimeProjects {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapOf(map[string]string{"package.json": tt.pkg})
			spec := sandbox.Spec{}
			p := setup.New(b, &setup.Options{LockDir: t.TempDir(), FailureDir: t.TempDir()})
			if err := p.Prepare(t.Context(), &spec, snap, setup.NewPlan(registry.Detect(snap), snap, "off")); err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if got := sessionNode(t, b, spec); got != host.String() {
				t.Errorf("bwrap runs node %s, the host and a native run %s", got, host)
			}
		})
	}
}
