package agent

import (
	"errors"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/edit"
)

// TestApplyEditsUsesTheConfiguration: [policy] allow_protected opens the
// files it names and no others, never .fixpoint.toml, and the Dockerfile
// [sandbox] dockerfile names is protected like sandbox.dockerfile.
func TestApplyEditsUsesTheConfiguration(t *testing.T) {
	cfg := testConfig(t)
	cfg.Policy.AllowProtected = []string{".vscode/launch.json", ".fixpoint.toml", ".github/workflows/*.yml"}
	cfg.Sandbox.Dockerfile = "build/sandbox.Dockerfile"
	snap := goBugSnapshot(t)
	tests := []struct {
		path string
		want error // nil = applied
	}{
		{".vscode/launch.json", nil},
		{".github/workflows/ci.yml", nil},
		{".vscode/tasks.json", edit.ErrProtected},
		{".fixpoint.toml", edit.ErrProtected},
		{"build/sandbox.Dockerfile", edit.ErrProtected},
		{"sandbox.dockerfile", edit.ErrProtected},
		{".env", edit.ErrSecret},
		{"stats/extra.go", nil},
	}
	for _, tt := range tests {
		got, err := applyEdits(cfg, snap, []edit.Block{{Index: 1, Path: tt.path, Replace: "x\n"}})
		switch {
		case tt.want == nil && (err != nil || string(got[tt.path]) != "x\n"):
			t.Errorf("applyEdits(%s) = %v, %v; want it applied", tt.path, got, err)
		case tt.want != nil && !errors.Is(err, tt.want):
			t.Errorf("applyEdits(%s) = %v; want %v", tt.path, err, tt.want)
		}
	}
}
