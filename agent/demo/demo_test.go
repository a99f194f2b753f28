package demo

import (
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/config"
)

// TestStart: the demo server answers the go-bug prompts with the plan and
// the fix through the real client, and every other prompt with CannotHelp.
func TestStart(t *testing.T) {
	cfg, err := config.Load(config.LoadOptions{UserFile: "-", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	stop, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c := llm.New(cfg.Model, nil)
	tests := []struct{ name, prompt, want string }{
		{"code", "## File: stats/stats.go\n" + GoBugMarker + " {\n\n" + MarkCode + "\n", GoBugFix},
		{"other project", "## File: x.py\ndef f(): pass\n\n" + MarkCode + "\n", CannotHelp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Chat(t.Context(), llm.Request{Messages: []llm.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: tt.prompt}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != tt.want {
				t.Errorf("reply = %q, want %q", resp.Content, tt.want)
			}
		})
	}
}
