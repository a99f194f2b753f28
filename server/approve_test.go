package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang"
)

// TestApproveSetupChange: the engine's Approve hook asks the editor with
// the honest question (the setup phase has network), Allow allows, and a
// Deny or a dismissed question refuses with a message naming the file
// and the change.
func TestApproveSetupChange(t *testing.T) {
	a := agent.Approval{Setup: []lang.SetupChange{{File: "package.json", What: `sets the postinstall script, which the install step runs: "node x.js"`}}}
	tests := []struct {
		name   string
		answer string
		want   bool
	}{
		{name: "allow", answer: `{"title":"Allow"}`, want: true},
		{name: "deny", answer: `{"title":"Deny"}`},
		{name: "dismissed", answer: `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hooks := make(chan Hooks, 4)
			eng := verifiedEngine()
			e := newFakeEditor(t, editorOptions{files: map[string]string{"go.mod": "module w\n"}, server: &Options{
				NewEngine: func(ctx context.Context, cfg *config.Config, root string, h Hooks) (Engine, error) {
					hooks <- h
					return eng, nil
				},
			}})
			e.answer = json.RawMessage(tt.answer)
			e.initialize(vscodeCaps)
			e.wait("workspace/configuration", "")
			e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{}})
			h := <-hooks
			ok, err := h.Approve(t.Context(), a)
			if err != nil || ok != tt.want {
				t.Fatalf("Approve = %v, %v, want %v", ok, err, tt.want)
			}
			q := string(e.wait("window/showMessageRequest", "postinstall"))
			for _, s := range []string{"package.json: sets the postinstall script", "network access", "Deny", "Allow"} {
				if !strings.Contains(q, s) {
					t.Errorf("question %s lacks %q", q, s)
				}
			}
			if strings.Contains(q, "no network") || strings.Index(q, "Deny") > strings.Index(q, "Allow") {
				t.Errorf("question %s claims no network or offers Allow first", q)
			}
			if !tt.want {
				e.wait("window/logMessage", "refused the model's edit")
			}
		})
	}
}
