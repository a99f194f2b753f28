package sandbox_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestSandboxIsOneLayer: no sandbox/* package depends, even through
// another, on the layers above it (agent, the language registry, which
// imports every language, each of which imports sandbox) or on internal/
// (the top floor: benches, the warm daemon). What a sandbox package needs
// from above is passed down: the detected language, the secret-file rule.
func TestSandboxIsOneLayer(t *testing.T) {
	goCmd := sandboxtest.RequireCommand(t, "go")
	out, err := exec.Command(goCmd, "list", "-deps", "-f", `{{.ImportPath}}`, "github.com/fixpoint-dev/fixpoint/sandbox/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/fixpoint-dev/fixpoint/"
	for _, p := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(p, mod)
		if !ok {
			continue
		}
		for _, above := range []string{"agent", "internal", "lang/registry", "server", "cmd"} {
			if rel == above || strings.HasPrefix(rel, above+"/") {
				t.Errorf("sandbox/... depends on %s", p)
			}
		}
	}
}
