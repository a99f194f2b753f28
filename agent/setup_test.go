package agent

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

func TestResetupRefused(t *testing.T) {
	snap := func(files map[string]string) *sandbox.Snapshot {
		s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
		for k, v := range files {
			s.Files[k] = sandbox.File{Data: []byte(v)}
		}
		return s
	}
	node := snap(map[string]string{"package.json": `{"dependencies":{"a":"1"}}`})
	py := snap(map[string]string{"requirements.txt": "a\n", "setup.py": "", "x.py": ""})
	tests := []struct {
		name    string
		snap    *sandbox.Snapshot
		changed []string
		want    string // substring of the reason; "" = allowed
	}{
		{"package.json edit re-runs without scripts", node, []string{"package.json"}, ""},
		{"devcontainer edit", node, []string{"package.json", ".devcontainer/devcontainer.json"}, "declares the setup step"},
		{"setup.py edit", py, []string{"setup.py"}, "would run it"},
		{"requirements edit", py, []string{"requirements.txt"}, "would run it"},
		{"code edit only", py, []string{"x.py"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resetupRefused(setup.NewPlan(registry.Detect(tt.snap), tt.snap, ""), tt.changed)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("resetupRefused(%v) = %q, want %q", tt.changed, got, tt.want)
			}
		})
	}
	st := setup.NewPlan(registry.Detect(node), node, "").Step
	if !strings.Contains(strings.Join(st.NoScripts, " "), "NPM_CONFIG_IGNORE_SCRIPTS=true") {
		t.Errorf("node step has no way to turn scripts off: %v", st.NoScripts)
	}
}
