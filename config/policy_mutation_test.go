package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyActionsExact: the loader accepts a rule's action only as
// block, warn or off, in lower case: "Block" would otherwise validate and
// then never block (agent/policy compares exactly).
func TestPolicyActionsExact(t *testing.T) {
	for _, tt := range []struct {
		action string
		ok     bool
	}{{"block", true}, {"warn", true}, {"off", true}, {"Block", false}, {"WARN", false}, {"block ", false}, {"", false}, {"deny", false}} {
		user := filepath.Join(t.TempDir(), "config.toml")
		text := "[policy.rules]\n\"python.subprocess\" = \"" + tt.action + "\"\n"
		if err := os.WriteFile(user, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(LoadOptions{UserFile: user, Getenv: env(nil)})
		switch {
		case tt.ok && (err != nil || cfg.Policy.Rules["python.subprocess"] != tt.action):
			t.Errorf("Load(action %q) = %v, want it loaded as written", tt.action, err)
		case !tt.ok && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "policy.rules.python.subprocess")):
			t.Errorf("Load(action %q) = %v, want ErrInvalid naming policy.rules.python.subprocess", tt.action, err)
		}
	}
}
